// Access tokens served from memory and their revocation across instances (DESIGN §5): two real
// servers on one MariaDB database. A token used on both is served from each one's cache (the hit
// counter moves); once revoked on A, A refuses it at once and B within 1 s. Revocations: RFC 7009,
// refresh reuse detection, a replayed code, a managed user's force-refresh; introspection follows the same
// cache.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "eventually.hpp"
#include "http_client.hpp"
#include "oauth_support.hpp"
#include "scratch_db.hpp"
#include "test_server.hpp"

namespace rendezvous::testing {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// The bound of DESIGN §5 and what a loaded test machine adds to a request: each wait for another
// instance is bounded by it, so a refusal that comes later fails the test.
constexpr std::chrono::milliseconds kOtherInstanceBound{1000 + 250};

class OAuthTokenCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = std::make_unique<TestServer>(db_.name());
    b_ = std::make_unique<TestServer>(db_.name());
    a_->Migrate();
    owner_ = a_->CreateUser("owner@example.com", "Owner");
    std::string why;
    ASSERT_TRUE(a_->Start(&why)) << why;
    ASSERT_TRUE(b_->Start(&why)) << why;
  }

  static long Me(const TestServer& s, const std::string& token) {
    HttpClient http;
    return http.Get(s.api() + "/v2/me", {"Authorization: Bearer " + token}).status;
  }

  // oauth_token_cache_lookups_total{result="hit"} of `s`.
  static int64_t Hits(const TestServer& s) {
    HttpClient http;
    const std::string body = http.Get(s.api() + "/metrics").body;
    const std::string needle = "oauth_token_cache_lookups_total{result=\"hit\"} ";
    const size_t at = body.find(needle);
    if (at == std::string::npos) return -1;
    return std::stoll(body.substr(at + needle.size()));
  }

  // The token answers 200 on `s` from its cache: a request that moves the hit counter (the first
  // use reads the database; the next ones are hits once the instance's feed has read the log).
  static ::testing::AssertionResult ServedFromCache(const TestServer& s, const std::string& token) {
    return Eventually("a cache hit on " + s.api(), {std::chrono::seconds(10), std::chrono::milliseconds(20)},
                      [&] {
                        const int64_t before = Hits(s);
                        return Me(s, token) == 200 && Hits(s) > before;
                      });
  }

  // A refuses at once; B within kOtherInstanceBound of the revocation's answer.
  void ExpectRefusedEverywhere(const std::string& token, Clock::time_point revoked_at) {
    EXPECT_EQ(Me(*a_, token), 401) << "the revoking instance still accepts the token";
    EXPECT_TRUE(Eventually("instance B refusing the revoked token",
                           {kOtherInstanceBound - std::chrono::duration_cast<std::chrono::milliseconds>(
                                                      Clock::now() - revoked_at),
                            std::chrono::milliseconds(10)},
                           [&] { return Me(*b_, token) == 401; }));
    EXPECT_EQ(Me(*a_, token), 401);
  }

  HttpResult PostForm(const TestServer& s, const std::string& path, const std::string& body) {
    HttpClient http;
    return http.Request("POST", s.api() + path, body, {"Content-Type: application/x-www-form-urlencoded"});
  }

  // Revocation log rows of kind grant that name a revoked grant.
  std::string RevokedGrantRows() {
    return db_.QueryValue(
        "SELECT COUNT(*) FROM oauth_revocations r JOIN oauth_grants g ON g.id = CAST(r.subject AS UNSIGNED)"
        " WHERE r.kind = 'grant' AND g.revoked_at IS NOT NULL");
  }

  ScratchDatabase db_;
  std::unique_ptr<TestServer> a_;
  std::unique_ptr<TestServer> b_;
  int64_t owner_ = 0;
};

