// Spec §5.3, route by route: every endpoint of the scope list refuses an OAuth token that lacks
// its scope (403 insufficient_scope naming it, WWW-Authenticate) and lets through a token with
// only that scope, a legacy client's unscoped token and an API key. "Lets through" means the
// handler ran: neither 401/403 nor the router's 404 — the bodies sent are deliberately minimal,
// so a 400 or an object's 404 is a pass here (the feature tests check the handlers themselves).
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "http_client.hpp"
#include "oauth_support.hpp"
#include "scratch_db.hpp"
#include "test_server.hpp"

namespace rendezvous::testing {
namespace {

using nlohmann::json;

struct ScopedRoute {
  const char* method;
  const char* path;
  const char* scope;
};

// The §5.3 list with the paths DESIGN §9 and our docs give them.
const std::vector<ScopedRoute> kScopeList = {
    {"GET", "/v2/event-types", "EVENT_TYPE_READ"},
    {"POST", "/v2/event-types", "EVENT_TYPE_WRITE"},
    {"GET", "/v2/bookings", "BOOKING_READ"},
    {"POST", "/v2/bookings/no-such-booking/confirm", "BOOKING_WRITE"},
    {"POST", "/v2/bookings/no-such-booking/decline", "BOOKING_WRITE"},
    {"POST", "/v2/bookings/no-such-booking/mark-absent", "BOOKING_WRITE"},
    {"GET", "/v2/calendars", "APPS_READ"},
    {"GET", "/v2/calendars/busy-times?dateFrom=2030-01-01&dateTo=2030-01-02", "APPS_READ"},
    {"POST", "/v2/calendars/ics-feed/save", "APPS_WRITE"},
    {"PUT", "/v2/destination-calendars", "APPS_WRITE"},
    {"GET", "/v2/me", "PROFILE_READ"},
    {"PATCH", "/v2/me", "PROFILE_WRITE"},
    {"POST", "/v2/verified-resources/emails/verification-code/request", "VERIFIED_RESOURCES_WRITE"},
    {"POST", "/v2/verified-resources/emails/verification-code/verify", "VERIFIED_RESOURCES_WRITE"},
    {"POST", "/v2/verified-resources/phones/verification-code/request", "VERIFIED_RESOURCES_WRITE"},
    {"POST", "/v2/verified-resources/phones/verification-code/verify", "VERIFIED_RESOURCES_WRITE"},
};

const std::vector<std::string> kUserScopes = {"EVENT_TYPE_READ", "EVENT_TYPE_WRITE", "BOOKING_READ",
                                              "BOOKING_WRITE",   "APPS_READ",        "APPS_WRITE",
                                              "PROFILE_READ",    "PROFILE_WRITE",    "VERIFIED_RESOURCES_WRITE"};

class ScopeMatrix : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<TestServer>(db_.name());
    server_->Migrate();
    owner_ = server_->CreateUser("owner@example.com", "Owner");
    user_ = server_->CreateUser("user@example.com", "User");
    std::string why;
    ASSERT_TRUE(server_->Start(&why)) << why;
    CliResult created = server_->Cli([&] {
      std::vector<std::string> args = {"admin", "oauth-client", "create", "--owner-id", std::to_string(owner_),
                                       "--name", "Matrix", "--redirect-uri", kTestRedirectUri};
      for (const auto& s : kUserScopes) args.insert(args.end(), {"--scope", s});
      return args;
    }());
    ASSERT_EQ(created.exit_code, 0) << created.err;
    client_ = created.Json();
    ASSERT_EQ(server_->Cli({"admin", "oauth-client", "review", client_["client_id"], "--accept"}).exit_code, 0);
  }

  std::string Token(const std::vector<std::string>& scopes) {
    return IssueOAuthTokens(*server_, db_, client_["client_id"], client_["client_secret"], user_, scopes).access_token;
  }

