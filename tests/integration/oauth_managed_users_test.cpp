// Managed users over the API (DESIGN §10) against the real binary, a real MariaDB and a real
// webhook receiver: the OAuth client's own credentials (wrong or revoked secret 401, a client not
// approved 403), a client's view limited to its own users (404 for another's), create, list, get,
// patch and delete, force-refresh, the refresh route's rotation and reuse detection, a managed
// user's token acting as that user with its client's scopes, and the cancellation of a deleted
// user's upcoming bookings with BOOKING_CANCELLED delivered.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "eventually.hpp"
#include "loopback_http_server.hpp"
#include "rendezvous/time.hpp"
#include "webhooks_fixture.hpp"

namespace rendezvous::testing {
namespace {

struct PlatformClient {
  std::string id;
  std::string secret;
};

class ManagedUsersApi : public WebhooksFixture {
 protected:
  void SetUp() override {
    StartServer(std::string(kTestPlugins) + ExtraPlugins());
    a_ = NewClient({"PROFILE_READ", "PROFILE_WRITE", "EVENT_TYPE_READ"});
    b_ = NewClient({"PROFILE_READ"});
  }

  // More of the plugins' configuration, after the webhooks plugin's.
  virtual std::string ExtraPlugins() const { return ""; }

  json Cli(const std::vector<std::string>& args) const {
    CliResult r = server_->Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.Json();
  }
  // A confidential client of owner_ with `scopes`, approved unless `approve` is false.
  PlatformClient NewClient(const std::vector<std::string>& scopes, bool approve = true) const {
    std::vector<std::string> args = {"admin",      "oauth-client",         "create",
                                     "--owner-id", std::to_string(owner_), "--name",
                                     "Platform",   "--redirect-uri",       "https://platform.example.com/cb"};
    for (const auto& s : scopes) args.insert(args.end(), {"--scope", s});
    json c = Cli(args);
    if (approve) Cli({"admin", "oauth-client", "review", c["client_id"], "--accept"});
    return {c["client_id"], c["client_secret"]};
  }

  // A call with the client's headers (as `as` says) on `path`.
  HttpResult As(const PlatformClient& as, const std::string& method, const std::string& path,
                const std::string& body = "", std::vector<std::string> headers = {}) {
    headers.push_back("x-cal-client-id: " + as.id);
    headers.push_back("x-cal-secret-key: " + as.secret);
    if (!body.empty()) headers.push_back("Content-Type: application/json");
    return http_.Request(method, server_->api() + path, body, headers);
  }
  static std::string Users(const PlatformClient& c) { return "/v2/oauth-clients/" + c.id + "/users"; }
  static std::string UserPath(const PlatformClient& c, int64_t id) {
    return Users(c) + "/" + std::to_string(id);
  }

