#include "url.hpp"

#include <gtest/gtest.h>

namespace rendezvous::oauth {
namespace {

TEST(OAuthUrl, ParsesParts) {
  const std::string url = "HTTPS://Host.Example:8443/a/b?x=1&y=2#frag";
  Result<UrlParts> p = ParseAbsoluteUrl(url);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->scheme, "https");
  EXPECT_EQ(p->host, "Host.Example");
  EXPECT_EQ(p->port, 8443);
  EXPECT_EQ(p->path, "/a/b");
  EXPECT_TRUE(p->has_query);
  EXPECT_EQ(p->query, "x=1&y=2");
  EXPECT_TRUE(p->has_fragment);
  EXPECT_EQ(p->fragment, "frag");

  const std::string bare = "https://h.example";
  Result<UrlParts> b = ParseAbsoluteUrl(bare);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->path, "");
  EXPECT_FALSE(b->port.has_value());
  EXPECT_FALSE(b->has_query);
  EXPECT_FALSE(b->has_fragment);

  const std::string v6 = "http://[::1]:80/";
  Result<UrlParts> six = ParseAbsoluteUrl(v6);
  ASSERT_TRUE(six.ok());
  EXPECT_EQ(six->host, "[::1]");
  EXPECT_EQ(six->port, 80);
}

TEST(OAuthUrl, Loopback) {
  for (const char* h : {"localhost", "LOCALHOST", "127.0.0.1", "127.255.255.255", "127.0.0.01",
                        "[::1]"}) {
    EXPECT_TRUE(IsLoopbackHost(h)) << h;
  }
  for (const char* h : {"", "localhost.", "localhost.example", "127.0.0", "127.0.0.1.1",
                        "127.0.0.256", "128.0.0.1", "0.0.0.0", "[::2]", "[0:0:0:0:0:0:0:1]x",
                        "127.0.0.1a", "127.0.0.0001", "10.0.0.1"}) {
    EXPECT_FALSE(IsLoopbackHost(h)) << h;
  }
}

TEST(OAuthUrl, PercentEncode) {
  EXPECT_EQ(PercentEncode("AZaz09-._~"), "AZaz09-._~");
  EXPECT_EQ(PercentEncode("a b+c&d=e/f?g#h%"), "a%20b%2Bc%26d%3De%2Ff%3Fg%23h%25");
  EXPECT_EQ(PercentEncode("\xc3\xa9\n"), "%C3%A9%0A");
  EXPECT_EQ(PercentEncode(""), "");
}

TEST(OAuthUrl, FormDecode) {
  EXPECT_EQ(FormDecode("a+b%20c%2B%2b"), std::string("a b c++"));
  EXPECT_EQ(FormDecode(""), std::string());
  EXPECT_EQ(FormDecode("%00"), std::string("\0", 1));
  EXPECT_EQ(FormDecode("%"), std::nullopt);
  EXPECT_EQ(FormDecode("%4"), std::nullopt);
  EXPECT_EQ(FormDecode("%g0"), std::nullopt);
  EXPECT_EQ(FormDecode("abc%"), std::nullopt);
}

TEST(OAuthUrl, AppendQuery) {
  EXPECT_EQ(AppendQuery("https://a.example/cb", {{"k", "v"}}), "https://a.example/cb?k=v");
  EXPECT_EQ(AppendQuery("https://a.example/cb?x=1", {{"k", "v"}, {"l", "w w"}}),
            "https://a.example/cb?x=1&k=v&l=w%20w");
  EXPECT_EQ(AppendQuery("https://a.example/cb?", {{"k", "v"}}), "https://a.example/cb?k=v");
  EXPECT_EQ(AppendQuery("https://a.example/cb#f", {{"k", "v"}}), "https://a.example/cb?k=v#f");
  EXPECT_EQ(AppendQuery("https://a.example/cb", {}), "https://a.example/cb?");
}

}  // namespace
}  // namespace rendezvous::oauth
