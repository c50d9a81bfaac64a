// A Pistache response header with a name chosen at run time. Pistache 0.0.5 silently drops
// headers added with Collection::addRaw(), and its Collection keeps one header per name, so every
// header we send goes through this class, one instance per name, carrying all values of that
// name (each written as its own "Name: value" line, e.g. several Set-Cookie).
// Values must not contain CR, LF or NUL (the server drops such values before they get here).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <pistache/http_header.h>

namespace rendezvous::core {

class WireHeader final : public Pistache::Http::Header::Header {
 public:
  WireHeader(std::string name, std::vector<std::string> values)
      : name_(std::move(name)), values_(std::move(values)) {
    // Distinct from Pistache's compile-time hashes of typed headers, so header_cast never
    // mistakes this for one of them.
    uint64_t h = 14695981039346656037ULL ^ 0x7264765f77697265ULL;
    for (char c : name_) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    hash_ = h;
  }

  const char* name() const override { return name_.c_str(); }
  uint64_t hash() const override { return hash_; }

  void write(std::ostream& os) const override {
    for (size_t i = 0; i < values_.size(); ++i) {
      if (i > 0) os << "\r\n" << name_ << ": ";
      os << values_[i];
    }
  }

 private:
  std::string name_;
  std::vector<std::string> values_;
  uint64_t hash_ = 0;
};

}  // namespace rendezvous::core