  // POST .../users; returns data (fails the test unless 201).
  json CreateManaged(const PlatformClient& c, const json& body) {
    HttpResult r = As(c, "POST", Users(c), body.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Json()["data"];
  }
  HttpResult Refresh(const PlatformClient& c, const std::string& refresh_token) {
    return http_.Request("POST", server_->api() + "/v2/oauth/" + c.id + "/refresh",
                         json{{"refreshToken", refresh_token}}.dump(),
                         {"x-cal-secret-key: " + c.secret, "Content-Type: application/json"});
  }
  HttpResult Me(const std::string& token) { return Call("GET", "/v2/me", token); }

  static void ExpectError(const HttpResult& r, long status, const std::string& code = "") {
    EXPECT_EQ(r.status, status) << r.body;
    json j = r.Json();
    EXPECT_EQ(j.value("status", ""), "error") << r.body;
    EXPECT_TRUE(j.contains("error") && j["error"].contains("message")) << r.body;
    if (!code.empty()) {
      EXPECT_EQ(j["error"].value("code", ""), code) << r.body;
    }
  }
  // The token fields of a create, force-refresh or refresh answer: two tokens and their expiries
  // in epoch milliseconds.
  static void ExpectKeys(const json& data, int64_t before) {
    EXPECT_EQ(data.value("accessToken", "").rfind("rdvat_", 0), 0u) << data;
    EXPECT_EQ(data.value("refreshToken", "").rfind("rdvrt_", 0), 0u) << data;
    const int64_t now = time::Now();
    ASSERT_TRUE(data["accessTokenExpiresAt"].is_number_integer()) << data;
    EXPECT_GE(data["accessTokenExpiresAt"].get<int64_t>(), before + 1800 * 1000 - 1000);
    EXPECT_LE(data["accessTokenExpiresAt"].get<int64_t>(), now + 1800 * 1000 + 1000);
    EXPECT_GE(data["refreshTokenExpiresAt"].get<int64_t>(), before + 2592000LL * 1000 - 1000);
  }
  int64_t Metric(const std::string& operation, const std::string& outcome) {
    HttpResult r = http_.Get(server_->api() + "/metrics");
    const std::string needle =
        "oauth_managed_user_requests_total{operation=\"" + operation + "\",outcome=\"" + outcome + "\"} ";
    const size_t at = r.body.find(needle);
    if (at == std::string::npos) return -1;
    return std::stoll(r.body.substr(at + needle.size()));
  }

  PlatformClient a_, b_;
};

TEST_F(ManagedUsersApi, CreateListGetPatchDelete) {
  const int64_t before = time::Now();
  json made = CreateManaged(a_, {{"email", "alice@example.com"},
                                 {"name", "Alice Smith"},
                                 {"timeZone", "America/New_York"},
                                 {"timeFormat", 24},
                                 {"weekStart", "Sunday"},
                                 {"locale", "de"}});
  ExpectKeys(made, before);
  json user = made["user"];
  const int64_t id = user["id"].get<int64_t>();
  EXPECT_EQ(user["email"], "alice@example.com");
  EXPECT_EQ(user["name"], "Alice Smith");
  EXPECT_EQ(user["username"], "alice");
  EXPECT_EQ(user["timeZone"], "America/New_York");
  EXPECT_EQ(user["weekStart"], "Sunday");
  EXPECT_EQ(user["timeFormat"], 24);
  EXPECT_EQ(user["locale"], "de");
  EXPECT_TRUE(user["createdDate"].is_string());
  EXPECT_TRUE(user.contains("defaultScheduleId"));
  // The managed user's token acts as that user, with the client's scopes.
  HttpResult me = Me(made["accessToken"]);
  EXPECT_EQ(me.status, 200) << me.body;
  EXPECT_EQ(me.Json()["data"]["id"], id);

  json second = CreateManaged(a_, {{"email", "bob@example.com"}, {"name", "Bob"}});
  EXPECT_EQ(second["user"]["timeZone"], "Europe/London");
  EXPECT_EQ(second["user"]["username"], "bob");
  // A taken e-mail: 409, nothing made.
  ExpectError(As(a_, "POST", Users(a_), json{{"email", "bob@example.com"}, {"name", "Bob 2"}}.dump()), 409);
  ExpectError(As(a_, "POST", Users(a_), json{{"name", "No Mail"}}.dump()), 400);
  ExpectError(
      As(a_, "POST", Users(a_), json{{"email", "c@example.com"}, {"name", "C"}, {"locale", "xx"}}.dump()),
      400);
  ExpectError(
      As(a_, "POST", Users(a_), json{{"email", "c@example.com"}, {"name", "C"}, {"timeFormat", 13}}.dump()),
      400);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM users WHERE email = 'c@example.com'"), 0);

  HttpResult list = As(a_, "GET", Users(a_));
  ASSERT_EQ(list.status, 200) << list.body;
  ASSERT_EQ(list.Json()["data"].size(), 2u) << list.body;
  EXPECT_EQ(list.Json()["data"][0]["id"], id);
  HttpResult page = As(a_, "GET", Users(a_) + "?limit=1&offset=1");
  ASSERT_EQ(page.status, 200) << page.body;
  ASSERT_EQ(page.Json()["data"].size(), 1u);
  EXPECT_EQ(page.Json()["data"][0]["email"], "bob@example.com");
  ExpectError(As(a_, "GET", Users(a_) + "?limit=0"), 400);
  ExpectError(As(a_, "GET", Users(a_) + "?offset=-1"), 400);
  // Client b has none.
  HttpResult none = As(b_, "GET", Users(b_));
  ASSERT_EQ(none.status, 200) << none.body;
  EXPECT_TRUE(none.Json()["data"].empty());

  HttpResult got = As(a_, "GET", UserPath(a_, id));
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.Json()["data"]["email"], "alice@example.com");

