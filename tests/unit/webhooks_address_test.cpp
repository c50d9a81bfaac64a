// The address guard: subscriber URL forms and the classification of addresses.
#include <gtest/gtest.h>

#include "address_guard.hpp"

namespace rendezvous::webhooks {
namespace {

std::string Why(const char* address) { return ClassifyAddress(address).value_or("<not an address>"); }

TEST(WebhooksAddress, PublicAddressesPass) {
  EXPECT_EQ(Why("93.184.216.34"), "");
  EXPECT_EQ(Why("8.8.8.8"), "");
  EXPECT_EQ(Why("2606:2800:220:1:248:1893:25c8:1946"), "");
  EXPECT_EQ(Why("172.32.0.1"), "");
  EXPECT_EQ(Why("100.128.0.1"), "");
}

TEST(WebhooksAddress, NonPublicIpv4IsNamed) {
  EXPECT_EQ(Why("127.0.0.1"), "loopback");
  EXPECT_EQ(Why("127.255.0.9"), "loopback");
  EXPECT_EQ(Why("10.1.2.3"), "private");
  EXPECT_EQ(Why("172.16.0.1"), "private");
  EXPECT_EQ(Why("172.31.255.255"), "private");
  EXPECT_EQ(Why("192.168.1.1"), "private");
  EXPECT_EQ(Why("169.254.10.1"), "link-local");
  EXPECT_EQ(Why("169.254.169.254"), "cloud metadata");
  EXPECT_EQ(Why("100.64.0.1"), "shared address space");
  EXPECT_EQ(Why("224.0.0.1"), "multicast");
  EXPECT_EQ(Why("0.0.0.0"), "unspecified");
  EXPECT_EQ(Why("255.255.255.255"), "reserved");
}

TEST(WebhooksAddress, NonPublicIpv6IsNamed) {
  EXPECT_EQ(Why("::1"), "loopback");
  EXPECT_EQ(Why("::"), "unspecified");
  EXPECT_EQ(Why("fe80::1"), "link-local");
  EXPECT_EQ(Why("fc00::1"), "unique local");
  EXPECT_EQ(Why("fd12:3456::1"), "unique local");
  EXPECT_EQ(Why("fd00:ec2::254"), "cloud metadata");
  EXPECT_EQ(Why("ff02::1"), "multicast");
  EXPECT_EQ(Why("::ffff:127.0.0.1"), "IPv4-mapped IPv6");
  EXPECT_EQ(Why("::ffff:8.8.8.8"), "IPv4-mapped IPv6");
  EXPECT_EQ(Why("64:ff9b::7f00:1"), "loopback");  // NAT64 of 127.0.0.1
  EXPECT_EQ(Why("2002:a00:1::"), "private");      // 6to4 of 10.0.0.1
  EXPECT_EQ(Why("example.com"), "<not an address>");
}

TEST(WebhooksAddress, ParsesSubscriberUrls) {
  Result<SubscriberUrl> u = ParseSubscriberUrl("https://Hooks.Example.com/in?x=1");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->scheme, "https");
  EXPECT_EQ(u->host, "hooks.example.com");
  EXPECT_EQ(u->port, 443);
  u = ParseSubscriberUrl("http://[::1]:8080/x");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 8080);
  EXPECT_EQ(ParseSubscriberUrl("http://127.0.0.1:9/")->port, 9);
}

TEST(WebhooksAddress, RefusesMalformedUrls) {
  for (const char* bad : {"", "example.com/x", "ftp://example.com/", "https://user:pw@example.com/",
                          "https://user@example.com/", "https:///x", "https://exa mple.com/", "https://example.com/#frag",
                          "https://example.com:0/", "https://example.com:99999/", "https://example.com:/",
                          "https://[::1/", "https://ex%41mple.com/", "javascript:alert(1)"}) {
    Result<SubscriberUrl> u = ParseSubscriberUrl(bad);
    EXPECT_FALSE(u.ok()) << bad;
    if (!u.ok()) {
      EXPECT_EQ(u.status().field(), "subscriberUrl") << bad;
    }
  }
  EXPECT_FALSE(ParseSubscriberUrl("https://example.com/" + std::string(kMaxUrlLength, 'a')).ok());
}

TEST(WebhooksAddress, ChecksWhatANameResolvesTo) {
  Result<std::string> loopback = CheckedAddress(*ParseSubscriberUrl("http://localhost:8080/"), false);
  ASSERT_FALSE(loopback.ok());
  EXPECT_NE(loopback.status().message().find("loopback"), std::string::npos) << loopback.status().message();
  // Lenient numeric forms mean loopback too.
  EXPECT_FALSE(CheckedAddress(*ParseSubscriberUrl("http://127.1/"), false).ok());
  EXPECT_FALSE(CheckedAddress(*ParseSubscriberUrl("http://2130706433/"), false).ok());
  EXPECT_FALSE(CheckedAddress(*ParseSubscriberUrl("http://[::ffff:7f00:1]/"), false).ok());
  EXPECT_FALSE(CheckedAddress(*ParseSubscriberUrl("http://0.0.0.0/"), false).ok());
  // Allowed when private networks are.
  Result<std::string> allowed = CheckedAddress(*ParseSubscriberUrl("http://127.0.0.1:8080/"), true);
  ASSERT_TRUE(allowed.ok());
  EXPECT_EQ(*allowed, "127.0.0.1");
  EXPECT_FALSE(CheckedAddress(*ParseSubscriberUrl("http://no-such-host.invalid/"), true).ok());
}

}  // namespace
}  // namespace rendezvous::webhooks
