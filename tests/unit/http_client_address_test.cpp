// Addresses, CIDR ranges and the X-Forwarded-For walk behind trusted proxies.
#include <gtest/gtest.h>

#include "http/client_address.hpp"

namespace rendezvous::core {
namespace {

TrustedProxies Trusting(std::initializer_list<const char*> ranges) {
  std::vector<AddressRange> parsed;
  for (const char* r : ranges) parsed.push_back(ParseAddressRange(r).value());
  return TrustedProxies(std::move(parsed));
}

TEST(HttpClientAddressTest, ParsesAndFormatsAddresses) {
  EXPECT_EQ(FormatIpAddress(ParseIpAddress("192.0.2.1").value()), "192.0.2.1");
  EXPECT_EQ(FormatIpAddress(ParseIpAddress("2001:DB8:0::1").value()), "2001:db8::1");
  EXPECT_EQ(FormatIpAddress(ParseIpAddress("[::1]").value()), "::1");
  // An IPv4-mapped IPv6 peer is the IPv4 address.
  IpAddress mapped = ParseIpAddress("::ffff:10.1.2.3").value();
  EXPECT_FALSE(mapped.v6);
  EXPECT_EQ(FormatIpAddress(mapped), "10.1.2.3");
  for (const char* bad : {"", "unknown", "192.0.2.1:443", "192.0.2", "1.2.3.256", "01.2.3.4x", "fe80::1%eth0",
                          " 192.0.2.1", "[192.0.2.1", "lb.example.com"}) {
    EXPECT_FALSE(ParseIpAddress(bad).has_value()) << bad;
  }
}

TEST(HttpClientAddressTest, RangesContainTheirAddressesOnly) {
  AddressRange ten = ParseAddressRange("10.0.0.0/8").value();
  EXPECT_TRUE(ten.Contains(ParseIpAddress("10.255.0.1").value()));
  EXPECT_FALSE(ten.Contains(ParseIpAddress("11.0.0.1").value()));
  EXPECT_FALSE(ten.Contains(ParseIpAddress("::ffff:11.0.0.1").value()));
  EXPECT_TRUE(ten.Contains(ParseIpAddress("::ffff:10.0.0.1").value()));

  AddressRange odd = ParseAddressRange("172.16.0.0/12").value();
  EXPECT_TRUE(odd.Contains(ParseIpAddress("172.31.255.255").value()));
  EXPECT_FALSE(odd.Contains(ParseIpAddress("172.32.0.0").value()));

  AddressRange host_bits = ParseAddressRange("192.168.1.77/24").value();  // host bits ignored
  EXPECT_TRUE(host_bits.Contains(ParseIpAddress("192.168.1.1").value()));
  EXPECT_FALSE(host_bits.Contains(ParseIpAddress("192.168.2.1").value()));

  AddressRange one = ParseAddressRange("127.0.0.1").value();
  EXPECT_EQ(one.prefix, 32);
  EXPECT_FALSE(one.Contains(ParseIpAddress("127.0.0.2").value()));

  AddressRange v6 = ParseAddressRange("fd00::/8").value();
  EXPECT_TRUE(v6.Contains(ParseIpAddress("fd12:3456::1").value()));
  EXPECT_FALSE(v6.Contains(ParseIpAddress("fe80::1").value()));
  EXPECT_FALSE(v6.Contains(ParseIpAddress("10.0.0.1").value()));

  AddressRange all = ParseAddressRange("0.0.0.0/0").value();
  EXPECT_TRUE(all.Contains(ParseIpAddress("203.0.113.9").value()));

  for (const char* bad : {"10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/8/8", "10.0.0.0/ 8",
                          "10.0.0.0/0x8", "/8", "example.com/8"}) {
    EXPECT_FALSE(ParseAddressRange(bad).has_value()) << bad;
  }
}

TEST(HttpClientAddressTest, WithoutTrustedProxiesTheHeaderIsIgnored) {
  TrustedProxies none;
  EXPECT_EQ(none.ClientAddress("127.0.0.1", "198.51.100.7"), "127.0.0.1");
}

TEST(HttpClientAddressTest, AnUntrustedPeerIsTheClientWhateverItForwards) {
  TrustedProxies proxies = Trusting({"10.0.0.0/8"});
  EXPECT_EQ(proxies.ClientAddress("203.0.113.5", "198.51.100.7"), "203.0.113.5");
  EXPECT_EQ(proxies.ClientAddress("203.0.113.5", std::nullopt), "203.0.113.5");
}

TEST(HttpClientAddressTest, FromATrustedProxyTheRightMostUntrustedEntryIsTheClient) {
  TrustedProxies proxies = Trusting({"10.0.0.0/8", "fd00::/8"});
  EXPECT_EQ(proxies.ClientAddress("10.0.0.5", "198.51.100.7"), "198.51.100.7");
  // The client forged the left-most entry; the proxy appended what it saw.
  EXPECT_EQ(proxies.ClientAddress("10.0.0.5", "1.1.1.1, 198.51.100.7"), "198.51.100.7");
  // Two trusted hops (a cloud balancer, then nginx): both skipped.
  EXPECT_EQ(proxies.ClientAddress("10.0.0.5", "1.1.1.1,198.51.100.7 ,10.9.9.9"), "198.51.100.7");
  EXPECT_EQ(proxies.ClientAddress("fd00::2", "2001:DB8::7"), "2001:db8::7");
  // Every hop trusted: the left-most one is as far as anyone can tell.
  EXPECT_EQ(proxies.ClientAddress("10.0.0.5", "10.1.1.1, 10.2.2.2"), "10.1.1.1");
  // No header from a trusted proxy: the proxy is the client (e.g. its own health checks).
  EXPECT_EQ(proxies.ClientAddress("10.0.0.5", std::nullopt), "10.0.0.5");
}

TEST(HttpClientAddressTest, AMalformedEntryStopsTheWalkAtTheLastAddress) {
  TrustedProxies proxies = Trusting({"10.0.0.0/8"});
  EXPECT_EQ(proxies.ClientAddress("10.0.0.5", "unknown"), "10.0.0.5");
  EXPECT_EQ(proxies.ClientAddress("10.0.0.5", ""), "10.0.0.5");
  EXPECT_EQ(proxies.ClientAddress("10.0.0.5", "198.51.100.7, <script>, 10.1.1.1"), "10.1.1.1");
  EXPECT_EQ(proxies.ClientAddress("10.0.0.5", "198.51.100.7:5555"), "10.0.0.5");
}

}  // namespace
}  // namespace rendezvous::core
