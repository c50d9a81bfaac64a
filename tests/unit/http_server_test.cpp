// The HTTP layer over real sockets: envelopes, limits, auth, keep-alive, timeouts, worker pool.
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include <curl/curl.h>
#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "http_test_server.hpp"
#include "rendezvous/database.hpp"

namespace rendezvous::core {
namespace {

using namespace std::chrono_literals;

class HttpServerTest : public HttpServerFixture {
 protected:
  static ServerOptions TestOptions() { return LoopbackOptions(1024); }

  void StartServer(ServerOptions options = TestOptions()) {
    Create(std::move(options));
    AddRoutes();
    server_->SetBearerAuthenticator([this](std::string_view token) -> std::optional<Principal> {
      if (token == "down") throw DatabaseUnavailable("connection refused");
      Principal p;
      if (token == "key") {
        p.kind = kApiKey;
        p.all_scopes = true;
        return p;
      }
      if (token == "oauth-read") {
        p.kind = kOAuthToken;
        p.scopes = {"BOOKING_READ"};
        return p;
      }
      ++bearer_calls_;
      if (token == "bound") return BoundPrincipal();
      return std::nullopt;
    });
    // The resolver of tokens sent with a proof: "bound" is bound to the key "jkt-1"; the proof
    // "good" is signed by that key for GET /v2/me, "other-key" by another, "replayed" was seen.
    server_->SetDpopAuthenticator([this](std::string_view token, std::string_view proof,
                                         std::string_view method, std::string_view path) {
      ++dpop_calls_;
      DpopResolution out;
      if (token != "bound") return out;
      out.principal = BoundPrincipal();
      if (method != "GET" || path != "/v2/me") {
        out.proof_error = "the proof's htu does not match the request URL";
      } else if (proof == "good") {
        out.jkt = "jkt-1";
      } else if (proof == "other-key") {
        out.jkt = "jkt-2";
      } else {
        out.proof_error = "the proof's jti was used before";
      }
      return out;
    });
    Listen();
    ASSERT_NE(port_, 0);
    ASSERT_NE(app_port_, 0);
  }

  static Principal BoundPrincipal() {
    Principal p;
    p.kind = kOAuthToken;
    p.scopes = {"BOOKING_READ"};
    p.dpop_jkt = "jkt-1";
    return p;
  }

  std::atomic<int> bearer_calls_{0};  // of tokens other than "key", "oauth-read" and "down"
  std::atomic<int> dpop_calls_{0};

  void AddRoutes() {
    server_->AddRoute(MakeRoute(Method::kGet, "/v2/echo/:id", [](Request& r) {
      Json q = Json::object();
      for (const auto& [k, v] : r.query) q[k] = v;
      return Response::Success({{"id", r.params.at("id")}, {"path", r.path}, {"query", q},
                                {"route", r.route}, {"version", r.api_version}});
    }));
    server_->AddRoute(MakeRoute(Method::kGet, "/v2/echo/special", [](Request&) {
      return Response::Success("special");
    }));
    server_->AddRoute(MakeRoute(Method::kPost, "/v2/json", [](Request& r) {
      auto body = r.JsonBody();
      if (!body.ok()) return Response::FromStatus(body.status());
      return Response::Success(*body, 201);
    }));
    server_->AddRoute(MakeRoute(Method::kPost, "/v2/form", [](Request& r) {
      auto form = r.FormBody();
      if (!form.ok()) return Response::FromStatus(form.status());
      return Response::Success(Json(*form));
    }));
    server_->AddRoute(MakeRoute(Method::kGet, "/v2/db-down", [](Request&) -> Response {
      throw DatabaseUnavailable("db host 10.1.2.3 refused");
    }));
    server_->AddRoute(MakeRoute(Method::kGet, "/v2/boom", [](Request&) -> Response {
      throw std::runtime_error("secret-detail-xyz");
    }));
    server_->AddRoute(MakeRoute(Method::kGet, "/v2/headers", [](Request&) {
      Response r = Response::Success(true);
      r.With("X-Custom", "custom-value")
          .With("Set-Cookie", "a=1; Path=/; HttpOnly")
          .With("Set-Cookie", "b=2; Path=/; SameSite=Lax")
          .With("Cache-Control", "no-store")
          .With("X-Bad", "evil\r\nInjected: yes");
      return r;
    }));
    server_->AddRoute(MakeRoute(Method::kGet, "/v2/me", [](Request& r) {
      return Response::Success({{"kind", static_cast<int>(r.principal->kind)}});
    }, RouteAuth::Bearer()));
    server_->AddRoute(MakeRoute(Method::kGet, "/v2/bookings", [](Request&) {
      return Response::Success(Json::array());
    }, RouteAuth::Bearer("BOOKING_READ")));
    server_->AddRoute(MakeRoute(Method::kPost, "/v2/bookings", [](Request&) {
      return Response::Success(Json::object(), 201);
    }, RouteAuth::Bearer("BOOKING_WRITE")));
    server_->AddRoute(MakeRoute(Method::kGet, "/v2/keys-only", [](Request&) {
      return Response::Success(true);
    }, RouteAuth::Bearer("", kApiKey)));
    // A public route that looks at a credential when one is sent.
    server_->AddRoute(MakeRoute(
        Method::kGet, "/v2/optional",
        [](Request& r) {
          return Response::Success(r.principal ? Json(static_cast<int>(r.principal->kind)) : Json(nullptr));
        },
        RouteAuth::OptionalBearer(kApiKey)));
    server_->AddRoute(MakeRoute(Method::kGet, "/v2/slow", [this](Request&) {
      entered_.Open();
      gate_.Wait();
      return Response::Success("slow");
    }));
    // The nice value of the thread a handler runs on.
    server_->AddRoute(MakeRoute(Method::kGet, "/v2/thread-nice", [](Request&) {
      return Response::Success(ThreadNice());
    }, RouteAuth::Bearer()));
    // No credential, limited per client address (here with the limit off): anonymous traffic.
    Route anonymous = MakeRoute(Method::kGet, "/v2/anonymous-slow", [this](Request&) {
      entered_.Open();
      gate_.Wait();
      return Response::Success(ThreadNice());
    });
    server_->AddRoute(std::move(anonymous).LimitedPerAddress({"anonymous", 0, 1}));
    server_->AddRoute(MakeRoute(Method::kGet, "/settings", [](Request&) {
      return Response::Html(200, "<p>settings</p>");
    }, RouteAuth::Session(), Listener::kApp));
  }

