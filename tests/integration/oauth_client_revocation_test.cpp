// Client credentials served from memory and their revocation across instances (client_cache.hpp):
// two real servers on one MariaDB database. Introspection with a client's secret is served from
// each instance's client cache (the hit counter moves); once the owner revokes that secret on A,
// A refuses it at once and B within 1 s, while the client's other secret keeps working on both.
// Made-up client ids are refused and never kept.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "browser_session.hpp"
#include "eventually.hpp"
#include "google_connect.hpp"
#include "http_client.hpp"
#include "oauth_support.hpp"
#include "scratch_db.hpp"
#include "test_server.hpp"

namespace rendezvous::testing {
namespace {

using Clock = std::chrono::steady_clock;

// The bound of DESIGN §5 and what a loaded test machine adds to a request (as for tokens).
constexpr std::chrono::milliseconds kOtherInstanceBound{1000 + 250};
constexpr const char* kPassword = "correct horse battery";

class OAuthClientCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = std::make_unique<TestServer>(db_.name());
    b_ = std::make_unique<TestServer>(db_.name());
    a_->Migrate();
    owner_ = a_->CreateUser("owner@example.com", "Owner", kPassword);
    std::string why;
    ASSERT_TRUE(a_->Start(&why)) << why;
    ASSERT_TRUE(b_->Start(&why)) << why;
  }

  // The status of an introspection of `token` by `client_id` with `secret` on `s`.
  static long Introspect(const TestServer& s, const std::string& client_id, const std::string& secret,
                         const std::string& token) {
    HttpClient http;
    return http
        .Request("POST", s.api() + "/v2/auth/oauth2/introspect",
                 "client_id=" + FormEncode(client_id) + "&client_secret=" + FormEncode(secret) +
                     "&token=" + FormEncode(token),
                 {"Content-Type: application/x-www-form-urlencoded"})
        .status;
  }

  // The value of the sample `needle` ("name{labels} ") in `s`'s metrics, -1 when absent.
  static double Sample(const TestServer& s, const std::string& needle) {
    HttpClient http;
    const std::string body = http.Get(s.api() + "/metrics").body;
    const size_t at = body.find("\n" + needle);
    if (at == std::string::npos) return -1;
    return std::stod(body.substr(at + 1 + needle.size()));
  }
  static double Hits(const TestServer& s) {
    return Sample(s, "oauth_client_cache_lookups_total{result=\"hit\"} ");
  }

  // The client authenticates on `s` from its cache: an introspection that moves the hit counter
  // (the first reads the database; the next ones are hits once the instance's feed read the log).
  static ::testing::AssertionResult ServedFromCache(const TestServer& s, const std::string& client_id,
                                                    const std::string& secret, const std::string& token) {
    return Eventually("a client cache hit on " + s.api(),
                      {std::chrono::seconds(10), std::chrono::milliseconds(20)}, [&] {
                        const double before = Hits(s);
                        return Introspect(s, client_id, secret, token) == 200 && Hits(s) > before;
                      });
  }

  ScratchDatabase db_;
  std::unique_ptr<TestServer> a_;
  std::unique_ptr<TestServer> b_;
  int64_t owner_ = 0;
};

