// The core platform end to end: the real binary against the test MariaDB, on loopback.
#include <signal.h>

#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "api_user_fixture.hpp"
#include "eventually.hpp"
#include "http_client.hpp"
#include "raw_http.hpp"
#include "test_server.hpp"

namespace rendezvous::testing {
namespace {

std::string HelloPlugin(const std::string& extra = "") {
  return "hello:\n  path: \"" + TestPluginDir() + "/rendezvous_hello.so\"\n" + extra;
}

class CoreServer : public ApiUserTest {
 protected:
  void SetUp() override {
    TestServerOptions o;
    o.plugins = HelloPlugin();
    StartServer(o, "Ada Lovelace");
  }
  std::vector<std::string> Auth() const { return {"Authorization: Bearer " + key_}; }

  HttpClient http_;
};

TEST_F(CoreServer, HealthReadyAndMetrics) {
  auto h = http_.Get(server_->api() + "/healthz");
  EXPECT_EQ(h.status, 200);
  auto r = http_.Get(server_->api() + "/readyz");
  EXPECT_EQ(r.status, 200) << r.body;
  http_.Get(server_->api() + "/v2/hello");
  auto m = http_.Get(server_->api() + "/metrics");
  ASSERT_EQ(m.status, 200);
  EXPECT_NE(m.body.find("http_server_request_duration_seconds_bucket"), std::string::npos);
  EXPECT_NE(m.body.find("http_route=\"/v2/hello\""), std::string::npos);
  EXPECT_NE(m.body.find("hello_requests_total"), std::string::npos);
  EXPECT_NE(m.body.find("db_pool"), std::string::npos);
  EXPECT_NE(m.body.find("process_resident_memory_bytes"), std::string::npos);
  std::string file = server_->dir() + "/metrics.txt";
  std::ofstream(file) << m.body;
  EXPECT_EQ(std::system(("promtool check metrics < " + file + " >/dev/null 2>&1").c_str()), 0) << m.body;
}

TEST_F(CoreServer, MeWithApiKey) {
  auto r = http_.Get(server_->api() + "/v2/me", Auth());
  ASSERT_EQ(r.status, 200) << r.body;
  auto j = r.Json();
  EXPECT_EQ(j["status"], "success");
  EXPECT_EQ(j["data"]["id"], user_);
  EXPECT_EQ(j["data"]["email"], "ada@example.com");
  EXPECT_EQ(j["data"]["name"], "Ada Lovelace");
  EXPECT_EQ(j["data"]["timeZone"], "UTC");
  EXPECT_TRUE(j["data"].contains("weekStart"));
  EXPECT_TRUE(j["data"].contains("createdDate"));

  auto p = http_.Request("PATCH", server_->api() + "/v2/me", R"({"name":"Ada King","timeZone":"Europe/London"})",
                         {"Authorization: Bearer " + key_, "Content-Type: application/json"});
  ASSERT_EQ(p.status, 200) << p.body;
  EXPECT_EQ(p.Json()["data"]["timeZone"], "Europe/London");
  auto bad = http_.Request("PATCH", server_->api() + "/v2/me", R"({"timeZone":"Mars/Olympus"})",
                           {"Authorization: Bearer " + key_, "Content-Type: application/json"});
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(http_.Get(server_->api() + "/v2/me", Auth()).Json()["data"]["name"], "Ada King");
}

TEST_F(CoreServer, VersionHeader) {
  auto ok = http_.Get(server_->api() + "/v2/me", {"Authorization: Bearer " + key_, "service-api-version: 2024-08-13"});
  EXPECT_EQ(ok.status, 200);
  auto bad = http_.Get(server_->api() + "/v2/me", {"Authorization: Bearer " + key_, "service-api-version: 1999-01-01"});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.Json()["status"], "error");
}

TEST_F(CoreServer, MissingOrInvalidBearerIs401) {
  auto none = http_.Get(server_->api() + "/v2/me");
  EXPECT_EQ(none.status, 401);
  EXPECT_NE(none.Header("www-authenticate").find("Bearer"), std::string::npos);
  EXPECT_EQ(none.Json()["status"], "error");
  auto bad = http_.Get(server_->api() + "/v2/me", {"Authorization: Bearer rdv_notarealkeynotarealkeynotarealkeynotareal"});
  EXPECT_EQ(bad.status, 401);
  EXPECT_NE(bad.Header("www-authenticate").find("invalid_token"), std::string::npos);
  auto other = http_.Get(server_->api() + "/v2/me", {"Authorization: Bearer something-else"});
  EXPECT_EQ(other.status, 401);
}

TEST_F(CoreServer, RevokedApiKeyStopsWorking) {
  auto created =
      server_->Cli({"admin", "api-key", "create", "--user-id", std::to_string(user_), "--name", "temp"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  std::string key = created.Json()["key"];
  int64_t key_id = created.Json()["id"];
  EXPECT_EQ(http_.Get(server_->api() + "/v2/me", {"Authorization: Bearer " + key}).status, 200);
  auto revoked = server_->Cli(
      {"admin", "api-key", "revoke", "--user-id", std::to_string(user_), "--key-id", std::to_string(key_id)});
  ASSERT_EQ(revoked.exit_code, 0) << revoked.err;
  // The server caches key look-ups for a bounded time (5 s, documented); await the refusal.
  long status = 0;
  EXPECT_TRUE(
      Eventually("the revoked key refused", {std::chrono::seconds(15), std::chrono::milliseconds(100)},
                 [&] {
                   status = http_.Get(server_->api() + "/v2/me", {"Authorization: Bearer " + key}).status;
                   return status == 401;
                 }))
      << "last status " << status;
}

TEST_F(CoreServer, BadInput) {
  std::vector<std::string> json = {"Authorization: Bearer " + key_, "Content-Type: application/json"};
  auto malformed = http_.Request("POST", server_->api() + "/v2/hello/items", "{\"text\": ", json);
  EXPECT_EQ(malformed.status, 400) << malformed.body;
  EXPECT_EQ(malformed.Json()["status"], "error");
  auto wrong_type = http_.Request("POST", server_->api() + "/v2/hello/items", "text=hi",
                                  {"Authorization: Bearer " + key_, "Content-Type: text/plain"});
  EXPECT_EQ(wrong_type.status, 415) << wrong_type.body;
  // Over the limit: 413 (a client of its own: Pistache keeps reading the rest of a body far over
  // the limit on that connection).
  for (size_t size : {size_t{1048576 + 100}, size_t{1100000}}) {
    HttpClient fresh;
    auto too_big = fresh.Request("POST", server_->api() + "/v2/hello/items",
                                 "{\"text\":\"" + std::string(size, 'x') + "\"}", json);
    EXPECT_EQ(too_big.status, 413) << size;
  }
  auto unknown = http_.Get(server_->api() + "/v2/no/such/route");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.Json()["status"], "error");
  EXPECT_EQ(unknown.Json()["error"]["code"], "not_found");
  auto bad_param = http_.Get(server_->api() + "/v2/hello/items/not-a-number", {"Authorization: Bearer " + key_});
  EXPECT_EQ(bad_param.status, 404) << bad_param.body;  // an id that is not a number names no item
  auto bad_escape = http_.Get(server_->api() + "/v2/hello/items/%zz", {"Authorization: Bearer " + key_});
  EXPECT_EQ(bad_escape.status, 400) << bad_escape.body;  // a malformed percent escape
  // Still serving, and nothing half-written.
  auto ok = http_.Request("POST", server_->api() + "/v2/hello/items", R"({"text":"hi"})", json);
  EXPECT_EQ(ok.status, 201) << ok.body;
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM hello_items"), "1");
}

TEST_F(CoreServer, OutboxDeliversToConsumer) {
  std::vector<std::string> json = {"Authorization: Bearer " + key_, "Content-Type: application/json"};
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(http_.Request("POST", server_->api() + "/v2/hello/items", R"({"text":"x"})", json).status, 201);
  int64_t seen = 0;
  Eventually("3 items seen by the consumer", {std::chrono::seconds(15)}, [&] {
    seen = http_.Get(server_->api() + "/v2/hello/seen").Json()["data"]["seen"].get<int64_t>();
    return seen >= 3;
  });
  EXPECT_EQ(seen, 3);
}

TEST_F(CoreServer, GracefulShutdownOnSigterm) {
  EXPECT_EQ(server_->Stop(SIGTERM), 0);
  EXPECT_NE(server_->Log().find("\"stopped\""), std::string::npos);
}

TEST_F(CoreServer, LoginPage) {
  auto page = http_.Get(server_->app() + "/auth/login");
  ASSERT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("Email"), std::string::npos);
  EXPECT_NE(page.body.find("Password"), std::string::npos);
  EXPECT_NE(page.body.find("Sign in"), std::string::npos);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(page.body, m, std::regex("name=\"csrf_token\" value=\"([^\"]+)\"")));
  std::string csrf = m[1];
  std::string cookie;
  for (auto [it, end] = page.headers.equal_range("set-cookie"); it != end; ++it)
    cookie += it->second.substr(0, it->second.find(';')) + "; ";
  std::vector<std::string> form = {"Content-Type: application/x-www-form-urlencoded", "Cookie: " + cookie};
  auto wrong = http_.Request("POST", server_->app() + "/auth/login",
                             "email=ada%40example.com&password=nope&csrf_token=" + csrf, form);
  EXPECT_EQ(wrong.status, 401);
  auto no_csrf = http_.Request("POST", server_->app() + "/auth/login",
                               "email=ada%40example.com&password=correct+horse+battery", form);
  EXPECT_EQ(no_csrf.status, 403);
  auto ok = http_.Request("POST", server_->app() + "/auth/login",
                          "email=ada%40example.com&password=correct+horse+battery&csrf_token=" + csrf + "&next=%2Fsettings",
                          form);
  EXPECT_EQ(ok.status, 302) << ok.body;
  EXPECT_EQ(ok.Header("location"), "/settings");
  EXPECT_NE(ok.Header("set-cookie").find("HttpOnly"), std::string::npos);
  EXPECT_NE(ok.Header("set-cookie").find("SameSite=Lax"), std::string::npos);

