// Router matching (the percent-decoding it relies on is rendezvous/url.hpp's, see net_address_test).
#include <gtest/gtest.h>

#include "http/router.hpp"
#include "rendezvous/url.hpp"

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

std::vector<std::string> Seg(const std::string& path) { return net::SplitPath(path).value(); }

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

}  // namespace
}  // namespace rendezvous::core
