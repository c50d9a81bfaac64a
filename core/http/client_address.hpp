// The client's address behind reverse proxies (`server.trusted_proxies`): IP addresses, CIDR
// ranges, and the walk over X-Forwarded-For that names the client.
//
// Behind a load balancer every TCP connection comes from the balancer, so the peer address says
// nothing about the client. When the peer is a trusted proxy, the client is the right-most address
// of X-Forwarded-For that is not itself a trusted proxy (each proxy appends the address it saw, so
// entries left of the first untrusted one may be forged by the client). Without trusted proxies,
// or from an untrusted peer, X-Forwarded-For is ignored.
//
// Plain values, immutable after construction: safe to use from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rendezvous::core {

struct IpAddress {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // IPv4 in the first 4
};

// "192.0.2.1", "2001:db8::1", "[2001:db8::1]"; an IPv4-mapped IPv6 address ("::ffff:192.0.2.1")
// becomes the IPv4 address. nullopt for anything else (ports, host names, zone ids, blanks).
std::optional<IpAddress> ParseIpAddress(std::string_view text);

// The canonical text (inet_ntop): "192.0.2.1", "2001:db8::1".
std::string FormatIpAddress(const IpAddress& address);

struct AddressRange {
  IpAddress base;  // host bits cleared
  int prefix = 0;  // 0..32 (IPv4) or 0..128 (IPv6)

  bool Contains(const IpAddress& address) const;
};

// "10.0.0.0/8", "fd00::/8", or one address ("10.1.2.3" = /32, "::1" = /128). Host bits below the
// prefix are ignored. nullopt when malformed.
std::optional<AddressRange> ParseAddressRange(std::string_view text);

class TrustedProxies {
 public:
  TrustedProxies() = default;
  explicit TrustedProxies(std::vector<AddressRange> ranges) : ranges_(std::move(ranges)) {}

  bool empty() const { return ranges_.empty(); }
  bool Trusts(const IpAddress& address) const;

  // The client's address for a connection from `peer` carrying `forwarded_for` (every
  // X-Forwarded-For field joined with ", "; nullopt when absent). `peer` is returned unchanged
  // unless it is a trusted proxy. From a trusted proxy: the right-most entry that is not trusted;
  // every entry trusted: the left-most; an entry that is not an IP address ends the walk at the
  // last good one (never a value the server cannot log as an address).
  std::string ClientAddress(const std::string& peer, const std::optional<std::string>& forwarded_for) const;

 private:
  std::vector<AddressRange> ranges_;
};

}  // namespace rendezvous::core