  HttpResult patched = As(a_, "PATCH", UserPath(a_, id),
                          json{{"name", "Alice Jones"}, {"timeFormat", 12}, {"locale", "fr"}}.dump());
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(patched.Json()["data"]["name"], "Alice Jones");
  EXPECT_EQ(patched.Json()["data"]["timeFormat"], 12);
  EXPECT_EQ(patched.Json()["data"]["locale"], "fr");
  ExpectError(As(a_, "PATCH", UserPath(a_, id), json{{"email", "new@example.com"}}.dump()), 400);
  ExpectError(As(a_, "PATCH", UserPath(a_, id), json{{"timeZone", "Mars/Olympus"}}.dump()), 400);
  got = As(a_, "GET", UserPath(a_, id));
  EXPECT_EQ(got.Json()["data"]["name"], "Alice Jones");
  EXPECT_EQ(got.Json()["data"]["timeZone"], "America/New_York");
  EXPECT_EQ(got.Json()["data"]["locale"], "fr");

  HttpResult deleted = As(a_, "DELETE", UserPath(a_, id));
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(deleted.Json()["data"]["id"], id);
  ExpectError(As(a_, "GET", UserPath(a_, id)), 404);
  ExpectError(As(a_, "DELETE", UserPath(a_, id)), 404);
  EXPECT_EQ(As(a_, "GET", Users(a_)).Json()["data"].size(), 1u);
  EXPECT_EQ(Me(made["accessToken"]).status, 401);
  ExpectError(Refresh(a_, made["refreshToken"]), 400);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM users WHERE id = " + std::to_string(id)), 0);
  // The link stays: the client that managed the user is still known.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM oauth_managed_users WHERE deleted_at IS NOT NULL AND user_id = " +
                  std::to_string(id)),
            1);

  EXPECT_EQ(Metric("create", "ok"), 2);
  EXPECT_EQ(Metric("create", "conflict"), 1);
  EXPECT_EQ(Metric("create", "invalid"), 3);
  EXPECT_EQ(Metric("delete", "ok"), 1);
  EXPECT_EQ(Metric("delete", "not_found"), 1);
  EXPECT_EQ(Metric("refresh", "invalid"), 1);
}

TEST_F(ManagedUsersApi, WrongOrRevokedSecretIs401AndAnUnapprovedClientIs403) {
  json made = CreateManaged(a_, {{"email", "alice@example.com"}, {"name", "Alice"}});
  const int64_t id = made["user"]["id"];
  const std::string body = json{{"email", "x@example.com"}, {"name", "X"}}.dump();
  ExpectError(As({a_.id, a_.secret + "x"}, "POST", Users(a_), body), 401);
  ExpectError(As({a_.id, b_.secret}, "GET", UserPath(a_, id)), 401);
  // Headers naming another client than the path, with that client's own secret.
  ExpectError(As(b_, "GET", UserPath(a_, id)), 401);
  ExpectError(http_.Request("GET", server_->api() + UserPath(a_, id), "", {}), 401);
  ExpectError(http_.Request("GET", server_->api() + UserPath(a_, id), "", {"x-cal-client-id: " + a_.id}),
              401);

  // A second secret, then the first revoked from the command line (another process): the server
  // refuses the first within 1 s (it may hold the client's credentials in memory until its
  // revocation feed reads the log: client_cache.hpp).
  json secret = Cli({"admin", "oauth-client", "secret", "generate", a_.id});
  const std::string second = secret.value("client_secret", "");
  ASSERT_FALSE(second.empty()) << secret;
  json client = Cli({"admin", "oauth-client", "show", a_.id});
  ASSERT_EQ(client["secrets"].size(), 2u) << client;
  for (const json& s : client["secrets"]) {
    if (s["secret_id"] != secret["secret_id"]) {
      Cli({"admin", "oauth-client", "secret", "revoke", a_.id,
           std::to_string(s["secret_id"].get<int64_t>())});
    }
  }
  EXPECT_TRUE(Eventually("the revoked secret refused",
                         {std::chrono::milliseconds(1250), std::chrono::milliseconds(10)},
                         [&] { return As(a_, "GET", UserPath(a_, id)).status == 401; }));
  ExpectError(As(a_, "GET", UserPath(a_, id)), 401);
  EXPECT_EQ(As({a_.id, second}, "GET", UserPath(a_, id)).status, 200);
  ExpectError(Refresh(a_, made["refreshToken"]), 401);

  PlatformClient pending = NewClient({"PROFILE_READ"}, /*approve=*/false);
  ExpectError(As(pending, "POST", Users(pending), body), 403);
  ExpectError(As({pending.id, "wrong"}, "POST", Users(pending), body), 401);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM users WHERE email = 'x@example.com'"), 0);
  EXPECT_GE(Metric("create", "unauthenticated"), 1);
  EXPECT_EQ(Metric("create", "forbidden"), 1);
}

