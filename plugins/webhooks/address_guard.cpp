#include "address_guard.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

#include "rendezvous/text.hpp"

namespace rendezvous::webhooks {
namespace {

Status UrlInvalid(std::string message) { return Status::Invalid("subscriberUrl", std::move(message)); }

std::string ClassifyV4(uint32_t a) {
  const unsigned b0 = a >> 24, b1 = (a >> 16) & 0xff;
  if (a == 0xA9FEA9FEu) return "cloud metadata";  // 169.254.169.254
  if (b0 == 0) return "unspecified";
  if (b0 == 127) return "loopback";
  if (b0 == 10 || (b0 == 172 && (b1 & 0xf0) == 16) || (b0 == 192 && b1 == 168)) return "private";
  if (b0 == 169 && b1 == 254) return "link-local";
  if (b0 == 100 && (b1 & 0xc0) == 64) return "shared address space";
  if (b0 >= 224 && b0 <= 239) return "multicast";
  if (b0 >= 240) return "reserved";
  // 192.0.0.0/24 (protocol assignments), 198.18.0.0/15 (benchmarking).
  if ((a >> 8) == 0xC00000u || (b0 == 198 && (b1 & 0xfe) == 18)) return "reserved";
  return "";
}

std::string ClassifyV6(const in6_addr& a) {
  const uint8_t* b = a.s6_addr;
  if (IN6_IS_ADDR_UNSPECIFIED(&a)) return "unspecified";
  if (IN6_IS_ADDR_LOOPBACK(&a)) return "loopback";
  if (IN6_IS_ADDR_V4MAPPED(&a)) return "IPv4-mapped IPv6";
  if (IN6_IS_ADDR_V4COMPAT(&a)) return "reserved";
  if (b[0] == 0xff) return "multicast";
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return "link-local";
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return "private";  // site-local (deprecated)
  if (b[0] == 0xfd && b[1] == 0x00 && b[2] == 0x0e && b[3] == 0xc2) return "cloud metadata";  // fd00:ec2::/32
  if ((b[0] & 0xfe) == 0xfc) return "unique local";
  // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) embed an IPv4 address: judge that one.
  static const uint8_t kNat64[12] = {0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  if (std::memcmp(b, kNat64, 12) == 0) {
    uint32_t v4 = 0;
    std::memcpy(&v4, b + 12, 4);
    return ClassifyV4(ntohl(v4));
  }
  if (b[0] == 0x20 && b[1] == 0x02) {
    uint32_t v4 = 0;
    std::memcpy(&v4, b + 2, 4);
    return ClassifyV4(ntohl(v4));
  }
  if (b[0] == 0x01 && b[1] == 0x00 && std::memcmp(b + 2, "\0\0\0\0\0\0", 6) == 0) return "reserved";  // discard
  return "";
}

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

std::optional<std::string> ClassifyAddress(std::string_view address) {
  const std::string text(address);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return ClassifyV4(ntohl(v4.s_addr));
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) return ClassifyV6(v6);
  return std::nullopt;
}

Result<std::vector<std::string>> ResolveHost(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  // Lenient numeric forms ("127.1", "2130706433", "0x7f.1") are resolved by getaddrinfo too, to the
  // address they mean, so the check sees what a connection would reach.
  if (getaddrinfo(host.c_str(), nullptr, &hints, &list) != 0 || list == nullptr) {
    return UrlInvalid("subscriberUrl's host " + host + " does not resolve");
  }
  std::vector<std::string> out;
  for (addrinfo* p = list; p != nullptr; p = p->ai_next) {
    char buf[INET6_ADDRSTRLEN] = {0};
    if (p->ai_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(p->ai_addr)->sin_addr, buf, sizeof buf);
    } else if (p->ai_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(p->ai_addr)->sin6_addr, buf, sizeof buf);
    } else {
      continue;
    }
    std::string a(buf);
    bool seen = false;
    for (const std::string& s : out) seen = seen || s == a;
    if (!seen) out.push_back(std::move(a));
  }
  freeaddrinfo(list);
  if (out.empty()) return UrlInvalid("subscriberUrl's host " + host + " does not resolve");
  return out;
}

Result<std::string> CheckedAddress(const SubscriberUrl& url, bool allow_private) {
  Result<std::vector<std::string>> addresses = ResolveHost(url.host);
  if (!addresses.ok()) return addresses.status();
  if (!allow_private) {
    for (const std::string& a : *addresses) {
      std::optional<std::string> why = ClassifyAddress(a);
      if (why && !why->empty()) {
        return UrlInvalid("subscriberUrl must not point to a non-public address (" + url.host + " is " + a +
                          ", " + *why + ")");
      }
    }
  }
  return addresses->front();
}

}  // namespace rendezvous::webhooks