  static int ThreadNice() { return getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid))); }

  // Opens the slow handler's gate once the server stopped taking requests (503 or refused).
  std::future<void> ReleaseSlowOnceDraining() {
    return std::async(std::launch::async, [this] {
      auto deadline = rdv_test::Clock::now() + 5s;
      while (rdv_test::Clock::now() < deadline) {
        auto r = Fetch(port_, "GET", "/healthz");
        if (!r || r->status == 503) break;
      }
      gate_.Open();
    });
  }
};

TEST_F(HttpServerTest, HealthzAndReadyz) {
  StartServer();
  auto r = Fetch(port_, "GET", "/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->Json(), Json({{"status", "ok"}}));
  EXPECT_EQ(r->Header("content-type"), "application/json");
  auto ready = Fetch(port_, "GET", "/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);
}

TEST_F(HttpServerTest, ReadinessCheckFailingAnswers503) {
  server_ = nullptr;
  std::atomic<bool> ready{false};
  Create(TestOptions());
  server_->SetReadinessCheck([&] { return ready.load(); });
  server_->Start();
  auto r = Fetch(server_->api_port(), "GET", "/readyz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  ready = true;
  r = Fetch(server_->api_port(), "GET", "/readyz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->Json(), Json({{"status", "ok"}}));
}

TEST_F(HttpServerTest, RouteParamsAreDecodedAndExactSegmentsWin) {
  StartServer();
  auto r = Fetch(port_, "GET", "/v2/echo/a%20b%2Fc?x=1+2&y=%C3%A9&empty");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = r->Json();
  EXPECT_EQ(j["status"], "success");
  EXPECT_EQ(j["data"]["id"], "a b/c");
  EXPECT_EQ(j["data"]["route"], "/v2/echo/:id");
  EXPECT_EQ(j["data"]["query"]["x"], "1 2");
  EXPECT_EQ(j["data"]["query"]["y"], "\xC3\xA9");
  EXPECT_EQ(j["data"]["query"]["empty"], "");

  auto special = Fetch(port_, "GET", "/v2/echo/special");
  ASSERT_TRUE(special);
  EXPECT_EQ(special->Json()["data"], "special");
}

TEST_F(HttpServerTest, BadEscapeInPathOrQueryIs400) {
  StartServer();
  for (const char* target : {"/v2/echo/%zz", "/v2/echo/%4", "/v2/echo/a%00b", "/v2/echo/x?q=%G1"}) {
    auto r = Fetch(port_, "GET", target);
    ASSERT_TRUE(r) << target;
    EXPECT_EQ(r->status, 400) << target;
    EXPECT_EQ(r->Json()["error"]["code"], "validation_error") << target;
  }
}

TEST_F(HttpServerTest, UnknownPathIs404AndWrongMethodIs405WithAllow) {
  StartServer();
  auto r = Fetch(port_, "GET", "/v2/nope");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  auto j = r->Json();
  EXPECT_EQ(j["status"], "error");
  EXPECT_EQ(j["error"]["code"], "not_found");
  EXPECT_TRUE(j["error"]["message"].is_string());
  EXPECT_FALSE(j["error"].contains("details"));

  auto app = Fetch(app_port_, "GET", "/v2/nope");
  ASSERT_TRUE(app);
  ExpectEnvelope(*app, 404, "not_found");

  auto m = Fetch(port_, "DELETE", "/v2/bookings");
  ASSERT_TRUE(m);
  ExpectEnvelope(*m, 405, "method_not_allowed");
  EXPECT_EQ(m->Header("allow"), "GET, HEAD, POST");

  EXPECT_EQ(StatusOf(Fetch(port_, "TRACE", "/v2/bookings")), 405);
}

TEST_F(HttpServerTest, HeadIsServedByGetWithoutBody) {
  StartServer();
  Conn c(port_);
  ASSERT_TRUE(c.Send(RequestText("HEAD", "/healthz")));
  auto r = c.Read(/*head_request=*/true);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "");
  // The connection is still usable: no stray body bytes were sent.
  ASSERT_TRUE(c.Send(RequestText("GET", "/healthz")));
  auto again = c.Read();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
  EXPECT_EQ(again->Json()["status"], "ok");
}

TEST_F(HttpServerTest, JsonBodyChecks) {
  StartServer();
  auto ok = Fetch(port_, "POST", "/v2/json", {"Content-Type: application/json; charset=utf-8"}, R"({"a":[1,2]})");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 201);
  EXPECT_EQ(ok->Json()["data"]["a"][1], 2);

  auto wrong_type = Fetch(port_, "POST", "/v2/json", {"Content-Type: text/plain"}, R"({"a":1})");
  ASSERT_TRUE(wrong_type);
  ExpectEnvelope(*wrong_type, 415, "unsupported_media_type");

  auto malformed = Fetch(port_, "POST", "/v2/json", {"Content-Type: application/json"}, R"({"a":)");
  ASSERT_TRUE(malformed);
  ExpectEnvelope(*malformed, 400, "validation_error");

  EXPECT_EQ(StatusOf(Fetch(port_, "POST", "/v2/json", {"Content-Type: application/json"}, "[1]")), 400);

  EXPECT_EQ(StatusOf(Fetch(port_, "POST", "/v2/json", {"Content-Type: application/json"},
                           std::string(500, '[') + std::string(500, ']'))),
            400);
}

TEST_F(HttpServerTest, FormBodyIsDecoded) {
  StartServer();
  auto r = Fetch(port_, "POST", "/v2/form", {"Content-Type: application/x-www-form-urlencoded"},
                 "grant_type=authorization_code&code=a%2Bb+c&redirect_uri=http%3A%2F%2Fx%2Fcb");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto d = r->Json()["data"];
  EXPECT_EQ(d["grant_type"], "authorization_code");
  EXPECT_EQ(d["code"], "a+b c");
  EXPECT_EQ(d["redirect_uri"], "http://x/cb");
  auto json = Fetch(port_, "POST", "/v2/form", {"Content-Type: application/json"}, "{}");
  ASSERT_TRUE(json);
  EXPECT_EQ(json->status, 415);
}

TEST_F(HttpServerTest, BodyOverLimitIs413) {
  StartServer();
  auto r = Fetch(port_, "POST", "/v2/json", {"Content-Type: application/json"},
                 "{\"a\":\"" + std::string(2000, 'x') + "\"}");
  ASSERT_TRUE(r);
  ExpectEnvelope(*r, 413, "payload_too_large");

  // Far above the limit: still the JSON 413, sent before the body is read.
  Conn c(port_);
  std::string big(200 * 1024, 'x');
  c.Send(RequestText("POST", "/v2/json", {"Content-Type: application/json"}, big));
  auto huge = c.Read();
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge->status, 413);
}

TEST_F(HttpServerTest, MissingOrInvalidBearerIs401WithChallenge) {
  StartServer();
  // No credentials or another scheme: the bare challenge; a token that names nothing: invalid_token.
  const std::pair<std::vector<std::string>, std::string> refused[] = {
      {{}, "Bearer"},
      {{"Authorization: Basic Zm9vOmJhcg=="}, "Bearer"},
      {{"Authorization: Bearer nope"}, "Bearer error=\"invalid_token\""},
  };
  for (const auto& [headers, challenge] : refused) {
    auto r = Fetch(port_, "GET", "/v2/me", headers);
    ASSERT_TRUE(r) << challenge;
    ExpectEnvelope(*r, 401, "unauthorized");
    EXPECT_EQ(r->Header("www-authenticate"), challenge);
  }

  auto ok = Fetch(port_, "GET", "/v2/me", {"Authorization: bearer key"});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->Json()["data"]["kind"], static_cast<int>(kApiKey));

  auto wrong_kind = Fetch(port_, "GET", "/v2/keys-only", {"Authorization: Bearer oauth-read"});
  ASSERT_TRUE(wrong_kind);
  EXPECT_EQ(wrong_kind->status, 401);
  EXPECT_EQ(wrong_kind->Header("www-authenticate"), "Bearer error=\"invalid_token\"");
  EXPECT_NE(wrong_kind->Json()["error"]["message"].get<std::string>().find("API keys"), std::string::npos);
}

