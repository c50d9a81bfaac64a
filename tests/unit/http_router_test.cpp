// Router matching (the percent-decoding it relies on is rendezvous/url.hpp's, see net_address_test).
#include <gtest/gtest.h>

#include "http/api_description.hpp"
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

TEST(HttpRouterTest, RoutesListsOneListenerByPatternThenMethod) {
  Router router;
  router.Add(R(Method::kPost, "/v2/b"));
  router.Add(R(Method::kGet, "/v2/b"));
  router.Add(R(Method::kGet, "/v2/a/:id/x"));
  router.Add(R(Method::kGet, "/page", Listener::kApp));
  std::vector<std::string> listed;
  for (const Route* r : router.Routes(Listener::kApi))
    listed.push_back(std::string(MethodName(r->method)) + " " + r->pattern);
  EXPECT_EQ(listed, (std::vector<std::string>{"GET /v2/a/:id/x", "GET /v2/b", "POST /v2/b"}));
  ASSERT_EQ(router.Routes(Listener::kApp).size(), 1u);
  EXPECT_TRUE(router.Routes(Listener::kMetrics).empty());
}

// The API description's YAML reading: plain scalars typed as YAML 1.2's core schema says, quoted
// ones kept as text (an OpenAPI `version: "2"` must stay a string, `minimum: 0` a number).
TEST(ApiDescriptionTest, YamlScalarsAreTypedOnlyWhenPlain) {
  Json j = YamlToJson(
      "a: 1\nb: \"1\"\nc: true\nd: 'false'\ne: ~\nf: 2.5\ng: 2024-08-13\nh: [x, 3]\n"
      "\"200\": {k: v}\nanchor: &x {q: 1}\nalias: *x\n");
  EXPECT_EQ(j["a"], 1);
  EXPECT_EQ(j["b"], "1");
  EXPECT_EQ(j["c"], true);
  EXPECT_EQ(j["d"], "false");
  EXPECT_TRUE(j["e"].is_null());
  EXPECT_EQ(j["f"], 2.5);
  EXPECT_EQ(j["g"], "2024-08-13");
  EXPECT_EQ(j["h"], Json::parse(R"(["x",3])"));
  EXPECT_EQ(j["200"]["k"], "v");
  EXPECT_EQ(j["alias"], j["anchor"]);
  EXPECT_THROW(YamlToJson("a: [unclosed"), std::runtime_error);
  EXPECT_THROW(YamlToJson("a: *nowhere"), std::runtime_error);
}

TEST(ApiDescriptionTest, TheCompiledInDocumentConvertsWithTheAddressesWrittenIn) {
  ApiDescription d = OpenApiDescription({"https://api.example", "https://app.example"});
  Json doc = Json::parse(d.json);
  EXPECT_EQ(doc["openapi"], "3.1.0");
  EXPECT_EQ(doc["servers"][0]["url"], "https://api.example");
  EXPECT_EQ(doc["components"]["securitySchemes"]["OAuth2"]["flows"]["authorizationCode"]["authorizationUrl"],
            "https://app.example/auth/oauth2/authorize");
  EXPECT_EQ(d.json.find("${"), std::string::npos);
  EXPECT_EQ(d.etag.front(), '"');
  EXPECT_NE(OpenApiDescription({"https://other.example", ""}).etag, d.etag);
}

}  // namespace
}  // namespace rendezvous::core