TEST_F(ManagedUsersApi, AnotherClientsUserIs404AndUnchanged) {
  json made = CreateManaged(a_, {{"email", "alice@example.com"}, {"name", "Alice"}});
  const int64_t id = made["user"]["id"];
  ExpectError(As(b_, "GET", UserPath(b_, id)), 404);
  ExpectError(As(b_, "PATCH", UserPath(b_, id), json{{"name", "Mallory"}}.dump()), 404);
  ExpectError(As(b_, "POST", UserPath(b_, id) + "/force-refresh"), 404);
  ExpectError(As(b_, "DELETE", UserPath(b_, id)), 404);
  // A user no client manages (owner_), an id that is none, a malformed id: 404 the same.
  ExpectError(As(a_, "GET", UserPath(a_, owner_)), 404);
  ExpectError(As(a_, "GET", Users(a_) + "/999999"), 404);
  ExpectError(As(a_, "GET", Users(a_) + "/abc"), 404);
  HttpResult got = As(a_, "GET", UserPath(a_, id));
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.Json()["data"]["name"], "Alice");
  EXPECT_EQ(Me(made["accessToken"]).status, 200);
  // Another client cannot refresh the user's tokens either.
  ExpectError(Refresh(b_, made["refreshToken"]), 400);
  EXPECT_EQ(Me(made["accessToken"]).status, 200);
}

class ManagedUsersBounded : public ManagedUsersApi {
 protected:
  std::string ExtraPlugins() const override { return "oauth:\n  managed_users_per_client: 2\n"; }
};

TEST_F(ManagedUsersBounded, OneMoreThanTheBoundIs409AndMakesNothingUntilOneIsDeleted) {
  json first = CreateManaged(a_, {{"email", "m1@example.com"}, {"name", "M1"}});
  CreateManaged(a_, {{"email", "m2@example.com"}, {"name", "M2"}});
  ExpectError(As(a_, "POST", Users(a_), json{{"email", "m3@example.com"}, {"name", "M3"}}.dump()), 409);
  HttpResult list = As(a_, "GET", Users(a_));
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(list.Json()["data"].size(), 2u) << list.body;
  // Nothing was made: the refused e-mail is free, here for another client, whose bound is its own.
  CreateManaged(b_, {{"email", "m3@example.com"}, {"name", "M3"}});
  // A deleted user does not count.
  ASSERT_EQ(As(a_, "DELETE", UserPath(a_, first["user"]["id"])).status, 200);
  CreateManaged(a_, {{"email", "m4@example.com"}, {"name", "M4"}});
  EXPECT_EQ(Metric("create", "conflict"), 1);
}

TEST_F(ManagedUsersApi, AManagedUsersTokenIsRefusedOnAClientsRoutes) {
  json made = CreateManaged(a_, {{"email", "alice@example.com"}, {"name", "Alice"}});
  const std::string token = made["accessToken"];
  for (const PlatformClient& c : {a_, b_}) {
    ExpectError(Call("GET", Users(c), token), 401);
    ExpectError(Call("POST", Users(c), token, json{{"email", "m@example.com"}, {"name", "M"}}), 401);
  }
  // With client b's own credentials, a's user stays out of reach.
  ExpectError(
      As(b_, "GET", UserPath(b_, made["user"]["id"].get<int64_t>()), "", {"Authorization: Bearer " + token}),
      404);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM users WHERE email = 'm@example.com'"), 0);
}

TEST_F(ManagedUsersApi, ForceRefreshRevokesTheOldTokens) {
  json made = CreateManaged(a_, {{"email", "alice@example.com"}, {"name", "Alice"}});
  const int64_t id = made["user"]["id"];
  EXPECT_EQ(Me(made["accessToken"]).status, 200);
  const int64_t before = time::Now();
  HttpResult forced = As(a_, "POST", UserPath(a_, id) + "/force-refresh");
  ASSERT_EQ(forced.status, 200) << forced.body;
  EXPECT_EQ(forced.Header("cache-control"), "no-store");
  json keys = forced.Json()["data"];
  ExpectKeys(keys, before);
  EXPECT_EQ(Me(made["accessToken"]).status, 401);
  ExpectError(Refresh(a_, made["refreshToken"]), 400);
  EXPECT_EQ(Me(keys["accessToken"]).status, 200);
  HttpResult refreshed = Refresh(a_, keys["refreshToken"]);
  ASSERT_EQ(refreshed.status, 200) << refreshed.body;
  EXPECT_EQ(Me(refreshed.Json()["data"]["accessToken"]).status, 200);
}