// An optional credential: none lets the request in without a principal; one sent is checked as a
// required one is (an invalid one or one of another kind is 401) and sets the principal.
TEST_F(HttpServerTest, AnOptionalBearerIsCheckedOnlyWhenSent) {
  StartServer();
  auto none = Fetch(port_, "GET", "/v2/optional", {});
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 200) << none->body;
  EXPECT_TRUE(none->Json()["data"].is_null()) << none->body;
  auto key = Fetch(port_, "GET", "/v2/optional", {"Authorization: Bearer key"});
  ASSERT_TRUE(key);
  EXPECT_EQ(key->status, 200) << key->body;
  EXPECT_EQ(key->Json()["data"], static_cast<int>(kApiKey));
  for (const char* header :
       {"Authorization: Bearer nope", "Authorization: Bearer oauth-read", "Authorization: Basic eA=="}) {
    auto refused = Fetch(port_, "GET", "/v2/optional", {header});
    ASSERT_TRUE(refused) << header;
    ExpectEnvelope(*refused, 401, "unauthorized");
    EXPECT_NE(refused->Header("www-authenticate"), "") << header;
  }
}

// A token sent as DPoP with a proof is resolved by the DPoP resolver alone (one call for the
// token and the proof); the bearer resolvers are asked only for a token it does not know.
TEST_F(HttpServerTest, ADpopTokenIsResolvedWithItsProofInOneCall) {
  StartServer();
  auto ok = Fetch(port_, "GET", "/v2/me", {"Authorization: DPoP bound", "DPoP: good"});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(dpop_calls_.load(), 1);
  EXPECT_EQ(bearer_calls_.load(), 0);

  const std::tuple<std::vector<std::string>, std::string, std::string> refused[] = {
      {{"Authorization: DPoP bound", "DPoP: replayed"}, "DPoP error=\"invalid_dpop_proof\"", "used before"},
      {{"Authorization: DPoP bound", "DPoP: other-key"},
       "DPoP error=\"invalid_dpop_proof\"",
       "not signed by the key"},
      {{"Authorization: DPoP bound"}, "DPoP error=\"invalid_dpop_proof\"", "proof header is required"},
      {{"Authorization: Bearer bound", "DPoP: good"},
       "DPoP error=\"invalid_token\"",
       "send it as Authorization: DPoP"},
      {{"Authorization: DPoP key", "DPoP: good"}, "DPoP error=\"invalid_token\"", "not DPoP-bound"},
      {{"Authorization: DPoP nope", "DPoP: good"},
       "DPoP error=\"invalid_token\"",
       "invalid, expired or revoked"},
  };
  for (const auto& [headers, challenge, message] : refused) {
    auto r = Fetch(port_, "GET", "/v2/me", headers);
    ASSERT_TRUE(r) << message;
    ExpectEnvelope(*r, 401, "unauthorized");
    EXPECT_EQ(r->Header("www-authenticate"), challenge) << message;
    EXPECT_NE(r->Json()["error"]["message"].get<std::string>().find(message), std::string::npos) << r->body;
  }
  // The proof names the request: another path is refused by the resolver.
  auto other_path = Fetch(port_, "GET", "/v2/bookings", {"Authorization: DPoP bound", "DPoP: good"});
  ASSERT_TRUE(other_path);
  EXPECT_EQ(other_path->status, 401);
  EXPECT_EQ(other_path->Header("www-authenticate"), "DPoP error=\"invalid_dpop_proof\"");
}