TEST_F(OAuthClientCacheTest, ARevokedSecretIsRefusedAtOnceHereAndWithinASecondElsewhere) {
  const OAuthGrant grant = GrantOAuthToken(*a_, db_, owner_, owner_, {}, {});
  ASSERT_FALSE(grant.access_token.empty());
  const std::string id = grant.client_id, old_secret = grant.client_secret;
  const std::string old_secret_id =
      db_.QueryValue("SELECT MIN(id) FROM oauth_client_secrets WHERE client_id = '" + id + "'");
  // The rotation's first half: a second secret.
  CliResult generated = a_->Cli({"admin", "oauth-client", "secret", "generate", id});
  ASSERT_EQ(generated.exit_code, 0) << generated.err;
  const std::string new_secret = generated.Json().value("client_secret", "");
  ASSERT_FALSE(new_secret.empty());

  // The owner revokes the old secret on A's settings page.
  HttpClient http;
  std::string why;
  const std::string session = SignInBrowser(http, a_->app(), "owner@example.com", kPassword, &why);
  ASSERT_FALSE(session.empty()) << why;
  const std::string page = "/settings/developer/oauth/" + id;
  const std::string csrf = CsrfFieldOf(http.Get(a_->app() + page, {"Cookie: " + session}).body);
  ASSERT_FALSE(csrf.empty());
  // Both instances authenticate the client from memory, right before the revocation.
  ASSERT_TRUE(ServedFromCache(*b_, id, new_secret, grant.access_token));
  ASSERT_TRUE(ServedFromCache(*b_, id, old_secret, grant.access_token));
  ASSERT_TRUE(ServedFromCache(*a_, id, old_secret, grant.access_token));
  HttpResult revoked = http.Request(
      "POST", a_->app() + page + "/secrets/" + old_secret_id + "/revoke", "csrf_token=" + FormEncode(csrf),
      {"Cookie: " + session, "Content-Type: application/x-www-form-urlencoded"});
  const Clock::time_point revoked_at = Clock::now();
  ASSERT_EQ(revoked.status, 303) << revoked.body.substr(0, 300);

  EXPECT_EQ(Introspect(*a_, id, old_secret, grant.access_token), 401)
      << "the revoking instance still accepts the revoked secret";
  EXPECT_TRUE(Eventually(
      "instance B refusing the revoked secret",
      {kOtherInstanceBound - std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - revoked_at),
       std::chrono::milliseconds(10)},
      [&] { return Introspect(*b_, id, old_secret, grant.access_token) == 401; }));
  EXPECT_EQ(Introspect(*a_, id, old_secret, grant.access_token), 401);
  // The other secret keeps working on both, from memory again.
  EXPECT_TRUE(ServedFromCache(*a_, id, new_secret, grant.access_token));
  EXPECT_TRUE(ServedFromCache(*b_, id, new_secret, grant.access_token));
  EXPECT_EQ(Introspect(*b_, id, old_secret, grant.access_token), 401);
  // The log row the revocation wrote with it.
  EXPECT_EQ(
      db_.QueryValue("SELECT COUNT(*) FROM oauth_revocations WHERE kind = 'client' AND subject = '" + id +
                     "' AND created_at >= (SELECT revoked_at FROM oauth_client_secrets WHERE id = " +
                     old_secret_id + ")"),
      "1");
}

TEST_F(OAuthClientCacheTest, MadeUpClientIdsAreRefusedAndNotKept) {
  const OAuthGrant grant = GrantOAuthToken(*a_, db_, owner_, owner_, {}, {});
  ASSERT_FALSE(grant.access_token.empty());
  ASSERT_TRUE(ServedFromCache(*a_, grant.client_id, grant.client_secret, grant.access_token));
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(Introspect(*a_, "made-up-client-" + std::to_string(i), "secret", grant.access_token), 401);
  }
  // The gauge follows the feed's rounds: it settles at the one real client. (The client is
  // introspected again meanwhile: the log rows of its creation and review, written just before,
  // may drop it when a feed round reads them after it was first cached.)
  EXPECT_TRUE(
      Eventually("the entries gauge at 1", {std::chrono::seconds(5), std::chrono::milliseconds(50)}, [&] {
        return Introspect(*a_, grant.client_id, grant.client_secret, grant.access_token) == 200 &&
               Sample(*a_, "oauth_client_cache_entries ") == 1.0;
      }));
  // A wrong secret for a real client is refused from memory too.
  EXPECT_EQ(Introspect(*a_, grant.client_id, grant.client_secret + "x", grant.access_token), 401);
}

}  // namespace
}  // namespace rendezvous::testing