  // Without `next`, signing in lands on `/`: a page for the signed-in account, not a 404.
  auto home_bound = http_.Request("POST", server_->app() + "/auth/login",
                                  "email=ada%40example.com&password=correct+horse+battery&csrf_token=" + csrf, form);
  EXPECT_EQ(home_bound.status, 302) << home_bound.body;
  EXPECT_EQ(home_bound.Header("location"), "/");
  const std::string session = home_bound.Header("set-cookie").substr(0, home_bound.Header("set-cookie").find(';'));
  auto home = http_.Get(server_->app() + "/", {"Cookie: " + session});
  EXPECT_EQ(home.status, 200) << home.body;
  EXPECT_NE(home.body.find("Signed in as"), std::string::npos) << home.body;
  EXPECT_NE(home.body.find("ada@example.com"), std::string::npos) << home.body;
  EXPECT_NE(home.body.find("action=\"/auth/logout\""), std::string::npos);
  auto anonymous = http_.Get(server_->app() + "/");
  EXPECT_EQ(anonymous.status, 302);
  EXPECT_EQ(anonymous.Header("location"), "/auth/login");
}

// The pages' security headers on every answer of the app listener, exactly once each: pages,
// redirects, refusals, the router's 404 and 405, and an answer to a request that could not be read.
TEST_F(CoreServer, EveryAppAnswerCarriesThePagesSecurityHeaders) {
  const std::map<std::string, std::string> expected = {
      {"x-content-type-options", "nosniff"},
      {"x-frame-options", "DENY"},
      {"content-security-policy", "frame-ancestors 'none'"},
      {"referrer-policy", "no-referrer"},
      {"cache-control", "no-store"},
  };
  auto expect_headers = [&](const std::multimap<std::string, std::string>& headers, const std::string& what) {
    for (const auto& [name, value] : expected) {
      EXPECT_EQ(headers.count(name), 1u) << what << ": " << name;
      auto it = headers.find(name);
      if (it != headers.end()) EXPECT_EQ(it->second, value) << what << ": " << name;
    }
  };
  struct Probe {
    std::string method, path, body;
    long status;
  };
  const std::vector<Probe> probes = {
      {"GET", "/auth/login", "", 200},                        // a page
      {"GET", "/", "", 302},                                  // a page's redirect to sign in
      {"GET", "/settings/developer/oauth", "", 302},          // a plugin's page, signed out
      {"POST", "/auth/login", "email=a%40example.com", 403},  // refused: no CSRF token
      {"GET", "/no/such/page", "", 404},                      // an unknown app path
      {"GET", "/v2/me", "", 404},                             // an api path asked of the app listener
      {"DELETE", "/auth/login", "", 405},                     // a known path, another method
      {"GET", "/auth/login?next=%zz", "", 400},               // a malformed query string
  };
  for (const Probe& p : probes) {
    std::vector<std::string> headers;
    if (!p.body.empty()) headers.push_back("Content-Type: application/x-www-form-urlencoded");
    HttpResult r = http_.Request(p.method, server_->app() + p.path, p.body, headers);
    EXPECT_EQ(r.status, p.status) << p.method << " " << p.path << ": " << r.body;
    expect_headers(r.headers, p.method + " " + p.path);
  }
  // Refused before a request could be read (a malformed request line), on a raw connection.
  rdv_test::Conn raw(static_cast<uint16_t>(server_->app_port()));
  ASSERT_TRUE(raw.Send("NOT A REQUEST\r\n\r\n"));
  std::optional<rdv_test::Reply> reply = raw.Read();
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, 400);
  expect_headers(reply->headers, "a malformed request line");
  // The api listener's answers are left as they were.
  HttpResult api = http_.Get(server_->api() + "/no/such/resource");
  EXPECT_EQ(api.status, 404);
  EXPECT_EQ(api.Header("x-frame-options"), "");
}

}  // namespace
}  // namespace rendezvous::testing

namespace rendezvous::testing {
namespace {

TEST_F(CoreServer, AdminCommandsPrintTheirJsonAndNothingOnStderr) {
  CliResult created = server_->Cli({"admin", "user", "create", "--email", "quiet@example.com", "--name", "Quiet",
                                    "--password", "a long password"});
  EXPECT_EQ(created.exit_code, 0) << created.err;
  EXPECT_EQ(created.err, "");
  EXPECT_TRUE(created.Json().is_object()) << created.out;
  CliResult key = server_->Cli({"admin", "api-key", "create", "--user-id", std::to_string(user_)});
  EXPECT_EQ(key.exit_code, 0);
  EXPECT_EQ(key.err, "");
  // Something wrong still says so on stderr.
  CliResult bad = server_->Cli({"admin", "api-key", "create", "--user-id", "999999"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_FALSE(bad.err.empty());
}

}  // namespace
}  // namespace rendezvous::testing