TEST_F(HttpServerTest, MissingScopeIs403InsufficientScope) {
  StartServer();
  auto read = Fetch(port_, "GET", "/v2/bookings", {"Authorization: Bearer oauth-read"});
  ASSERT_TRUE(read);
  EXPECT_EQ(read->status, 200);

  auto write = Fetch(port_, "POST", "/v2/bookings",
                     {"Authorization: Bearer oauth-read", "Content-Type: application/json"}, "{}");
  ASSERT_TRUE(write);
  ExpectEnvelope(*write, 403, "insufficient_scope");
  EXPECT_NE(write->Json()["error"]["message"].get<std::string>().find("BOOKING_WRITE"), std::string::npos);
  EXPECT_EQ(write->Header("www-authenticate"), "Bearer error=\"insufficient_scope\", scope=\"BOOKING_WRITE\"");

  EXPECT_EQ(StatusOf(Fetch(port_, "POST", "/v2/bookings",
                           {"Authorization: Bearer key", "Content-Type: application/json"}, "{}")),
            201);
}

TEST_F(HttpServerTest, DatabaseUnavailableIs503AndOtherExceptionsAre500WithoutDetail) {
  StartServer();
  auto down = Fetch(port_, "GET", "/v2/db-down");
  ASSERT_TRUE(down);
  ExpectEnvelope(*down, 503, "service_unavailable");
  EXPECT_EQ(down->body.find("10.1.2.3"), std::string::npos);

  EXPECT_EQ(StatusOf(Fetch(port_, "GET", "/v2/me", {"Authorization: Bearer down"})), 503);

  auto boom = Fetch(port_, "GET", "/v2/boom", {"X-Request-Id: boom-req-1"});
  ASSERT_TRUE(boom);
  EXPECT_EQ(boom->status, 500);
  EXPECT_EQ(boom->Json()["error"]["code"], "internal_error");
  EXPECT_EQ(boom->body.find("secret-detail-xyz"), std::string::npos);
  EXPECT_EQ(boom->Header("x-request-id"), "boom-req-1");
  // The detail goes to the log, with the request id.
  bool logged = false;
  for (const auto& line : logger_.Lines())
    if (line.value("request_id", "") == "boom-req-1" && line.value("error", "") == "secret-detail-xyz") logged = true;
  EXPECT_TRUE(logged) << logger_.All();
}

