#include "address_guard.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "rendezvous/net.hpp"
#include "rendezvous/text.hpp"

namespace rendezvous::webhooks {
namespace {

Status UrlInvalid(std::string message) { return Status::Invalid("subscriberUrl", std::move(message)); }

bool IsDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

Result<SubscriberUrl> ParseSubscriberUrl(std::string_view url) {
  if (url.empty()) return UrlInvalid("subscriberUrl must not be empty");
  if (url.size() > kMaxUrlLength) {
    return UrlInvalid("subscriberUrl must be at most " + std::to_string(kMaxUrlLength) + " characters");
  }
  for (char ch : url) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f) return UrlInvalid("subscriberUrl must not contain spaces, control or non-ASCII characters");
  }
  if (url.find('#') != std::string_view::npos) return UrlInvalid("subscriberUrl must not contain a fragment");
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos) return UrlInvalid("subscriberUrl must be an absolute http or https URL");
  SubscriberUrl out;
  out.scheme = text::AsciiLower(url.substr(0, sep));
  if (out.scheme != "http" && out.scheme != "https") {
    return UrlInvalid("subscriberUrl must be an absolute http or https URL");
  }
  std::string_view rest = url.substr(sep + 3);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?"));
  if (authority.find('@') != std::string_view::npos) {
    return UrlInvalid("subscriberUrl must not contain user information (credentials)");
  }
  if (authority.empty()) return UrlInvalid("subscriberUrl must name a host");
  std::string_view host = authority;
  std::string_view port;
  if (authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return UrlInvalid("subscriberUrl has an unclosed IPv6 literal");
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return UrlInvalid("subscriberUrl has a malformed host");
      port = after.substr(1);
    }
    in6_addr a{};
    if (inet_pton(AF_INET6, std::string(host).c_str(), &a) != 1) {
      return UrlInvalid("subscriberUrl has a malformed IPv6 literal");
    }
  } else {
    const size_t colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
    }
    if (host.empty() || host.size() > 253) return UrlInvalid("subscriberUrl must name a host");
    for (char c : host) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '.' || c == '_';
      if (!ok) return UrlInvalid("subscriberUrl has a malformed host");
    }
  }
  out.host = text::AsciiLower(host);
  out.port = out.scheme == "https" ? 443 : 80;
  if (authority.back() == ':' && port.empty()) return UrlInvalid("subscriberUrl has an empty port");
  if (!port.empty()) {
    if (port.size() > 5 || !IsDigits(port)) return UrlInvalid("subscriberUrl has a malformed port");
    out.port = std::stoi(std::string(port));
    if (out.port < 1 || out.port > 65535) return UrlInvalid("subscriberUrl has a port out of range");
  }
  return out;
}

std::optional<std::string> ClassifyAddress(std::string_view address) { return net::ClassifyAddress(address); }

Result<std::string> CheckedAddress(const SubscriberUrl& url, bool allow_private) {
  Result<std::string> address = net::ResolveChecked(url.host, allow_private);
  if (address.ok()) return address;
  if (address.status().code() == ErrorCode::kNotFound) {
    return UrlInvalid("subscriberUrl's host " + url.host + " does not resolve");
  }
  return UrlInvalid("subscriberUrl must not point to a non-public address (" + address.status().message() + ")");
}

}  // namespace rendezvous::webhooks
