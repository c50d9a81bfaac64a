// Router matching and the percent-decoding it relies on.
#include <gtest/gtest.h>

#include "http/router.hpp"
#include "http/url_codec.hpp"

namespace rendezvous::core {
namespace {

Route R(Method m, std::string pattern, Listener l = Listener::kApi) {
  Route r;
  r.method = m;
  r.pattern = std::move(pattern);
  r.listener = l;
  r.handler = [](Request&) { return Response::Success(nullptr); };
  return r;
}

std::vector<std::string> Seg(const std::string& path) { return SplitPath(path).value(); }

TEST(HttpRouterTest, MatchesParamsAndPrefersExactSegments) {
  Router router;
  router.Add(R(Method::kGet, "/v2/bookings/:uid"));
  router.Add(R(Method::kGet, "/v2/bookings/search"));
  router.Add(R(Method::kPost, "/v2/bookings/:uid/cancel"));
  router.Add(R(Method::kGet, "/"));

  auto m = router.Find(Listener::kApi, Method::kGet, Seg("/v2/bookings/abc"));
  ASSERT_EQ(m.outcome, Router::Outcome::kFound);
  EXPECT_EQ(m.route->pattern, "/v2/bookings/:uid");
  EXPECT_EQ(m.params.at("uid"), "abc");

  auto exact = router.Find(Listener::kApi, Method::kGet, Seg("/v2/bookings/search"));
  ASSERT_EQ(exact.outcome, Router::Outcome::kFound);
  EXPECT_EQ(exact.route->pattern, "/v2/bookings/search");
  EXPECT_TRUE(exact.params.empty());

  auto cancel = router.Find(Listener::kApi, Method::kPost, Seg("/v2/bookings/search/cancel"));
  ASSERT_EQ(cancel.outcome, Router::Outcome::kFound);
  EXPECT_EQ(cancel.params.at("uid"), "search");

  auto root = router.Find(Listener::kApi, Method::kGet, Seg("/"));
  ASSERT_EQ(root.outcome, Router::Outcome::kFound);
  EXPECT_EQ(root.route->pattern, "/");
}

TEST(HttpRouterTest, NotFoundAndMethodNotAllowed) {
  Router router;
  router.Add(R(Method::kGet, "/v2/items/:id"));
  router.Add(R(Method::kDelete, "/v2/items/:id"));
  EXPECT_EQ(router.Find(Listener::kApi, Method::kGet, Seg("/v2/items")).outcome, Router::Outcome::kNotFound);
  EXPECT_EQ(router.Find(Listener::kApi, Method::kGet, Seg("/v2/items/1/x")).outcome, Router::Outcome::kNotFound);
  EXPECT_EQ(router.Find(Listener::kApi, Method::kGet, Seg("/v2/items/")).outcome, Router::Outcome::kNotFound);
  EXPECT_EQ(router.Find(Listener::kApp, Method::kGet, Seg("/v2/items/1")).outcome, Router::Outcome::kNotFound);
  auto m = router.Find(Listener::kApi, Method::kPost, Seg("/v2/items/1"));
  ASSERT_EQ(m.outcome, Router::Outcome::kMethodNotAllowed);
  EXPECT_EQ(m.allowed, (std::vector<Method>{Method::kGet, Method::kHead, Method::kDelete}));
}

TEST(HttpRouterTest, HeadFallsBackToGet) {
  Router router;
  router.Add(R(Method::kGet, "/healthz"));
  auto m = router.Find(Listener::kApi, Method::kHead, Seg("/healthz"));
  ASSERT_EQ(m.outcome, Router::Outcome::kFound);
  EXPECT_EQ(m.route->method, Method::kGet);
}

TEST(HttpRouterTest, BacktracksToTheRouteServingTheMethod) {
  Router router;
  router.Add(R(Method::kPost, "/v2/x/search"));
  router.Add(R(Method::kGet, "/v2/x/:id"));
  auto m = router.Find(Listener::kApi, Method::kGet, Seg("/v2/x/search"));
  ASSERT_EQ(m.outcome, Router::Outcome::kFound);
  EXPECT_EQ(m.params.at("id"), "search");
}

TEST(HttpRouterTest, DuplicatesAndBadPatternsThrow) {
  Router router;
  router.Add(R(Method::kGet, "/v2/a/:id"));
  EXPECT_THROW(router.Add(R(Method::kGet, "/v2/a/:other")), std::logic_error);
  EXPECT_NO_THROW(router.Add(R(Method::kPut, "/v2/a/:id")));
  EXPECT_NO_THROW(router.Add(R(Method::kGet, "/v2/a/:id", Listener::kApp)));
  EXPECT_THROW(router.Add(R(Method::kGet, "v2/no-slash")), std::logic_error);
  EXPECT_THROW(router.Add(R(Method::kGet, "/v2/:")), std::logic_error);
}

TEST(HttpUrlCodecTest, PercentDecoding) {
  EXPECT_EQ(PercentDecode("a%20b%2Fc", false).value(), "a b/c");
  EXPECT_EQ(PercentDecode("a+b", false).value(), "a+b");
  EXPECT_EQ(PercentDecode("a+b", true).value(), "a b");
  EXPECT_EQ(PercentDecode("%C3%a9", false).value(), "\xC3\xA9");
  EXPECT_FALSE(PercentDecode("%", false));
  EXPECT_FALSE(PercentDecode("%4", false));
  EXPECT_FALSE(PercentDecode("%zz", false));
  EXPECT_FALSE(PercentDecode("a%00", false));
  EXPECT_EQ(PercentEncode("/a b?c=d&é", true), "/a%20b%3Fc%3Dd%26%C3%A9");
}

TEST(HttpUrlCodecTest, SplitPathDecodesPerSegment) {
  EXPECT_EQ(SplitPath("/v2/a%2Fb/c").value(), (std::vector<std::string>{"v2", "a/b", "c"}));
  EXPECT_TRUE(SplitPath("/").value().empty());
  EXPECT_EQ(SplitPath("/a/").value(), (std::vector<std::string>{"a", ""}));
  EXPECT_FALSE(SplitPath("a/b"));
  EXPECT_FALSE(SplitPath(""));
  EXPECT_FALSE(SplitPath("/a/%G0"));
}

TEST(HttpUrlCodecTest, UrlEncodedPairsKeepOrder) {
  auto pairs = ParseUrlEncoded("b=2&a=1+1&flag&&c=%26").value();
  ASSERT_EQ(pairs.size(), 4u);
  EXPECT_EQ(pairs[0], (std::pair<std::string, std::string>{"b", "2"}));
  EXPECT_EQ(pairs[1], (std::pair<std::string, std::string>{"a", "1 1"}));
  EXPECT_EQ(pairs[2], (std::pair<std::string, std::string>{"flag", ""}));
  EXPECT_EQ(pairs[3], (std::pair<std::string, std::string>{"c", "&"}));
  EXPECT_FALSE(ParseUrlEncoded("a=%"));
}

}  // namespace
}  // namespace rendezvous::core