  HttpResult Call(const ScopedRoute& route, const std::string& bearer) {
    std::vector<std::string> headers = {"Authorization: Bearer " + bearer, "service-api-version: 2024-08-13"};
    const std::string method = route.method;
    std::string body;
    if (method != "GET") {
      headers.push_back("Content-Type: application/json");
      body = "{}";
    }
    return http_.Request(method, server_->api() + route.path, body, headers);
  }

  static void ExpectHandled(const HttpResult& r, const ScopedRoute& route, const std::string& who) {
    EXPECT_NE(r.status, 401) << who << " " << route.method << " " << route.path << ": " << r.body;
    EXPECT_NE(r.status, 403) << who << " " << route.method << " " << route.path << ": " << r.body;
    EXPECT_EQ(r.body.find("no such resource"), std::string::npos)
        << "route missing: " << route.method << " " << route.path;
    EXPECT_LT(r.status, 500) << who << " " << route.method << " " << route.path << ": " << r.body;
  }

  ScratchDatabase db_;
  std::unique_ptr<TestServer> server_;
  HttpClient http_;
  int64_t owner_ = 0;
  int64_t user_ = 0;
  json client_;
};

TEST_F(ScopeMatrix, EveryScopeListRouteChecksItsScope) {
  const std::string api_key = server_->CreateApiKey(user_);
  CliResult legacy_client = server_->Cli({"admin", "oauth-client", "create", "--owner-id", std::to_string(owner_),
                                          "--name", "Legacy", "--redirect-uri", kTestRedirectUri});
  ASSERT_EQ(legacy_client.exit_code, 0) << legacy_client.err;
  const json legacy = legacy_client.Json();
  ASSERT_EQ(server_->Cli({"admin", "oauth-client", "review", legacy["client_id"], "--accept"}).exit_code, 0);
  const std::string legacy_token =
      IssueOAuthTokens(*server_, db_, legacy["client_id"], legacy["client_secret"], user_, {}, true).access_token;
  ASSERT_FALSE(legacy_token.empty());

  std::set<std::string> scopes_seen;
  for (const ScopedRoute& route : kScopeList) {
    SCOPED_TRACE(std::string(route.method) + " " + route.path);
    scopes_seen.insert(route.scope);
    std::vector<std::string> others;
    for (const auto& s : kUserScopes)
      if (s != route.scope) others.push_back(s);

    // Every other scope, not this one: 403 naming the scope.
    HttpResult denied = Call(route, Token(others));
    EXPECT_EQ(denied.status, 403) << denied.body;
    json j = denied.Json();
    EXPECT_EQ(j["error"]["code"], "insufficient_scope") << denied.body;
    EXPECT_EQ(j["error"]["details"]["scope"], route.scope) << denied.body;
    EXPECT_NE(denied.Header("www-authenticate").find(std::string("scope=\"") + route.scope + "\""), std::string::npos);

    ExpectHandled(Call(route, Token({route.scope})), route, "token with only its scope");
    ExpectHandled(Call(route, legacy_token), route, "legacy all-scopes token");
    ExpectHandled(Call(route, api_key), route, "API key");
  }
  // Every user-level scope of §5.3 guards at least one route.
  for (const auto& s : kUserScopes) EXPECT_EQ(scopes_seen.count(s), 1u) << s;
}

// A token without any scope reaches none of them, and no token at all gets 401 with the
// Bearer challenge.
TEST_F(ScopeMatrix, NoTokenOrNoScopeReachesNothing) {
  const std::string read_only = Token({"PROFILE_READ"});
  for (const ScopedRoute& route : kScopeList) {
    SCOPED_TRACE(std::string(route.method) + " " + route.path);
    HttpResult anonymous = http_.Request(route.method, server_->api() + route.path, "", {});
    EXPECT_EQ(anonymous.status, 401) << anonymous.body;
    EXPECT_NE(anonymous.Header("www-authenticate").find("Bearer"), std::string::npos);
    if (std::string(route.scope) != "PROFILE_READ") {
      EXPECT_EQ(Call(route, read_only).status, 403);
    }
  }
}

}  // namespace
}  // namespace rendezvous::testing
