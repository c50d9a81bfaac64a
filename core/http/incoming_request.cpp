#include "http/incoming_request.hpp"

#include <array>
#include <utility>

namespace rendezvous::core {
namespace {

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i]) return false;
  }
  return true;
}

}  // namespace

std::optional<RequestTarget> SplitTarget(std::string_view target) {
  if (target.find('#') != std::string_view::npos) return std::nullopt;
  if (target.empty()) return std::nullopt;
  if (target.front() != '/') {
    size_t scheme = StartsWithIgnoreCase(target, "http://") ? 7 : StartsWithIgnoreCase(target, "https://") ? 8 : 0;
    if (scheme == 0) return std::nullopt;
    size_t path = target.find_first_of("/?", scheme);
    if (path == scheme) return std::nullopt;  // no authority
    target = path == std::string_view::npos ? std::string_view("/") : target.substr(path);
    if (target.front() == '?') return RequestTarget{"/", std::string(target.substr(1))};
  }
  size_t q = target.find('?');
  if (q == std::string_view::npos) return RequestTarget{std::string(target), ""};
  return RequestTarget{std::string(target.substr(0, q)), std::string(target.substr(q + 1))};
}

std::optional<Method> ParseMethod(std::string_view token) {
  static constexpr std::array<std::pair<std::string_view, Method>, 7> kMethods = {{
      {"GET", Method::kGet},
      {"HEAD", Method::kHead},
      {"POST", Method::kPost},
      {"PUT", Method::kPut},
      {"PATCH", Method::kPatch},
      {"DELETE", Method::kDelete},
      {"OPTIONS", Method::kOptions},
  }};
  for (const auto& [name, method] : kMethods)
    if (name == token) return method;
  return std::nullopt;
}

bool IsKnownUnservedMethod(std::string_view token) { return token == "TRACE" || token == "CONNECT"; }

void CopyHeaders(ParsedRequest& parsed, Request& request) {
  for (auto& [name, value] : parsed.headers) {
    auto [it, inserted] = request.headers.try_emplace(name, value);
    if (!inserted) it->second.append(name == "cookie" ? "; " : ", ").append(value);
  }
}

}  // namespace rendezvous::core
