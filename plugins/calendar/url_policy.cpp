#include "url_policy.hpp"

#include <algorithm>

#include "calendar_options.hpp"
#include "rendezvous/net.hpp"
#include "rendezvous/text.hpp"

namespace rendezvous::calendar {
namespace {

// scheme://host[:port] of an absolute http(s) URL, lower-cased; "" when not one.
std::string OriginOf(const std::string& url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return "";
  const std::string scheme = text::AsciiLower(url.substr(0, scheme_end));
  if (scheme != "http" && scheme != "https") return "";
  const size_t host_end = url.find_first_of("/?#", scheme_end + 3);
  std::string authority = url.substr(
      scheme_end + 3, host_end == std::string::npos ? std::string::npos : host_end - scheme_end - 3);
  if (authority.empty() || authority.find('@') != std::string::npos ||
      authority.find('\\') != std::string::npos)
    return "";
  return scheme + "://" + text::AsciiLower(authority);
}

}  // namespace

bool HasControlOrSpace(const std::string& s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; });
}

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || net::ClassifyAddress(host).value_or("") == "loopback";
}

std::string NonPublicLiteral(const std::string& host) { return net::ClassifyAddress(host).value_or(""); }

bool IsAllowedRedirect(const std::string& url, const std::string& base_url, const std::string& app_url) {
  if (url.empty() || url.size() > kMaxUrlLength || HasControlOrSpace(url)) return false;
  const std::string origin = OriginOf(url);
  if (origin.empty()) return false;
  // The URL must begin with exactly that origin, followed by nothing or a path/query/fragment.
  const std::string rest = url.substr(origin.size());
  if (!rest.empty() && rest[0] != '/' && rest[0] != '?' && rest[0] != '#') return false;
  if (rest.rfind("//", 0) == 0) return false;
  return origin == OriginOf(base_url) || origin == OriginOf(app_url);
}

std::optional<FeedUrl> ParseFeedUrl(const std::string& url) {
  const std::string origin = OriginOf(url);
  if (origin.empty()) return std::nullopt;
  FeedUrl p;
  const size_t sep = origin.find("://");
  p.scheme = origin.substr(0, sep);
  std::string authority = origin.substr(sep + 3);
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string::npos) return std::nullopt;
    p.host = authority.substr(1, close - 1);
  } else {
    p.host = authority.substr(0, authority.find(':'));
  }
  if (p.host.empty()) return std::nullopt;
  return p;
}

}  // namespace rendezvous::calendar
