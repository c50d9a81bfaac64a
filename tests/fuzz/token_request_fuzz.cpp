// libFuzzer target: the token endpoint's request parsers (form and JSON bodies, HTTP Basic).
// Input layout: first byte picks the content type, the next bytes up to a '\n' are an optional
// Authorization header value, the rest is the body.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "token_request.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static constexpr std::string_view kTypes[] = {
      "application/x-www-form-urlencoded", "application/json", "application/json; charset=utf-8",
      "application/x-www-form-urlencoded; charset=UTF-8", "text/plain", ""};
  std::string_view type = kTypes[data[0] % (sizeof kTypes / sizeof kTypes[0])];
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::optional<std::string_view> authorization;
  if (auto nl = rest.find('\n'); nl != std::string_view::npos && (data[0] & 0x80)) {
    authorization = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
  }
  auto result = rendezvous::oauth::ParseTokenRequest(type, rest, authorization);
  if (auto* error = std::get_if<rendezvous::oauth::TokenError>(&result)) {
    // Every error is one of the token endpoint's statuses, with both fields set.
    if (error->error.empty() || error->error_description.empty()) __builtin_trap();
    if (error->http_status != 400 && error->http_status != 401 && error->http_status != 413) __builtin_trap();
  }
  rendezvous::oauth::ParseBasicCredentials(rest);
  return 0;
}
