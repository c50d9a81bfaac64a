#include "url_policy.hpp"

#include <algorithm>

#include "calendar_options.hpp"
#include "rendezvous/address_policy.hpp"

namespace rendezvous::calendar {

bool HasControlOrSpace(const std::string& s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; });
}

std::string NonPublicLiteral(const std::string& host) { return net::ClassifyAddress(host).value_or(""); }

bool IsAllowedRedirect(const std::string& url, const std::string& base_url, const std::string& app_url) {
  if (url.empty() || url.size() > kMaxUrlLength) return false;
  const std::optional<net::Url> target = ParseFeedUrl(url);
  // "https://app.example.com//evil.example" is on the origin, but some clients read it as a
  // scheme-relative URL to another host.
  if (!target || target->path.rfind("//", 0) == 0) return false;
  for (const std::string* allowed : {&base_url, &app_url}) {
    const std::optional<net::Url> origin = ParseFeedUrl(*allowed);
    if (origin && origin->SameOrigin(*target)) return true;
  }
  return false;
}

std::optional<net::Url> ParseFeedUrl(const std::string& url) {
  Result<net::Url> parsed = net::ParseUrl(url);
  if (!parsed.ok() || (parsed->scheme != "http" && parsed->scheme != "https")) return std::nullopt;
  return std::move(*parsed);
}

}  // namespace rendezvous::calendar
