// Credentials on the bookings routes: each route's scope with OAuth tokens (granted scope works,
// a token without it is 403 insufficient_scope naming the scope), a legacy client's all-scopes
// token works, a managed user's token acts as its user with its client's scopes, and API keys
// reach every route.
#include "bookings_fixture.hpp"

namespace rendezvous::testing {
namespace {

const std::vector<std::string> kAllScopes = {"EVENT_TYPE_READ", "EVENT_TYPE_WRITE", "BOOKING_READ",
                                             "BOOKING_WRITE"};

struct RouteCase {
  std::string method;
  std::string path;  // {et} and {uid} are replaced
  std::string body;
  std::string scope;
  int success;
};

class BookingsScopes : public BookingsFixture {
 protected:
  void SetUp() override {
    StartServer();
    event_type_ = CreateEventType(owner_key_, "intro")["id"].get<int64_t>();
  }

  // Fresh objects for one round over every route (a round changes them).
  std::vector<RouteCase> Round(int n) {
    const std::string et =
        std::to_string(CreateEventType(owner_key_, "spare-" + std::to_string(n))["id"].get<int64_t>());
    const std::string pending1 = Import(owner_, event_type_, In(60), "pending")["uid"];
    const std::string pending2 = Import(owner_, event_type_, In(60), "pending")["uid"];
    const std::string past = Import(owner_, event_type_, In(-60))["uid"];
    const std::string cancelled = Import(owner_, event_type_, In(60 * 24 * 3), "cancelled")["uid"];
    return {
        {"GET", "/v2/event-types", "", "EVENT_TYPE_READ", 200},
        {"POST", "/v2/event-types",
         R"({"title":"New","slug":"new-)" + std::to_string(n) + R"(","lengthInMinutes":15})",
         "EVENT_TYPE_WRITE", 201},
        {"GET", "/v2/event-types/" + et, "", "EVENT_TYPE_READ", 200},
        {"PATCH", "/v2/event-types/" + et, R"({"title":"Renamed"})", "EVENT_TYPE_WRITE", 200},
        {"DELETE", "/v2/event-types/" + et, "", "EVENT_TYPE_WRITE", 200},
        {"GET", "/v2/bookings", "", "BOOKING_READ", 200},
        {"GET", "/v2/bookings/" + past, "", "BOOKING_READ", 200},
        {"POST", "/v2/bookings/" + pending1 + "/confirm", "{}", "BOOKING_WRITE", 200},
        {"POST", "/v2/bookings/" + pending2 + "/decline", R"({"reason":"busy"})", "BOOKING_WRITE", 200},
        {"POST", "/v2/bookings/" + past + "/mark-absent", R"({"host":true})", "BOOKING_WRITE", 200},
        {"POST", "/v2/bookings/" + cancelled + "/reopen", "{}", "BOOKING_WRITE", 200},
        {"GET", "/v2/bookings/" + past + "/references", "", "BOOKING_READ", 200},
    };
  }

  int64_t event_type_ = 0;
};

TEST_F(BookingsScopes, ApiKeyReachesEveryRoute) {
  for (const RouteCase& c : Round(1)) {
    HttpResult r = Call(c.method, c.path, owner_key_, c.body);
    EXPECT_EQ(r.status, c.success) << c.method << " " << c.path << " " << r.body;
  }
}

TEST_F(BookingsScopes, EachRouteNeedsItsScope) {
  std::map<std::string, std::string> granted;  // scope -> token with only that scope
  std::map<std::string, std::string> all_but;  // scope -> token with every other scope
  for (const std::string& scope : kAllScopes) {
    granted[scope] = GrantOAuthToken(*server_, db_, owner_, owner_, kAllScopes, {scope}).access_token;
    std::vector<std::string> others;
    for (const std::string& s : kAllScopes) {
      if (s != scope) others.push_back(s);
    }
    all_but[scope] = GrantOAuthToken(*server_, db_, owner_, owner_, kAllScopes, others).access_token;
    ASSERT_FALSE(granted[scope].empty());
    ASSERT_FALSE(all_but[scope].empty());
  }
  int n = 0;
  for (const RouteCase& c : Round(++n)) {
    HttpResult denied = Call(c.method, c.path, all_but[c.scope], c.body);
    EXPECT_EQ(denied.status, 403) << c.method << " " << c.path << " " << denied.body;
    EXPECT_EQ(denied.Json()["error"]["code"], "insufficient_scope") << denied.body;
    EXPECT_NE(denied.body.find(c.scope), std::string::npos) << denied.body;
    EXPECT_NE(denied.Header("www-authenticate").find("insufficient_scope"), std::string::npos);
  }
  // Nothing changed by the refused calls: every route still works with its scope.
  for (const RouteCase& c : Round(++n)) {
    HttpResult ok = Call(c.method, c.path, granted[c.scope], c.body);
    EXPECT_EQ(ok.status, c.success) << c.method << " " << c.path << " " << ok.body;
  }
}

TEST_F(BookingsScopes, LegacyAllScopesTokenWorks) {
  OAuthGrant legacy = GrantOAuthToken(*server_, db_, owner_, owner_, {}, {});
  ASSERT_FALSE(legacy.access_token.empty());
  for (const RouteCase& c : Round(1)) {
    HttpResult r = Call(c.method, c.path, legacy.access_token, c.body);
    EXPECT_EQ(r.status, c.success) << c.method << " " << c.path << " " << r.body;
  }
}

TEST_F(BookingsScopes, ManagedUserTokenActsAsItsUserWithItsClientsScopes) {
  OAuthGrant app = GrantOAuthToken(*server_, db_, owner_, owner_, {"EVENT_TYPE_READ", "EVENT_TYPE_WRITE"},
                                   {"EVENT_TYPE_READ"});
  CliResult managed = server_->Cli({"admin", "managed-user", "create", "--client-id", app.client_id,
                                    "--email", "managed@example.com", "--name", "Managed"});
  ASSERT_EQ(managed.exit_code, 0) << managed.err;
  const std::string token = managed.Json()["access_token"];
  const std::string managed_id = std::to_string(managed.Json()["id"].get<int64_t>());
  ASSERT_FALSE(token.empty());
  // The client's scopes: event types yes, bookings no.
  HttpResult made =
      Call("POST", "/v2/event-types", token, R"({"title":"Mine","slug":"mine","lengthInMinutes":15})");
  EXPECT_EQ(made.status, 201) << made.body;
  EXPECT_EQ(Count("SELECT COUNT(*) FROM event_types WHERE owner_id = " + managed_id), 1);
  EXPECT_EQ(Call("GET", "/v2/event-types", token).status, 200);
  HttpResult bookings = Call("GET", "/v2/bookings", token);
  EXPECT_EQ(bookings.status, 403) << bookings.body;
  EXPECT_EQ(bookings.Json()["error"]["code"], "insufficient_scope") << bookings.body;
  // As that user: the owner's event type is not theirs.
  EXPECT_EQ(Call("GET", "/v2/event-types/" + std::to_string(event_type_), token).status, 404);
  EXPECT_EQ(Call("GET", "/v2/bookings", "rdv_not-a-real-key").status, 401);
  EXPECT_EQ(Call("GET", "/v2/bookings", "").status, 401);
}

}  // namespace
}  // namespace rendezvous::testing