TEST_F(HttpServerTest, CustomHeadersAndSeveralSetCookieAreSent) {
  StartServer();
  auto r = Fetch(port_, "GET", "/v2/headers");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->Header("x-custom"), "custom-value");
  EXPECT_EQ(r->Header("cache-control"), "no-store");
  ASSERT_EQ(r->Count("set-cookie"), 2u);
  auto range = r->headers.equal_range("set-cookie");
  std::vector<std::string> cookies;
  for (auto it = range.first; it != range.second; ++it) cookies.push_back(it->second);
  EXPECT_EQ(cookies[0], "a=1; Path=/; HttpOnly");
  EXPECT_EQ(cookies[1], "b=2; Path=/; SameSite=Lax");
  EXPECT_EQ(r->Count("x-bad"), 0u);
  EXPECT_EQ(r->Count("injected"), 0u);
}

TEST_F(HttpServerTest, RequestIdIsEchoedOrGenerated) {
  StartServer();
  auto given = Fetch(port_, "GET", "/healthz", {"X-Request-Id: abc-123_x.y"});
  ASSERT_TRUE(given);
  EXPECT_EQ(given->Header("x-request-id"), "abc-123_x.y");
  auto bad = Fetch(port_, "GET", "/healthz", {"X-Request-Id: has space!"});
  ASSERT_TRUE(bad);
  std::string id = bad->Header("x-request-id");
  EXPECT_EQ(id.size(), 16u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
  auto none = Fetch(port_, "GET", "/healthz");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->Header("x-request-id").size(), 16u);
  EXPECT_NE(none->Header("x-request-id"), id);
}

TEST_F(HttpServerTest, VersionHeaderDefaultsToNewestAndRejectsUnknown) {
  StartServer();
  auto none = Fetch(port_, "GET", "/v2/echo/1");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->Json()["data"]["version"], "2024-09-04");
  auto given = Fetch(port_, "GET", "/v2/echo/1", {"service-api-version: 2024-06-14"});
  ASSERT_TRUE(given);
  EXPECT_EQ(given->Json()["data"]["version"], "2024-06-14");
  auto bad = Fetch(port_, "GET", "/v2/echo/1", {"Service-Api-Version: 2023-01-01"});
  ASSERT_TRUE(bad);
  ExpectEnvelope(*bad, 400, "validation_error");
  EXPECT_NE(bad->Json()["error"]["message"].get<std::string>().find("2024-08-13"), std::string::npos);
}