TEST_F(OAuthTokenCacheTest, ARevokedTokenIsRefusedAtOnceHereAndWithinASecondElsewhere) {
  const OAuthGrant grant = GrantOAuthToken(*a_, db_, owner_, owner_, {}, {});
  ASSERT_FALSE(grant.access_token.empty());
  ASSERT_TRUE(ServedFromCache(*a_, grant.access_token));
  ASSERT_TRUE(ServedFromCache(*b_, grant.access_token));

  // Introspection on B answers from the same cache.
  const std::string client =
      "client_id=" + FormEncode(grant.client_id) + "&client_secret=" + FormEncode(grant.client_secret);
  HttpResult active =
      PostForm(*b_, "/v2/auth/oauth2/introspect", client + "&token=" + FormEncode(grant.access_token));
  ASSERT_EQ(active.status, 200) << active.body;
  EXPECT_EQ(active.Json().value("active", false), true) << active.body;
  EXPECT_EQ(active.Json().value("client_id", ""), grant.client_id) << active.body;

  HttpResult revoked =
      PostForm(*a_, "/v2/auth/oauth2/revoke", client + "&token=" + FormEncode(grant.access_token));
  const Clock::time_point revoked_at = Clock::now();
  ASSERT_EQ(revoked.status, 200) << revoked.body;
  ExpectRefusedEverywhere(grant.access_token, revoked_at);
  HttpResult inactive =
      PostForm(*b_, "/v2/auth/oauth2/introspect", client + "&token=" + FormEncode(grant.access_token));
  EXPECT_EQ(inactive.Json().value("active", true), false) << inactive.body;
  // The log row the revocation wrote.
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM oauth_revocations WHERE kind = 'token'"), "1");
}

TEST_F(OAuthTokenCacheTest, ReuseDetectionReachesTheOtherInstanceWithinASecond) {
  const OAuthGrant grant = GrantOAuthToken(*a_, db_, owner_, owner_, {}, {});
  ASSERT_FALSE(grant.refresh_token.empty());
  const std::string refresh = "grant_type=refresh_token&client_id=" + FormEncode(grant.client_id) +
                              "&client_secret=" + FormEncode(grant.client_secret) +
                              "&refresh_token=" + FormEncode(grant.refresh_token);
  HttpResult rotated = PostForm(*a_, "/v2/auth/oauth2/token", refresh);
  ASSERT_EQ(rotated.status, 200) << rotated.body;
  const std::string second = rotated.Json().value("access_token", "");
  // Both access tokens of the grant live, and cached on both instances.
  for (const std::string& token : {grant.access_token, second}) {
    ASSERT_TRUE(ServedFromCache(*a_, token));
    ASSERT_TRUE(ServedFromCache(*b_, token));
  }
  // The rotated refresh token again: the whole grant is revoked.
  HttpResult reused = PostForm(*a_, "/v2/auth/oauth2/token", refresh);
  const Clock::time_point revoked_at = Clock::now();
  ASSERT_EQ(reused.status, 400) << reused.body;
  ExpectRefusedEverywhere(grant.access_token, revoked_at);
  ExpectRefusedEverywhere(second, revoked_at);
  // The grant procedure's revocation wrote one log row, naming the grant; presented once more,
  // the grant is revoked already and nothing more is written.
  EXPECT_EQ(RevokedGrantRows(), "1");
  const std::string rows = db_.QueryValue("SELECT COUNT(*) FROM oauth_revocations");
  ASSERT_EQ(PostForm(*a_, "/v2/auth/oauth2/token", refresh).status, 400);
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM oauth_revocations"), rows);
}

TEST_F(OAuthTokenCacheTest, AReplayedCodeReachesTheOtherInstanceWithinASecond) {
  // A client, then a code of our own making exchanged once: the grant's token, cached on both.
  const OAuthGrant client = GrantOAuthToken(*a_, db_, owner_, owner_, {}, {});
  ASSERT_FALSE(client.client_id.empty());
  const std::string code = InsertAuthorizationCode(db_, client.client_id, owner_, {}, true);
  const std::string exchange = "grant_type=authorization_code&client_id=" + FormEncode(client.client_id) +
                               "&client_secret=" + FormEncode(client.client_secret) +
                               "&code=" + FormEncode(code) + "&redirect_uri=" + FormEncode(kTestRedirectUri);
  HttpResult first = PostForm(*a_, "/v2/auth/oauth2/token", exchange);
  ASSERT_EQ(first.status, 200) << first.body;
  const std::string token = first.Json().value("access_token", "");
  ASSERT_TRUE(ServedFromCache(*a_, token));
  ASSERT_TRUE(ServedFromCache(*b_, token));
  // The same code again: refused, and every token issued from it revoked.
  HttpResult replayed = PostForm(*a_, "/v2/auth/oauth2/token", exchange);
  const Clock::time_point revoked_at = Clock::now();
  ASSERT_EQ(replayed.status, 400) << replayed.body;
  ExpectRefusedEverywhere(token, revoked_at);
  EXPECT_EQ(RevokedGrantRows(), "1");
  // The other grant of the client is untouched.
  EXPECT_EQ(Me(*b_, client.access_token), 200);
}

