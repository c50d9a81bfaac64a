// The address guard: subscriber URL forms and the classification of addresses.
#include <gtest/gtest.h>

#include "address_guard.hpp"
#include "rendezvous/address_policy.hpp"

namespace rendezvous::webhooks {
namespace {

// The ranges themselves are rendezvous/address_policy.hpp's (tests/unit/net_address_test.cpp): the guard
// uses that one policy.
TEST(WebhooksAddress, UsesTheHostAddressPolicy) {
  EXPECT_EQ(net::ClassifyAddress("93.184.216.34"), "");
  EXPECT_EQ(net::ClassifyAddress("10.1.2.3"), "private");
  EXPECT_EQ(net::ClassifyAddress("198.18.0.1"), "benchmarking");
  EXPECT_EQ(net::ClassifyAddress("example.com"), std::nullopt);
  for (const char* url : {"http://[64:ff9b::a9fe:a9fe]/hook", "http://[64:ff9b:1::808:808]/hook",
                          "http://[2002:a9fe:a9fe::1]/hook", "http://192.0.0.8/hook", "http://[2001::1]/hook"}) {
    Result<std::string> refused = CheckedAddress(*ParseSubscriberUrl(url), false);
    ASSERT_FALSE(refused.ok()) << url;
    EXPECT_EQ(refused.status().field(), "subscriberUrl");
    EXPECT_NE(refused.status().message().find("non-public address"), std::string::npos) << refused.status().message();
  }
  EXPECT_NE(CheckedAddress(*ParseSubscriberUrl("http://[64:ff9b::a9fe:a9fe]/"), false)
                .status()
                .message()
                .find("NAT64 of 169.254.169.254: cloud metadata"),
            std::string::npos);
}

TEST(WebhooksAddress, ParsesSubscriberUrls) {
  Result<net::Url> u = ParseSubscriberUrl("https://Hooks.Example.com/in?x=1");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->scheme, "https");
  EXPECT_EQ(u->host, "hooks.example.com");
  EXPECT_EQ(u->EffectivePort(), 443);
  u = ParseSubscriberUrl("http://[::1]:8080/x");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->EffectivePort(), 8080);
  EXPECT_EQ(ParseSubscriberUrl("http://127.0.0.1:9/")->EffectivePort(), 9);
}

TEST(WebhooksAddress, RefusesMalformedUrls) {
  for (const char* bad : {"", "example.com/x", "ftp://example.com/", "https://user:pw@example.com/",
                          "https://user@example.com/", "https:///x", "https://exa mple.com/", "https://example.com/#frag",
                          "https://example.com:0/", "https://example.com:99999/", "https://example.com:/",
                          "https://[::1/", "https://ex%41mple.com/", "javascript:alert(1)"}) {
    Result<net::Url> u = ParseSubscriberUrl(bad);
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

// The webhooks' own parser let a backslash through in the path or query; the kit refuses it, as
// the other copies did: receivers and browsers read "\" as "/" or as a byte, so the URL checked
// and the URL reached could differ.
TEST(WebhooksAddress, RefusesABackslashAnywhere) {
  for (const char* bad : {"https://hooks.example.com/a\\b", "https://hooks.example.com/?a=\\", "https://hooks.example.com\\@evil.example/"}) {
    Result<net::Url> u = ParseSubscriberUrl(bad);
    EXPECT_FALSE(u.ok()) << bad;
    if (!u.ok()) EXPECT_EQ(u.status().field(), "subscriberUrl");
  }
  EXPECT_TRUE(ParseSubscriberUrl("https://hooks.example.com/a/b?c=%5C").ok());
}

// Whether a refused send is tried again rests on the policy's answer, not on its wording.
TEST(WebhooksAddress, SaysWhyAnAddressIsRefused) {
  AddressRefusal refusal = AddressRefusal::kNone;
  EXPECT_FALSE(CheckedAddress(*ParseSubscriberUrl("http://no-such-host.invalid/"), false, &refusal).ok());
  EXPECT_EQ(refusal, AddressRefusal::kUnresolved);
  EXPECT_FALSE(CheckedAddress(*ParseSubscriberUrl("http://localhost:8080/"), false, &refusal).ok());
  EXPECT_EQ(refusal, AddressRefusal::kNotPublic);
  EXPECT_TRUE(CheckedAddress(*ParseSubscriberUrl("http://127.0.0.1:8080/"), true, &refusal).ok());
  EXPECT_EQ(refusal, AddressRefusal::kNone);
}

}  // namespace
}  // namespace rendezvous::webhooks