TEST_F(HttpServerTest, SessionRouteRedirectsToLogin) {
  StartServer();
  auto r = Fetch(app_port_, "GET", "/settings?tab=oauth");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 302);
  EXPECT_EQ(r->Header("location"), "/auth/login?next=/settings%3Ftab%3Doauth");
}

TEST_F(HttpServerTest, SessionRouteServedWithSession) {
  Create(TestOptions());
  AddRoutes();
  server_->SetSessionChecker([](const Request& r) { return r.Cookie("sid") == std::optional<std::string>("good"); });
  server_->Start();
  auto r = Fetch(server_->app_port(), "GET", "/settings", {"Cookie: theme=dark; sid=good"});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->Header("content-type"), "text/html; charset=utf-8");
  EXPECT_EQ(r->body, "<p>settings</p>");
}

TEST_F(HttpServerTest, Http11ConnectionIsReusedWithoutConnectionHeader) {
  StartServer();
  Conn c(port_);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(c.Send(RequestText("GET", "/v2/echo/" + std::to_string(i)))) << i;
    auto r = c.Read();
    ASSERT_TRUE(r) << i;
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->Header("connection"), "keep-alive");
  }
  // Connection: close is honoured.
  ASSERT_TRUE(c.Send(RequestText("GET", "/healthz", {"Connection: close"})));
  auto last = c.Read();
  ASSERT_TRUE(last);
  EXPECT_EQ(last->Header("connection"), "close");
}

size_t DiscardBody(char*, size_t size, size_t n, void*) { return size * n; }

TEST_F(HttpServerTest, CurlReusesOneConnection) {
  StartServer();
  CURL* curl = curl_easy_init();
  ASSERT_NE(curl, nullptr);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, DiscardBody);
  long total_connects = 0;
  for (int i = 0; i < 5; ++i) {
    std::string url = "http://127.0.0.1:" + std::to_string(port_) + (i % 2 ? "/healthz" : "/v2/echo/x");
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    ASSERT_EQ(curl_easy_perform(curl), CURLE_OK);
    long code = 0, connects = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &connects);
    EXPECT_EQ(code, 200);
    total_connects += connects;
  }
  curl_easy_cleanup(curl);
  EXPECT_EQ(total_connects, 1);
}

TEST_F(HttpServerTest, Http10KeepAliveOnlyWhenAsked) {
  StartServer();
  Conn c(port_);
  ASSERT_TRUE(c.Send("GET /healthz HTTP/1.0\r\n\r\n"));
  auto r = c.Read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->Header("connection"), "close");
  Conn k(port_);
  ASSERT_TRUE(k.Send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  auto kr = k.Read();
  ASSERT_TRUE(kr);
  EXPECT_EQ(kr->Header("connection"), "keep-alive");
}

TEST_F(HttpServerTest, IdleConnectionIsClosedAfterIdleTimeout) {
  ServerOptions o = TestOptions();
  o.idle_timeout = 1s;
  StartServer(o);
  Conn c(port_);
  ASSERT_TRUE(c.Send(RequestText("GET", "/healthz")));
  ASSERT_TRUE(c.Read());
  auto start = rdv_test::Clock::now();
  EXPECT_TRUE(c.AwaitClose(8s));
  EXPECT_GE(rdv_test::Clock::now() - start, 500ms);
}

TEST_F(HttpServerTest, SlowHandlerDoesNotStallHealthzOnTheSameIoThread) {
  StartServer();  // io_threads = 1
  auto slow = std::async(std::launch::async, [this] { return Fetch(port_, "GET", "/v2/slow"); });
  ASSERT_TRUE(entered_.Wait());
  EXPECT_EQ(StatusOf(Fetch(port_, "GET", "/healthz")), 200);
  EXPECT_EQ(StatusOf(Fetch(port_, "GET", "/v2/echo/1")), 200);  // another worker route, second worker
  gate_.Open();
  EXPECT_EQ(StatusOf(slow.get()), 200);
}