TEST_F(OAuthTokenCacheTest, AManagedUsersForceRefreshReachesTheOtherInstanceWithinASecond) {
  CliResult made =
      a_->Cli({"admin", "oauth-client", "create", "--owner-id", std::to_string(owner_), "--name", "Platform",
               "--redirect-uri", "https://platform.example.com/cb", "--scope", "PROFILE_READ"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string id = made.Json()["client_id"], secret = made.Json()["client_secret"];
  ASSERT_EQ(a_->Cli({"admin", "oauth-client", "review", id, "--accept"}).exit_code, 0);
  HttpClient http;
  const std::vector<std::string> headers = {"x-cal-client-id: " + id, "x-cal-secret-key: " + secret,
                                            "Content-Type: application/json"};
  HttpResult user = http.Request("POST", a_->api() + "/v2/oauth-clients/" + id + "/users",
                                 json{{"email", "alice@example.com"}, {"name", "Alice"}}.dump(), headers);
  ASSERT_EQ(user.status, 201) << user.body;
  const std::string token = user.Json()["data"]["accessToken"];
  const int64_t user_id = user.Json()["data"]["user"]["id"];
  ASSERT_TRUE(ServedFromCache(*a_, token));
  ASSERT_TRUE(ServedFromCache(*b_, token));

  HttpResult forced = http.Request(
      "POST", a_->api() + "/v2/oauth-clients/" + id + "/users/" + std::to_string(user_id) + "/force-refresh",
      "", headers);
  const Clock::time_point revoked_at = Clock::now();
  ASSERT_EQ(forced.status, 200) << forced.body;
  ExpectRefusedEverywhere(token, revoked_at);
  // The new token works on both.
  const std::string fresh = forced.Json()["data"]["accessToken"];
  EXPECT_EQ(Me(*a_, fresh), 200);
  EXPECT_EQ(Me(*b_, fresh), 200);
}

TEST_F(OAuthTokenCacheTest, UnknownTokensAreNotKept) {
  const OAuthGrant grant = GrantOAuthToken(*a_, db_, owner_, owner_, {}, {});
  ASSERT_TRUE(ServedFromCache(*a_, grant.access_token));
  HttpClient http;
  auto entries = [&] {
    const std::string body = http.Get(a_->api() + "/metrics").body;
    const std::string needle = "\noauth_token_cache_entries ";
    const size_t at = body.find(needle);
    return at == std::string::npos ? -1.0 : std::stod(body.substr(at + needle.size()));
  };
  // Well-formed tokens nobody issued: each is a miss, none is kept.
  for (int i = 0; i < 50; ++i) {
    std::string made_up = "rdvat_" + std::string(43 - std::to_string(i).size(), 'A') + std::to_string(i);
    EXPECT_EQ(Me(*a_, made_up), 401);
  }
  // The gauge follows the feed's rounds: it settles at the one real token. (The token is used
  // again meanwhile: the log rows of its client's creation and review, written just before, may
  // drop it when a feed round reads them after it was first cached.)
  EXPECT_TRUE(Eventually("the entries gauge at 1", {std::chrono::seconds(5), std::chrono::milliseconds(50)},
                         [&] { return Me(*a_, grant.access_token) == 200 && entries() == 1.0; }));
}

}  // namespace
}  // namespace rendezvous::testing