TEST_F(ManagedUsersApi, RefreshRotatesAndAReusedTokenRevokesTheGrant) {
  json made = CreateManaged(a_, {{"email", "alice@example.com"}, {"name", "Alice"}});
  const int64_t before = time::Now();
  HttpResult first = Refresh(a_, made["refreshToken"]);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.Header("cache-control"), "no-store");
  json pair = first.Json()["data"];
  ExpectKeys(pair, before);
  EXPECT_NE(pair["refreshToken"], made["refreshToken"]);
  EXPECT_EQ(Me(pair["accessToken"]).status, 200);
  // The rotated token again: refused, and the whole grant with it (the new pair too).
  ExpectError(Refresh(a_, made["refreshToken"]), 400, "refresh_token_revoked");
  EXPECT_EQ(Me(pair["accessToken"]).status, 401);
  ExpectError(Refresh(a_, pair["refreshToken"]), 400);
  // Malformed and missing tokens, a wrong secret.
  ExpectError(Refresh(a_, "garbage"), 400);
  ExpectError(http_.Request("POST", server_->api() + "/v2/oauth/" + a_.id + "/refresh", "{}",
                            {"x-cal-secret-key: " + a_.secret, "Content-Type: application/json"}),
              400);
  ExpectError(Refresh({a_.id, "wrong"}, pair["refreshToken"]), 401);
}

TEST_F(ManagedUsersApi, DeleteCancelsUpcomingBookingsWithTheirWebhooks) {
  json made = CreateManaged(a_, {{"email", "alice@example.com"}, {"name", "Alice"}, {"timeZone", "UTC"}});
  const int64_t id = made["user"]["id"];
  const std::string key = server_->CreateApiKey(id);
  LoopbackHttpServer receiver([](const PeerRequest&) {
    return PeerResponse{200, "application/json", "{}", {}};
  });
  json body = Body(receiver.url() + "/hook", {"BOOKING_CANCELLED"});
  body["secret"] = "managed-user-hook-secret";
  CreateWebhook(body, key);
  json et = CreateEventType(key, "chat");
  const int64_t et_id = et["id"].get<int64_t>();
  json upcoming = Import(id, et_id, "2031-03-03T10:00:00Z");
  json later = Import(id, et_id, "2031-03-04T10:00:00Z", "pending");
  json past = Import(id, et_id, "2020-03-03T10:00:00Z");
  // Another user's booking stays.
  json others =
      Import(owner_, CreateEventType(owner_key_, "owner-chat")["id"].get<int64_t>(), "2031-03-03T12:00:00Z");

  HttpResult deleted = As(a_, "DELETE", UserPath(a_, id));
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  auto status_of = [&](const json& b) {
    return db_.QueryValue("SELECT status FROM bookings WHERE uid = '" + b["uid"].get<std::string>() + "'");
  };
  EXPECT_EQ(status_of(upcoming), "cancelled");
  EXPECT_EQ(status_of(later), "cancelled");
  EXPECT_NE(status_of(past), "cancelled");
  EXPECT_EQ(status_of(others), "accepted");

  ASSERT_TRUE(receiver.AwaitRequests(2, std::chrono::seconds(20)));
  std::vector<std::string> uids;
  for (const PeerRequest& r : receiver.Requests()) {
    json body = json::parse(r.body, nullptr, false);
    EXPECT_EQ(body.value("triggerEvent", ""), "BOOKING_CANCELLED") << r.body;
    uids.push_back(body["payload"].value("uid", ""));
    ExpectSignedDelivery(r, "managed-user-hook-secret", 0);
  }
  std::sort(uids.begin(), uids.end());
  std::vector<std::string> expected = {upcoming["uid"], later["uid"]};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(uids, expected);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM users WHERE id = " + std::to_string(id)), 0);
  EXPECT_EQ(Call("GET", "/v2/webhooks", key).status, 401);
}

}  // namespace
}  // namespace rendezvous::testing