TEST_F(HttpServerTest, FullWorkerQueueAnswers503) {
  ServerOptions o = TestOptions();
  o.worker_threads = 1;
  o.worker_queue_limit = 1;
  StartServer(o);
  auto slow = std::async(std::launch::async, [this] { return Fetch(port_, "GET", "/v2/slow"); });
  ASSERT_TRUE(entered_.Wait());
  // The worker is busy: one request fits in the queue, the next is refused at once.
  Conn queued(port_);
  ASSERT_TRUE(queued.Send(RequestText("GET", "/v2/echo/q")));
  std::optional<rdv_test::Reply> refused;
  auto deadline = rdv_test::Clock::now() + 5s;
  while (rdv_test::Clock::now() < deadline) {
    refused = Fetch(port_, "GET", "/v2/echo/r");
    if (refused && refused->status == 503) break;
  }
  ASSERT_TRUE(refused);
  ExpectEnvelope(*refused, 503, "service_unavailable");
  gate_.Open();
  auto q = queued.Read();
  ASSERT_TRUE(q);
  EXPECT_EQ(q->status, 200);
  ASSERT_TRUE(slow.get());
}

TEST_F(HttpServerTest, AnonymousRoutesRunOnTheirOwnPoolAtALowerPriority) {
  ServerOptions o = TestOptions();
  o.worker_threads = 1;
  o.public_worker_threads = 1;
  o.public_worker_nice = 7;
  StartServer(o);
  auto slow = std::async(std::launch::async, [this] { return Fetch(port_, "GET", "/v2/anonymous-slow"); });
  ASSERT_TRUE(entered_.Wait());
  // The public pool's one thread is held and another anonymous request waits behind it; calls
  // with a credential (and public routes not marked anonymous) are answered meanwhile.
  Conn queued(port_);
  ASSERT_TRUE(queued.Send(RequestText("GET", "/v2/anonymous-slow")));
  auto api = Fetch(port_, "GET", "/v2/thread-nice", {"Authorization: Bearer key"});
  ASSERT_TRUE(api);
  ASSERT_EQ(api->status, 200) << api->body;
  const int api_nice = Json::parse(api->body)["data"].get<int>();
  EXPECT_EQ(StatusOf(Fetch(port_, "GET", "/v2/echo/1")), 200);
  gate_.Open();
  auto first = slow.get();
  auto second = queued.Read();
  ASSERT_TRUE(first);
  ASSERT_TRUE(second);
  EXPECT_EQ(first->status, 200);
  EXPECT_EQ(second->status, 200);
  // Their thread's CPU priority is 7 below the others' (nice is per thread on Linux).
  EXPECT_EQ(Json::parse(first->body)["data"].get<int>(), std::min(19, api_nice + 7));
  EXPECT_EQ(Json::parse(second->body)["data"].get<int>(), std::min(19, api_nice + 7));
}

TEST_F(HttpServerTest, ThousandIdleConnectionsDoNotBlockOthersAndAreClosedWhenIdle) {
  rlimit lim{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &lim), 0);
  if (lim.rlim_cur < 4096) {
    lim.rlim_cur = std::min<rlim_t>(lim.rlim_max, 4096);
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lim), 0);
  }
  ASSERT_GE(lim.rlim_cur, 2200u) << "cannot raise RLIMIT_NOFILE";
  ServerOptions o = TestOptions();
  o.idle_timeout = 2s;
  o.header_timeout = 2s;
  StartServer(o);
  std::vector<std::unique_ptr<Conn>> idle;
  for (int i = 0; i < 1000; ++i) {
    auto c = std::make_unique<Conn>(port_);
    ASSERT_TRUE(c->ok()) << i;
    idle.push_back(std::move(c));
  }
  // Some only connected, some sent half a request, some finished one request and stayed.
  for (size_t i = 0; i < idle.size(); i += 3) ASSERT_TRUE(idle[i]->Send("GET /healthz HTTP/1.1\r\n"));
  for (size_t i = 1; i < idle.size(); i += 3) ASSERT_TRUE(idle[i]->Send(RequestText("GET", "/healthz")));
  for (size_t i = 1; i < idle.size(); i += 3) ASSERT_TRUE(idle[i]->Read()) << i;

  EXPECT_EQ(StatusOf(Fetch(port_, "GET", "/healthz")), 200);
  EXPECT_EQ(StatusOf(Fetch(port_, "GET", "/v2/echo/1")), 200);

  // Every one of them is closed by the server once idle past the timeouts.
  auto deadline = rdv_test::Clock::now() + 15s;
  size_t closed = 0;
  for (size_t i = 0; i < idle.size(); ++i) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - rdv_test::Clock::now());
    if (idle[i]->AwaitClose(std::max(left, std::chrono::milliseconds(1)))) ++closed;
  }
  EXPECT_EQ(closed, idle.size());
}

