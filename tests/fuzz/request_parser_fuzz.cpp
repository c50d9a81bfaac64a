// libFuzzer target: the HTTP/1.1 request framing. The same bytes must frame the same way however
// they arrive: all at once, or in pieces of 1..8 bytes (the first input byte picks the size) —
// the same requests (method, target, fields, body) and the same final error, if any. Every error
// is one of the statuses the framing answers.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "http/request_parser.hpp"

namespace {

using rendezvous::core::RequestParser;

std::vector<std::string> Frame(std::string_view data, size_t piece) {
  RequestParser::Limits limits;
  limits.max_line_bytes = 256;
  limits.max_head_bytes = 1024;
  limits.max_fields = 16;
  limits.max_body_bytes = 2048;
  RequestParser parser(limits);
  std::string in;
  std::vector<std::string> log;
  size_t pos = 0;
  for (;;) {
    if (pos < data.size()) {
      in.append(data.substr(pos, piece));
      pos += piece;
    }
    for (int guard = 0;; ++guard) {
      if (guard > 100000) __builtin_trap();  // a parse that makes no progress
      const RequestParser::Outcome o = parser.Parse(in);
      if (o == RequestParser::Outcome::kComplete) {
        rendezvous::core::ParsedRequest r = parser.Take();
        if (r.method.empty() || r.target.empty()) __builtin_trap();
        std::string entry = r.method + " " + r.target + " 1." + std::to_string(r.minor_version) + (r.keep_alive ? " k" : " c");
        for (const auto& [name, value] : r.headers) entry += "|" + name + ":" + value;
        log.push_back(entry + "|" + r.body);
        continue;
      }
      if (o == RequestParser::Outcome::kError) {
        const int s = parser.error_status();
        if (s != 400 && s != 413 && s != 414 && s != 417 && s != 431 && s != 501 && s != 505) __builtin_trap();
        log.push_back("error " + std::to_string(s));
        return log;
      }
      break;
    }
    if (pos >= data.size()) return log;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = 1 + data[0] % 8;
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  if (Frame(bytes, bytes.size() + 1) != Frame(bytes, piece)) __builtin_trap();
  return 0;
}
