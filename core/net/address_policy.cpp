#include "rendezvous/address_policy.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

namespace rendezvous::net {
namespace {

// An IPv4 range: `prefix` (host order) of `bits` leading bits.
struct V4Range {
  std::uint32_t prefix;
  int bits;
  const char* why;
};

constexpr std::uint32_t V4(unsigned a, unsigned b, unsigned c, unsigned d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

// Most specific first: the first range that holds an address names it.
constexpr V4Range kV4Ranges[] = {
    {V4(169, 254, 169, 254), 32, "cloud metadata"},
    {V4(255, 255, 255, 255), 32, "broadcast"},
    {V4(0, 0, 0, 0), 8, "unspecified"},
    {V4(10, 0, 0, 0), 8, "private"},
    {V4(100, 64, 0, 0), 10, "shared address space"},
    {V4(127, 0, 0, 0), 8, "loopback"},
    {V4(169, 254, 0, 0), 16, "link-local"},
    {V4(172, 16, 0, 0), 12, "private"},
    {V4(192, 0, 0, 0), 24, "protocol assignments"},
    {V4(192, 0, 2, 0), 24, "documentation"},
    {V4(192, 88, 99, 0), 24, "reserved"},  // the former 6to4 relay anycast
    {V4(192, 168, 0, 0), 16, "private"},
    {V4(198, 18, 0, 0), 15, "benchmarking"},
    {V4(198, 51, 100, 0), 24, "documentation"},
    {V4(203, 0, 113, 0), 24, "documentation"},
    {V4(224, 0, 0, 0), 4, "multicast"},
    {V4(240, 0, 0, 0), 4, "reserved"},
};

bool InV4(std::uint32_t a, const V4Range& r) {
  const std::uint32_t mask = r.bits == 0 ? 0 : ~std::uint32_t{0} << (32 - r.bits);
  return (a & mask) == (r.prefix & mask);
}

// True when the first `bits` bits of `a` are those of `prefix`.
bool InV6(const std::uint8_t (&a)[16], std::initializer_list<std::uint8_t> prefix, int bits) {
  const std::uint8_t* p = prefix.begin();
  for (int i = 0; bits > 0; ++i, bits -= 8) {
    const std::uint8_t want = i < static_cast<int>(prefix.size()) ? p[i] : 0;
    const std::uint8_t mask = bits >= 8 ? 0xff : static_cast<std::uint8_t>(0xff << (8 - bits));
    if ((a[i] & mask) != (want & mask)) return false;
  }
  return true;
}

std::uint32_t V4At(const std::uint8_t (&a)[16], int i0, int i1, int i2, int i3) {
  return V4(a[i0], a[i1], a[i2], a[i3]);
}

// "NAT64 of 169.254.169.254: cloud metadata"-like text for an embedded non-public IPv4 address.
std::string Embedded(const char* kind, std::uint32_t v4) {
  std::string why = ClassifyIpv4(v4);
  if (why.empty()) return why;
  in_addr addr{};
  addr.s_addr = htonl(v4);
  char text[INET_ADDRSTRLEN] = {0};
  inet_ntop(AF_INET, &addr, text, sizeof text);
  return std::string(kind) + " of " + text + ": " + why;
}

}  // namespace

std::string ClassifyIpv4(std::uint32_t address) {
  for (const V4Range& r : kV4Ranges) {
    if (InV4(address, r)) return r.why;
  }
  return "";
}

std::string ClassifyIpv6(const std::uint8_t (&a)[16]) {
  static constexpr std::uint8_t kZero[16] = {};
  if (std::memcmp(a, kZero, 16) == 0) return "unspecified";
  if (std::memcmp(a, kZero, 15) == 0 && a[15] == 1) return "loopback";
  if (InV6(a, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96)) return "IPv4-mapped IPv6";
  if (InV6(a, {}, 96)) return "IPv4-compatible IPv6";
  if (InV6(a, {0x00, 0x64, 0xff, 0x9b}, 96)) return Embedded("NAT64", V4At(a, 12, 13, 14, 15));
  // Local-use NAT64 (RFC 8215): where the IPv4 address sits depends on the operator's prefix
  // length, which the address does not tell, and the translator is a local one: refused whole.
  if (InV6(a, {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}, 48)) return "local-use NAT64";
  if (InV6(a, {0x01, 0x00}, 64)) return "discard";
  if (InV6(a, {0x20, 0x01, 0x00, 0x00}, 32)) return "Teredo";
  if (InV6(a, {0x20, 0x01, 0x00, 0x02}, 48)) return "benchmarking";
  if (InV6(a, {0x20, 0x01, 0x00, 0x10}, 28)) return "reserved";  // ORCHID
  if (InV6(a, {0x20, 0x01, 0x0d, 0xb8}, 32)) return "documentation";
  if (InV6(a, {0x3f, 0xff}, 20)) return "documentation";
  if (InV6(a, {0x20, 0x02}, 16)) return Embedded("6to4", V4At(a, 2, 3, 4, 5));
  if (InV6(a, {0xfd, 0x00, 0x0e, 0xc2}, 32)) return "cloud metadata";
  if (InV6(a, {0xfc}, 7)) return "unique local";
  if (InV6(a, {0xfe, 0x80}, 10)) return "link-local";
  if (InV6(a, {0xfe, 0xc0}, 10)) return "site-local";
  if (InV6(a, {0xff}, 8)) return "multicast";
  if (!InV6(a, {0x20}, 3)) return "reserved";  // outside global unicast
  return "";
}

std::optional<std::string> ClassifyAddress(std::string_view address) {
  if (address.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  const std::string text(address);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return ClassifyIpv4(ntohl(v4.s_addr));
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    std::uint8_t bytes[16];
    std::memcpy(bytes, v6.s6_addr, 16);
    return ClassifyIpv6(bytes);
  }
  return std::nullopt;
}

bool IsAddressLiteral(std::string_view host) { return ClassifyAddress(host).has_value(); }

Result<std::vector<std::string>> ResolveHost(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  if (host.empty() || host.find('\0') != std::string::npos ||
      getaddrinfo(host.c_str(), nullptr, &hints, &list) != 0 || list == nullptr) {
    return Status(ErrorCode::kNotFound, host + " does not resolve");
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
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(std::move(a));
  }
  freeaddrinfo(list);
  if (out.empty()) return Status(ErrorCode::kNotFound, host + " does not resolve");
  return out;
}

Result<std::string> ResolveChecked(const std::string& host, bool allow_private) {
  Result<std::vector<std::string>> addresses = ResolveHost(host);
  if (!addresses.ok()) return addresses.status();
  if (!allow_private) {
    for (const std::string& a : *addresses) {
      std::optional<std::string> why = ClassifyAddress(a);
      if (why && !why->empty()) return Status(ErrorCode::kForbidden, host + " is " + a + ", " + *why);
    }
  }
  return addresses->front();
}

std::string CurlResolveEntry(const std::string& host, int port, const std::string& address) {
  const std::string pinned = address.find(':') != std::string::npos ? "[" + address + "]" : address;
  return host + ":" + std::to_string(port) + ":" + pinned;
}

}  // namespace rendezvous::net
