// The one address policy for outbound connections to URLs that users give (webhook subscriber
// URLs, ICS feeds): which addresses count as public, and resolving a host so that the connection
// goes to the very address that was checked (a name whose DNS answer changes between the check
// and the connection cannot reach an internal service). Thread-safe; Resolve* block on the system
// resolver.
//
// Not public: loopback, private (RFC 1918), link-local, cloud metadata, shared address space
// (CGNAT 100.64/10), benchmarking (198.18/15, 2001:2::/48), protocol assignments (192.0.0/24),
// documentation (192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20), multicast,
// broadcast and reserved IPv4 (240/4), unspecified, IPv4-mapped and IPv4-compatible IPv6, unique
// local (fc00::/7), site-local (fec0::/10), Teredo (2001::/32), discard (100::/64), and IPv6
// outside global unicast (2000::/3), local-use NAT64 (64:ff9b:1::/48: where its IPv4 address sits
// depends on the translator's prefix length, which the address does not tell). Addresses that
// embed an IPv4 address at a known place are judged by it: NAT64 (64:ff9b::/96) and 6to4
// (2002::/16).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/status.hpp"

namespace rendezvous::net {

// Why an IPv4 address (host byte order) is not public; empty when it is.
std::string ClassifyIpv4(std::uint32_t address);
// Why an IPv6 address (16 bytes, network order) is not public; empty when it is.
std::string ClassifyIpv6(const std::uint8_t (&address)[16]);
// The same for numeric text ("10.0.0.1", "::1", no brackets); nullopt when `address` is not a
// numeric address (a name).
std::optional<std::string> ClassifyAddress(std::string_view address);

// True for numeric IPv4 or IPv6 text (no brackets).
bool IsAddressLiteral(std::string_view host);

// `host`'s addresses as numeric text, without repeats, in the resolver's order (an address
// literal answers itself; lenient numeric forms such as "127.1" resolve to what they mean).
// kNotFound when it does not resolve.
Result<std::vector<std::string>> ResolveHost(const std::string& host);

// The address to connect to for `host`: the first it resolves to. Unless `allow_private`, every
// address it resolves to must be public: kForbidden otherwise, with the message
// "<host> is <address>, <why>". kNotFound when it does not resolve.
Result<std::string> ResolveChecked(const std::string& host, bool allow_private);

// The CURLOPT_RESOLVE entry that pins `host`:`port` to `address` ("host:port:address", an IPv6
// address in brackets), so that libcurl connects to the checked address and nothing else.
std::string CurlResolveEntry(const std::string& host, int port, const std::string& address);

}  // namespace rendezvous::net
