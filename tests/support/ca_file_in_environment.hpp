// SSL_CERT_FILE set while it lives, restored (or unset) after: OpenSSL's default verify paths read
// it, and the servers a test starts inherit the test's environment.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace rendezvous::testing {

class CaFileInEnvironment {
 public:
  explicit CaFileInEnvironment(const std::string& path) {
    if (const char* old = std::getenv("SSL_CERT_FILE")) old_ = old;
    ::setenv("SSL_CERT_FILE", path.c_str(), 1);
  }
  ~CaFileInEnvironment() {
    if (old_) {
      ::setenv("SSL_CERT_FILE", old_->c_str(), 1);
    } else {
      ::unsetenv("SSL_CERT_FILE");
    }
  }
  CaFileInEnvironment(const CaFileInEnvironment&) = delete;
  CaFileInEnvironment& operator=(const CaFileInEnvironment&) = delete;

 private:
  std::optional<std::string> old_;
};

}  // namespace rendezvous::testing