TEST_F(HttpServerTest, AccessLogHasNoQueryHeadersOrBody) {
  StartServer();
  auto r = Fetch(port_, "POST", "/v2/json", {"Content-Type: application/json", "Authorization: Bearer tok-secret"},
                 R"({"password":"body-secret"})");
  ASSERT_TRUE(r);
  auto q = Fetch(port_, "GET", "/v2/echo/7?code=query-secret");
  ASSERT_TRUE(q);
  // The access line is written just after the response goes out: wait for it.
  auto has_line = [this] {
    for (const auto& line : logger_.Lines())
      if (line.value("msg", "") == "request" && line.value("path", "") == "/v2/echo/7") return true;
    return false;
  };
  auto deadline = rdv_test::Clock::now() + 5s;
  while (!has_line() && rdv_test::Clock::now() < deadline) std::this_thread::yield();
  std::string all = logger_.All();
  EXPECT_EQ(all.find("tok-secret"), std::string::npos);
  EXPECT_EQ(all.find("body-secret"), std::string::npos);
  EXPECT_EQ(all.find("query-secret"), std::string::npos);
  bool found = false;
  for (const auto& line : logger_.Lines()) {
    if (line.value("msg", "") != "request" || line.value("path", "") != "/v2/echo/7") continue;
    found = true;
    EXPECT_EQ(line.value("route", ""), "/v2/echo/:id");
    EXPECT_EQ(line.value("method", ""), "GET");
    EXPECT_EQ(line.value("status", 0), 200);
    EXPECT_EQ(line.value("remote_ip", ""), "127.0.0.1");
    EXPECT_EQ(line.value("request_id", "").size(), 16u);
    EXPECT_TRUE(line.contains("duration_ms"));
  }
  EXPECT_TRUE(found) << all;
}

TEST_F(HttpServerTest, DuplicateRouteThrows) {
  Create(TestOptions());
  server_->AddRoute(MakeRoute(Method::kGet, "/v2/x/:id", [](Request&) { return Response::Success(1); }));
  EXPECT_THROW(server_->AddRoute(MakeRoute(Method::kGet, "/v2/x/:other", [](Request&) { return Response::Success(1); })),
               std::logic_error);
  EXPECT_THROW(server_->AddRoute(MakeRoute(Method::kGet, "/healthz", [](Request&) { return Response::Success(1); })),
               std::logic_error);
  // Same pattern on the other listener is fine.
  server_->AddRoute(MakeRoute(Method::kGet, "/v2/x/:id", [](Request&) { return Response::Success(1); },
                              RouteAuth::Public(), Listener::kApp));
}

TEST_F(HttpServerTest, BindFailureNamesTheAddress) {
  StartServer();
  ServerOptions o = TestOptions();
  o.api_listen = "127.0.0.1:" + std::to_string(port_);
  prometheus::Registry other_registry;
  HttpServer second(o, logger_, other_registry);
  try {
    second.Start();
    ADD_FAILURE() << "second bind succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(o.api_listen), std::string::npos) << e.what();
  }
}

TEST_F(HttpServerTest, ShutdownWaitsForInFlightAndIsIdempotent) {
  StartServer();
  auto slow = std::async(std::launch::async, [this] { return Fetch(port_, "GET", "/v2/slow"); });
  ASSERT_TRUE(entered_.Wait());
  // Release the handler once the server is draining (new requests then answer 503).
  auto releaser = ReleaseSlowOnceDraining();
  server_->Shutdown(5s);
  EXPECT_EQ(StatusOf(slow.get()), 200);
  server_->Shutdown(1s);
  EXPECT_FALSE(Fetch(port_, "GET", "/healthz"));
}

TEST_F(HttpServerTest, ShutdownWithGraceExpiredStillClosesEverything) {
  StartServer();
  auto slow = std::async(std::launch::async, [this] { return Fetch(port_, "GET", "/v2/slow"); });
  ASSERT_TRUE(entered_.Wait());
  // Released only once the server stopped answering: the grace has run out by then.
  auto releaser = ReleaseSlowOnceDraining();
  server_->Shutdown(10ms);
  // The listener is gone and the held connection was ended: the slow client is not left hanging
  // (whatever it got, it got it before its own 10 s read deadline) and nothing answers any more.
  auto waited = std::async(std::launch::async, [&] { return slow.get(); });
  EXPECT_EQ(waited.wait_for(8s), std::future_status::ready);
  auto late = waited.get();
  if (late) {
    EXPECT_EQ(late->status, 200);
  }
  EXPECT_FALSE(Fetch(port_, "GET", "/healthz"));
  server_->Shutdown(10ms);  // idempotent
  EXPECT_FALSE(Fetch(port_, "GET", "/healthz"));
}

}  // namespace
}  // namespace rendezvous::core
