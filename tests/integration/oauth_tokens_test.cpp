// The token endpoint, refresh, revocation, introspection, metadata, bearer resolution and
// managed-user tokens against the real binary and a real MariaDB. Authorization codes are
// inserted directly (their hash, as the consent page would store it); the browser tests cover
// the pages that issue them.
#include <memory>
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

constexpr const char* kRedirect = kTestRedirectUri;

enum class Encoding { kJson, kForm };

class OAuthTokensBase : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(""); }

  void StartServer(const std::string& plugins) {
    NewServer(plugins);
    server_->Migrate();
    owner_ = server_->CreateUser("owner@example.com", "Owner");
    user_ = server_->CreateUser("user@example.com", "User");
    std::string why;
    ASSERT_TRUE(server_->Start(&why)) << why;
  }

  // Stops the server and starts another with `plugins` over the same database.
  void RestartServer(const std::string& plugins) {
    server_->Stop();
    server_.reset();
    NewServer(plugins);
    std::string why;
    ASSERT_TRUE(server_->Start(&why)) << why;
  }

  void NewServer(const std::string& plugins) {
    TestServerOptions o;
    o.plugins = plugins;
    o.server_extra = server_extra_;
    server_ = std::make_unique<TestServer>(db_.name(), o);
  }

  json Cli(const std::vector<std::string>& args) const {
    CliResult r = server_->Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.Json();
  }
  // A client of owner_ (no scopes: legacy), approved unless `approve` is false.
  json CreateClient(const std::vector<std::string>& scopes, bool is_public = false, bool approve = true) const {
    std::vector<std::string> args = {"admin", "oauth-client", "create", "--owner-id", std::to_string(owner_),
                                     "--name", "App", "--redirect-uri", kRedirect};
    for (const auto& s : scopes) args.insert(args.end(), {"--scope", s});
    if (is_public) args.push_back("--public");
    json c = Cli(args);
    if (approve) Cli({"admin", "oauth-client", "review", c["client_id"], "--accept"});
    return c;
  }

  // Inserts an authorization code row as the consent page stores it; returns the code.
  std::string InsertCode(const std::string& client_id, int64_t user_id, const std::vector<std::string>& scopes,
                         bool all_scopes = false, const std::string& challenge = "", int expires_in = 600) {
    return InsertAuthorizationCode(db_, client_id, user_id, scopes, all_scopes, challenge, expires_in);
  }

  std::string TokenUrl() const { return server_->api() + "/v2/auth/oauth2/token"; }

  // POSTs the parameters in the given encoding (empty values are left out).
  HttpResult Post(const std::string& url, const std::vector<std::pair<std::string, std::string>>& params,
                  Encoding enc, std::vector<std::string> headers = {}) {
    std::string body;
    if (enc == Encoding::kJson) {
      json j = json::object();
      for (const auto& [k, v] : params) {
        if (!v.empty()) j[k] = v;
      }
      body = j.dump();
      headers.push_back("Content-Type: application/json");
    } else {
      for (const auto& [k, v] : params) {
        if (v.empty()) continue;
        body += (body.empty() ? "" : "&") + FormEncode(k) + "=" + FormEncode(v);
      }
      headers.push_back("Content-Type: application/x-www-form-urlencoded");
    }
    return http_.Request("POST", url, body, headers);
  }
  HttpResult Token(const std::vector<std::pair<std::string, std::string>>& params, std::vector<std::string> headers = {}) {
    return Post(TokenUrl(), params, enc_, std::move(headers));
  }
  HttpResult Exchange(const json& client, const std::string& code, const std::string& verifier = "",
                      const std::string& redirect = kRedirect) {
    return Token({{"grant_type", "authorization_code"},
                  {"client_id", client["client_id"]},
                  {"client_secret", client.value("client_secret", "")},
                  {"code", code},
                  {"redirect_uri", redirect},
                  {"code_verifier", verifier}});
  }
  HttpResult RefreshWith(const json& client, const std::string& refresh_token) {
    return Token({{"grant_type", "refresh_token"},
                  {"client_id", client["client_id"]},
                  {"client_secret", client.value("client_secret", "")},
                  {"refresh_token", refresh_token}});
  }
  HttpResult Me(const std::string& token) {
    return http_.Get(server_->api() + "/v2/me", {"Authorization: Bearer " + token, "service-api-version: 2024-08-13"});
  }

  // Every token endpoint answer: no caching.
  static void ExpectNoStore(const HttpResult& r) {
    EXPECT_EQ(r.Header("cache-control"), "no-store") << r.body;
    EXPECT_EQ(r.Header("pragma"), "no-cache") << r.body;
  }
  static void ExpectError(const HttpResult& r, long status, const std::string& error, const std::string& description) {
    EXPECT_EQ(r.status, status) << r.body;
    json j = r.Json();
    EXPECT_EQ(j.value("error", ""), error) << r.body;
    EXPECT_EQ(j.value("error_description", ""), description) << r.body;
    EXPECT_FALSE(j.contains("status")) << "token errors are not in the envelope: " << r.body;
    ExpectNoStore(r);
  }
  static json ExpectTokens(const HttpResult& r) {
    EXPECT_EQ(r.status, 200) << r.body;
    ExpectNoStore(r);
    json j = r.Json();
    EXPECT_TRUE(j.value("access_token", "").size() >= 43) << r.body;
    EXPECT_TRUE(j.value("refresh_token", "").size() >= 43) << r.body;
    EXPECT_EQ(j.value("token_type", ""), "bearer");
    EXPECT_EQ(j.value("expires_in", 0), 1800);
    EXPECT_TRUE(j.contains("scope") && j["scope"].is_string()) << r.body;
    return j;
  }

  std::string server_extra_;  // YAML under `server:` for the next server started
  ScratchDatabase db_;
  std::unique_ptr<TestServer> server_;
  HttpClient http_;
  int64_t owner_ = 0;
  int64_t user_ = 0;
  Encoding enc_ = Encoding::kJson;
};

class OAuthTokens : public OAuthTokensBase, public ::testing::WithParamInterface<Encoding> {
 protected:
  void SetUp() override {
    enc_ = GetParam();
    OAuthTokensBase::SetUp();
  }
};

// --- §7.2, every row, in JSON and in form encoding -------------------------------------------

TEST_P(OAuthTokens, ErrorTableRows) {
  json c = CreateClient({"PROFILE_READ"});
  const std::string id = c["client_id"], secret = c["client_secret"];

  ExpectError(Token({{"grant_type", "authorization_code"}, {"client_id", id}, {"client_secret", secret},
                     {"code", "no-such-code"}, {"redirect_uri", kRedirect}}),
              400, "invalid_grant", "code_invalid_or_expired");
  ExpectError(Token({{"grant_type", "refresh_token"}, {"client_id", id}, {"client_secret", secret},
                     {"refresh_token", "rdvrt_not-a-real-token-at-all-000000000000000000"}}),
              400, "invalid_grant", "invalid_refresh_token");
  ExpectError(Token({{"grant_type", "refresh_token"}, {"client_id", id}, {"client_secret", secret},
                     {"refresh_token", "garbage"}}),
              400, "invalid_grant", "invalid_refresh_token");
  ExpectError(Token({{"grant_type", "authorization_code"}, {"client_id", id}, {"client_secret", "rdvcs_wrong"},
                     {"code", "x"}, {"redirect_uri", kRedirect}}),
              401, "invalid_client", "invalid_client_credentials");
  ExpectError(Token({{"grant_type", "authorization_code"}, {"client_id", id}, {"code", "x"}, {"redirect_uri", kRedirect}}),
              401, "invalid_client", "invalid_client_credentials");
  ExpectError(Token({{"grant_type", "authorization_code"}, {"client_id", "nosuchclient"}, {"client_secret", secret},
                     {"code", "x"}, {"redirect_uri", kRedirect}}),
              401, "invalid_client", "client_not_found");
  ExpectError(Token({{"grant_type", "authorization_code"}, {"client_secret", secret}, {"code", "x"},
                     {"redirect_uri", kRedirect}}),
              400, "invalid_request", "client_id is required");
  // The refresh grant authenticates the client in the same query that reads the token: the
  // client rows come first there too, whatever the token (live, unknown or malformed).
  json live = ExpectTokens(Exchange(c, InsertCode(id, user_, {"PROFILE_READ"})));
  for (const std::string& token : {std::string(live["refresh_token"]), std::string("garbage"),
                                  std::string("rdvrt_not-a-real-token-at-all-000000000000000000")}) {
    ExpectError(Token({{"grant_type", "refresh_token"}, {"client_id", id}, {"client_secret", "rdvcs_wrong"},
                       {"refresh_token", token}}),
                401, "invalid_client", "invalid_client_credentials");
    ExpectError(Token({{"grant_type", "refresh_token"}, {"client_id", id}, {"refresh_token", token}}), 401,
                "invalid_client", "invalid_client_credentials");
    ExpectError(Token({{"grant_type", "refresh_token"}, {"client_id", "nosuchclient"}, {"client_secret", secret},
                       {"refresh_token", token}}),
                401, "invalid_client", "client_not_found");
  }
  // Another client's valid credentials do not make its refresh token usable.
  json other = CreateClient({"PROFILE_READ"});
  ExpectError(RefreshWith(other, live["refresh_token"]), 400, "invalid_grant", "invalid_refresh_token");
  // None of the refused attempts rotated the token.
  ExpectTokens(RefreshWith(c, live["refresh_token"]));
  ExpectError(Token({{"grant_type", "password"}, {"client_id", id}, {"client_secret", secret}}), 400,
              "invalid_request", "grant_type must be 'authorization_code' or 'refresh_token'");
  ExpectError(Token({{"client_id", id}, {"client_secret", secret}}), 400, "invalid_request",
              "grant_type must be 'authorization_code' or 'refresh_token'");
}

TEST_P(OAuthTokens, CodeExchangeRefreshAndVerifyCall) {
  json c = CreateClient({"PROFILE_READ", "BOOKING_READ"});
  json t = ExpectTokens(Exchange(c, InsertCode(c["client_id"], user_, {"PROFILE_READ", "BOOKING_READ"})));
  EXPECT_EQ(t["scope"], "PROFILE_READ BOOKING_READ");
  HttpResult me = Me(t["access_token"]);
  ASSERT_EQ(me.status, 200) << me.body;
  EXPECT_EQ(me.Json()["data"]["id"], user_);
  EXPECT_EQ(me.Json()["data"]["email"], "user@example.com");

  json t2 = ExpectTokens(RefreshWith(c, t["refresh_token"]));
  EXPECT_EQ(t2["scope"], "PROFILE_READ BOOKING_READ");  // preserved, not re-requested
  EXPECT_NE(t2["access_token"], t["access_token"]);
  EXPECT_NE(t2["refresh_token"], t["refresh_token"]);
  EXPECT_EQ(Me(t2["access_token"]).status, 200);
  // Stored only as hashes.
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM oauth_access_tokens WHERE token_hash = '" +
                           HexEncode(Sha256Raw(t2["access_token"])) + "'"), "1");
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM oauth_access_tokens WHERE token_hash = '" +
                           std::string(t2["access_token"]) + "'"), "0");
}

TEST_P(OAuthTokens, HttpBasicClientAuthentication) {
  json c = CreateClient({"PROFILE_READ"});
  const std::string id = c["client_id"], secret = c["client_secret"];
  const std::string basic = "Authorization: Basic " + Base64Encode(FormEncode(id) + ":" + FormEncode(secret));
  ExpectTokens(Token({{"grant_type", "authorization_code"}, {"code", InsertCode(id, user_, {"PROFILE_READ"})},
                      {"redirect_uri", kRedirect}}, {basic}));

  const std::string wrong = "Authorization: Basic " + Base64Encode(FormEncode(id) + ":wrong");
  HttpResult r = Token({{"grant_type", "authorization_code"}, {"code", "x"}, {"redirect_uri", kRedirect}}, {wrong});
  ExpectError(r, 401, "invalid_client", "invalid_client_credentials");
  EXPECT_EQ(r.Header("www-authenticate"), "Basic realm=\"rendezvous\"");
  // Without Basic, no Basic challenge.
  HttpResult r2 = Token({{"grant_type", "authorization_code"}, {"client_id", id}, {"client_secret", "wrong"},
                         {"code", "x"}, {"redirect_uri", kRedirect}});
  EXPECT_EQ(r2.Header("www-authenticate"), "");
}

TEST_P(OAuthTokens, PkcePublicAndDowngradeProtection) {
  json pub = CreateClient({"PROFILE_READ"}, /*is_public=*/true);
  EXPECT_FALSE(pub.contains("client_secret"));
  const std::string id = pub["client_id"];
  const std::string verifier = "verifier-0123456789-0123456789-0123456789-abcdefgh";
  ExpectTokens(Exchange(pub, InsertCode(id, user_, {"PROFILE_READ"}, false, S256Challenge(verifier)), verifier));
  // Wrong verifier.
  ExpectError(Exchange(pub, InsertCode(id, user_, {"PROFILE_READ"}, false, S256Challenge(verifier)),
                       "another-verifier-0123456789-0123456789-0123456789"),
              400, "invalid_grant", "code_invalid_or_expired");
  // A public client must send a verifier.
  HttpResult none = Exchange(pub, InsertCode(id, user_, {"PROFILE_READ"}, false, S256Challenge(verifier)));
  EXPECT_EQ(none.status, 400);
  EXPECT_EQ(none.Json().value("error", ""), "invalid_request");
  ExpectNoStore(none);
  // A secret is not a public client's credential.
  ExpectError(Token({{"grant_type", "authorization_code"}, {"client_id", id}, {"client_secret", "rdvcs_x"},
                     {"code", "x"}, {"redirect_uri", kRedirect}, {"code_verifier", verifier}}),
              401, "invalid_client", "invalid_client_credentials");

  json conf = CreateClient({"PROFILE_READ"});
  // Verifier without a challenge (downgrade) and challenge without a verifier.
  ExpectError(Exchange(conf, InsertCode(conf["client_id"], user_, {"PROFILE_READ"}), verifier), 400, "invalid_grant",
              "code_invalid_or_expired");
  ExpectError(Exchange(conf, InsertCode(conf["client_id"], user_, {"PROFILE_READ"}, false, S256Challenge(verifier))), 400,
              "invalid_grant", "code_invalid_or_expired");
  // A confidential client with a challenge and the right verifier works too.
  ExpectTokens(Exchange(conf, InsertCode(conf["client_id"], user_, {"PROFILE_READ"}, false, S256Challenge(verifier)), verifier));
}

TEST_P(OAuthTokens, CodeBindingExpiryAndReplay) {
  json c = CreateClient({"PROFILE_READ"});
  json other = CreateClient({"PROFILE_READ"});
  ExpectError(Exchange(c, InsertCode(c["client_id"], user_, {"PROFILE_READ"}), "", "https://app.example.com/other"),
              400, "invalid_grant", "code_invalid_or_expired");
  ExpectError(Exchange(other, InsertCode(c["client_id"], user_, {"PROFILE_READ"})), 400, "invalid_grant",
              "code_invalid_or_expired");
  ExpectError(Exchange(c, InsertCode(c["client_id"], user_, {"PROFILE_READ"}, false, "", -1)), 400, "invalid_grant",
              "code_invalid_or_expired");

  const std::string code = InsertCode(c["client_id"], user_, {"PROFILE_READ"});
  json t = ExpectTokens(Exchange(c, code));
  ASSERT_EQ(Me(t["access_token"]).status, 200);
  ExpectError(Exchange(c, code), 400, "invalid_grant", "code_invalid_or_expired");
  // The replay revoked what the code had issued.
  HttpResult me = Me(t["access_token"]);
  EXPECT_EQ(me.status, 401) << me.body;
  EXPECT_NE(me.Header("www-authenticate").find("invalid_token"), std::string::npos);
  ExpectError(RefreshWith(c, t["refresh_token"]), 400, "invalid_grant", "invalid_refresh_token");
}

TEST_P(OAuthTokens, RefreshRotationAndReuseDetection) {
  json c = CreateClient({"PROFILE_READ"});
  json t1 = ExpectTokens(Exchange(c, InsertCode(c["client_id"], user_, {"PROFILE_READ"})));
  json t2 = ExpectTokens(RefreshWith(c, t1["refresh_token"]));
  ExpectError(RefreshWith(c, t1["refresh_token"]), 400, "invalid_grant", "refresh_token_revoked");
  // The whole grant is dead: the new refresh token and the access tokens.
  ExpectError(RefreshWith(c, t2["refresh_token"]), 400, "invalid_grant", "invalid_refresh_token");
  EXPECT_EQ(Me(t2["access_token"]).status, 401);
  EXPECT_EQ(Me(t1["access_token"]).status, 401);
  // Another client cannot use someone else's refresh token.
  json c2 = CreateClient({"PROFILE_READ"});
  json t3 = ExpectTokens(Exchange(c2, InsertCode(c2["client_id"], user_, {"PROFILE_READ"})));
  ExpectError(RefreshWith(c, t3["refresh_token"]), 400, "invalid_grant", "invalid_refresh_token");
  ExpectTokens(RefreshWith(c2, t3["refresh_token"]));  // and that attempt did not hurt it
}

TEST_P(OAuthTokens, AccessTokenExpiry) {
  json c = CreateClient({"PROFILE_READ"});
  json t = ExpectTokens(Exchange(c, InsertCode(c["client_id"], user_, {"PROFILE_READ"})));
  const std::string hash = HexEncode(Sha256Raw(t["access_token"]));
  // 1800 s from issue.
  const std::string ttl = db_.QueryValue("SELECT TIMESTAMPDIFF(SECOND, created_at, expires_at) FROM oauth_access_tokens"
                                         " WHERE token_hash = '" + hash + "'");
  EXPECT_EQ(ttl, "1800");
  db_.Exec("UPDATE oauth_access_tokens SET expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE token_hash = '" + hash + "'");
  HttpResult me = Me(t["access_token"]);
  EXPECT_EQ(me.status, 401);
  EXPECT_EQ(me.Header("www-authenticate"), "Bearer error=\"invalid_token\"");
  // The refresh token still works.
  json t2 = ExpectTokens(RefreshWith(c, t["refresh_token"]));
  EXPECT_EQ(Me(t2["access_token"]).status, 200);
}

TEST_P(OAuthTokens, ScopeEnforcementAndLegacyTokens) {
  json c = CreateClient({"PROFILE_READ", "PROFILE_WRITE"});
  json w = ExpectTokens(Exchange(c, InsertCode(c["client_id"], user_, {"PROFILE_WRITE"})));
  EXPECT_EQ(w["scope"], "PROFILE_WRITE");
  HttpResult me = Me(w["access_token"]);
  EXPECT_EQ(me.status, 403) << me.body;
  EXPECT_EQ(me.Json()["error"]["code"], "insufficient_scope");
  EXPECT_NE(me.Header("www-authenticate").find("insufficient_scope"), std::string::npos);
  HttpResult patch = http_.Request("PATCH", server_->api() + "/v2/me", R"({"name":"Renamed"})",
                                   {"Authorization: Bearer " + std::string(w["access_token"]),
                                    "Content-Type: application/json"});
  EXPECT_EQ(patch.status, 200) << patch.body;

  // A legacy client's all-scopes grant passes every scope check; its scope is the client's (none).
  json legacy = CreateClient({});
  json l = ExpectTokens(Exchange(legacy, InsertCode(legacy["client_id"], user_, {}, true)));
  EXPECT_EQ(l["scope"], "");
  EXPECT_EQ(Me(l["access_token"]).status, 200);
  // A token requested with a scope carries only that scope, even for a legacy client (§5.5 step 1).
  json ls = ExpectTokens(Exchange(legacy, InsertCode(legacy["client_id"], user_, {"BOOKING_READ"})));
  EXPECT_EQ(ls["scope"], "BOOKING_READ");
  EXPECT_EQ(Me(ls["access_token"]).status, 403);
}

TEST_P(OAuthTokens, SecretRotationAtTheTokenEndpoint) {
  json c = CreateClient({"PROFILE_READ"});
  const std::string id = c["client_id"];
  json t = ExpectTokens(Exchange(c, InsertCode(id, user_, {"PROFILE_READ"})));
  json gen = Cli({"admin", "oauth-client", "secret", "generate", id});
  const std::string new_secret = gen["client_secret"];
  // Both work while both are active.
  ExpectTokens(Exchange(c, InsertCode(id, user_, {"PROFILE_READ"})));
  json c_new = c;
  c_new["client_secret"] = new_secret;
  json t2 = ExpectTokens(RefreshWith(c_new, t["refresh_token"]));
  // Revoke the old one: it fails at once; the new one works; tokens issued before stay valid.
  json shown = Cli({"admin", "oauth-client", "show", id});
  int64_t old_id = 0;
  for (const auto& s : shown["secrets"]) {
    if (s["secret_id"] != gen["secret_id"]) old_id = s["secret_id"];
  }
  ASSERT_NE(old_id, 0);
  Cli({"admin", "oauth-client", "secret", "revoke", id, std::to_string(old_id)});
  ExpectError(RefreshWith(c, t2["refresh_token"]), 401, "invalid_client", "invalid_client_credentials");
  EXPECT_EQ(Me(t2["access_token"]).status, 200);
  ExpectTokens(RefreshWith(c_new, t2["refresh_token"]));
}

TEST_P(OAuthTokens, RejectedAndPendingClients) {
  json c = CreateClient({"PROFILE_READ"});
  const std::string id = c["client_id"];
  json t = ExpectTokens(Exchange(c, InsertCode(id, user_, {"PROFILE_READ"})));
  const std::string pending_code = InsertCode(id, user_, {"PROFILE_READ"});
  // A name change sends it back to review; the reviewer rejects it.
  Cli({"admin", "oauth-client", "update", id, "--name", "Renamed App"});
  // Pending: another user's grant no longer works, the owner's does.
  ExpectError(Exchange(c, pending_code), 400, "unauthorized_client",
              "the OAuth client is pending review; only its owner can use it");
  ExpectTokens(Exchange(c, InsertCode(id, owner_, {"PROFILE_READ"})));
  Cli({"admin", "oauth-client", "review", id, "--reject", "--reason", "no"});
  HttpResult r = RefreshWith(c, t["refresh_token"]);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.Json().value("error", ""), "unauthorized_client");
  ExpectNoStore(r);
  EXPECT_EQ(Me(t["access_token"]).status, 401);
  HttpResult r2 = Exchange(c, InsertCode(id, owner_, {"PROFILE_READ"}));
  EXPECT_EQ(r2.Json().value("error", ""), "unauthorized_client");
}

TEST_P(OAuthTokens, RevocationAndIntrospection) {
  json c = CreateClient({"PROFILE_READ", "BOOKING_READ"});
  json other = CreateClient({"PROFILE_READ"});
  const std::string id = c["client_id"], secret = c["client_secret"];
  json t = ExpectTokens(Exchange(c, InsertCode(id, user_, {"PROFILE_READ", "BOOKING_READ"})));
  const std::string intro = server_->api() + "/v2/auth/oauth2/introspect";
  const std::string revoke = server_->api() + "/v2/auth/oauth2/revoke";

  HttpResult i = Post(intro, {{"client_id", id}, {"client_secret", secret}, {"token", t["access_token"]}}, enc_);
  ASSERT_EQ(i.status, 200) << i.body;
  ExpectNoStore(i);
  json j = i.Json();
  EXPECT_EQ(j["active"], true);
  EXPECT_EQ(j["scope"], "PROFILE_READ BOOKING_READ");
  EXPECT_EQ(j["client_id"], id);
  EXPECT_EQ(j["sub"], std::to_string(user_));
  EXPECT_EQ(j["token_type"], "bearer");
  ASSERT_TRUE(j["exp"].is_number_integer() && j["iat"].is_number_integer()) << i.body;
  EXPECT_EQ(j["exp"].get<int64_t>() - j["iat"].get<int64_t>(), 1800);
  // Another client sees nothing; bad credentials are refused.
  HttpResult io = Post(intro, {{"client_id", other["client_id"]}, {"client_secret", other["client_secret"]},
                               {"token", t["access_token"]}}, enc_);
  EXPECT_EQ(io.Json(), json({{"active", false}}));
  ExpectError(Post(intro, {{"client_id", id}, {"client_secret", "wrong"}, {"token", t["access_token"]}}, enc_),
              401, "invalid_client", "invalid_client_credentials");
  ExpectError(Post(intro, {{"client_id", id}, {"client_secret", secret}}, enc_), 400, "invalid_request",
              "token is required");

  // Unknown tokens: 200 {}.
  HttpResult ru = Post(revoke, {{"client_id", id}, {"client_secret", secret}, {"token", "nonsense"}}, enc_);
  EXPECT_EQ(ru.status, 200);
  EXPECT_EQ(ru.Json(), json::object());
  // Another client cannot revoke it.
  Post(revoke, {{"client_id", other["client_id"]}, {"client_secret", other["client_secret"]},
                {"token", t["access_token"]}}, enc_);
  EXPECT_EQ(Me(t["access_token"]).status, 200);
  // The access token alone.
  HttpResult ra = Post(revoke, {{"client_id", id}, {"client_secret", secret}, {"token", t["access_token"]}}, enc_);
  EXPECT_EQ(ra.status, 200);
  ExpectNoStore(ra);
  EXPECT_EQ(Me(t["access_token"]).status, 401);
  EXPECT_EQ(Post(intro, {{"client_id", id}, {"client_secret", secret}, {"token", t["access_token"]}}, enc_).Json(),
            json({{"active", false}}));
  HttpResult ir = Post(intro, {{"client_id", id}, {"client_secret", secret}, {"token", t["refresh_token"]}}, enc_);
  EXPECT_EQ(ir.Json().value("active", false), true) << ir.body;
  // The refresh token: the whole grant.
  json t2 = ExpectTokens(RefreshWith(c, t["refresh_token"]));
  Post(revoke, {{"client_id", id}, {"client_secret", secret}, {"token", t2["refresh_token"]}, {"token_type_hint", "refresh_token"}},
       enc_);
  EXPECT_EQ(Me(t2["access_token"]).status, 401);
  ExpectError(RefreshWith(c, t2["refresh_token"]), 400, "invalid_grant", "invalid_refresh_token");
}

INSTANTIATE_TEST_SUITE_P(Encodings, OAuthTokens, ::testing::Values(Encoding::kJson, Encoding::kForm),
                         [](const ::testing::TestParamInfo<Encoding>& info) {
                           return info.param == Encoding::kJson ? std::string("Json") : std::string("Form");
                         });

// --- tests that do not depend on the body encoding -------------------------------------------

class OAuthTokensMisc : public OAuthTokensBase {};

TEST_F(OAuthTokensMisc, MetadataDocument) {
  HttpResult r = http_.Get(server_->api() + "/.well-known/oauth-authorization-server");
  ASSERT_EQ(r.status, 200) << r.body;
  json m = r.Json();
  EXPECT_EQ(m["issuer"], "http://127.0.0.1:8080");
  EXPECT_EQ(m["authorization_endpoint"], "http://127.0.0.1:8081/auth/oauth2/authorize");
  EXPECT_EQ(m["token_endpoint"], "http://127.0.0.1:8080/v2/auth/oauth2/token");
  EXPECT_EQ(m["revocation_endpoint"], "http://127.0.0.1:8080/v2/auth/oauth2/revoke");
  EXPECT_EQ(m["introspection_endpoint"], "http://127.0.0.1:8080/v2/auth/oauth2/introspect");
  EXPECT_EQ(m["response_types_supported"], json({"code"}));
  EXPECT_EQ(m["grant_types_supported"], json({"authorization_code", "refresh_token"}));
  EXPECT_EQ(m["code_challenge_methods_supported"], json({"S256"}));
  EXPECT_EQ(m["token_endpoint_auth_methods_supported"], json({"client_secret_post", "client_secret_basic", "none"}));
  ASSERT_TRUE(m["scopes_supported"].is_array());
  std::set<std::string> scopes(m["scopes_supported"].begin(), m["scopes_supported"].end());
  for (const char* s : {"EVENT_TYPE_READ", "BOOKING_READ", "PROFILE_READ", "PROFILE_WRITE", "VERIFIED_RESOURCES_WRITE"}) {
    EXPECT_TRUE(scopes.count(s)) << s;
  }
}

TEST_F(OAuthTokensMisc, ManagedUserTokens) {
  json c = CreateClient({"PROFILE_READ", "BOOKING_READ"});
  const std::string id = c["client_id"];
  CliResult r = server_->Cli({"admin", "managed-user", "create", "--client-id", id, "--email", "managed@example.com",
                              "--name", "Managed", "--time-zone", "Europe/Berlin"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json m = r.Json();
  ASSERT_TRUE(m["id"].is_number_integer()) << r.out;
  EXPECT_EQ(m["expires_in"], 1800);
  const std::string access = m.value("access_token", ""), refresh = m.value("refresh_token", "");
  ASSERT_FALSE(access.empty());
  ASSERT_FALSE(refresh.empty());
  EXPECT_EQ(db_.QueryValue("SELECT kind FROM oauth_grants WHERE user_id = " + std::to_string(m["id"].get<int64_t>())),
            "managed");
  // A managed user's token acts as that user (DESIGN §10), with its client's scopes.
  HttpResult me = Me(access);
  EXPECT_EQ(me.status, 200) << me.body;
  EXPECT_EQ(me.Json()["data"]["id"], m["id"]) << me.body;
  EXPECT_EQ(db_.QueryValue("SELECT client_id FROM oauth_managed_users WHERE user_id = " +
                           std::to_string(m["id"].get<int64_t>())),
            id);
  // The token is live: the client's introspection sees it, with all the client's scopes.
  HttpResult i = Post(server_->api() + "/v2/auth/oauth2/introspect",
                      {{"client_id", id}, {"client_secret", c["client_secret"]}, {"token", access}}, enc_);
  EXPECT_EQ(i.Json().value("active", false), true) << i.body;
  EXPECT_EQ(i.Json().value("scope", ""), "PROFILE_READ BOOKING_READ");
  // Refreshable through the token endpoint with the client's credentials.
  HttpResult t = RefreshWith(c, refresh);
  json tj = ExpectTokens(t);
  EXPECT_EQ(tj["scope"], "PROFILE_READ BOOKING_READ");
  EXPECT_EQ(Me(tj["access_token"]).status, 200);

  // Bad uses of the command.
  EXPECT_NE(server_->Cli({"admin", "managed-user", "create", "--client-id", "nosuch", "--email", "x@example.com",
                          "--name", "X"}).exit_code, 0);
  EXPECT_NE(server_->Cli({"admin", "managed-user", "create", "--client-id", id, "--email", "managed@example.com",
                          "--name", "Again"}).exit_code, 0);  // the e-mail is taken
  EXPECT_NE(server_->Cli({"admin", "managed-user", "create", "--email", "y@example.com"}).exit_code, 0);
}

TEST_F(OAuthTokensMisc, RefreshTokenLifetimeFromConfig) {
  ASSERT_NO_FATAL_FAILURE(RestartServer("oauth:\n  refresh_token_ttl: 60\n"));
  json c = CreateClient({"PROFILE_READ"});
  json t = ExpectTokens(Exchange(c, InsertCode(c["client_id"], user_, {"PROFILE_READ"})));
  const std::string hash = HexEncode(Sha256Raw(t["refresh_token"]));
  EXPECT_EQ(db_.QueryValue("SELECT TIMESTAMPDIFF(SECOND, created_at, expires_at) FROM oauth_refresh_tokens"
                           " WHERE token_hash = '" + hash + "'"), "60");
  db_.Exec("UPDATE oauth_refresh_tokens SET expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE token_hash = '" +
           hash + "'");
  ExpectError(RefreshWith(c, t["refresh_token"]), 400, "invalid_grant", "invalid_refresh_token");
}

TEST_F(OAuthTokensMisc, ATwoSecondAccessTokenIsAcceptedAndExpires) {
  ASSERT_NO_FATAL_FAILURE(RestartServer("oauth:\n  access_token_ttl: 2\n"));
  EXPECT_TRUE(server_->AwaitLog("a lifetime under a minute is meant for tests"));
  json c = CreateClient({"PROFILE_READ"});
  HttpResult exchanged = Exchange(c, InsertCode(c["client_id"], user_, {"PROFILE_READ"}));
  ASSERT_EQ(exchanged.status, 200) << exchanged.body;
  json t = exchanged.Json();
  EXPECT_EQ(t["expires_in"], 2);
  const std::vector<std::string> auth = {"Authorization: Bearer " + t["access_token"].get<std::string>()};
  EXPECT_EQ(http_.Get(server_->api() + "/v2/me", auth).status, 200);
  // Awaited, bounded: the token stops working once its two seconds are over.
  int status = 200;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (status == 200 && std::chrono::steady_clock::now() < deadline)
    status = http_.Get(server_->api() + "/v2/me", auth).status;
  EXPECT_EQ(status, 401);
}

// Pushed authorization requests (RFC 9126) bounded per client and client address: strangers who
// know a public client's id cannot spend its real users' pushes. The server trusts the loopback
// peer as a proxy, so X-Forwarded-For names the client address of each push.
class OAuthPushedRequests : public OAuthTokensBase {
 protected:
  void SetUp() override {
    server_extra_ = "trusted_proxies: [\"127.0.0.1\"]\n";
    StartServer("");
  }

  // A public client that accepts only pushed requests, as in `--require-par`.
  json StrictPublicClient() const {
    json c = Cli({"admin", "oauth-client", "create", "--owner-id", std::to_string(owner_), "--name", "Strict",
                  "--redirect-uri", kRedirect, "--scope", "BOOKING_READ", "--public", "--require-par"});
    Cli({"admin", "oauth-client", "review", c["client_id"], "--accept"});
    return c;
  }

  // An anonymous push for `client_id`, as relayed by the trusted proxy for `forwarded_for`.
  HttpResult PushFrom(const std::string& forwarded_for, const std::string& client_id) {
    return Post(server_->api() + "/v2/auth/oauth2/par",
                {{"client_id", client_id},
                 {"response_type", "code"},
                 {"redirect_uri", kRedirect},
                 {"scope", "BOOKING_READ"},
                 {"code_challenge", S256Challenge("verifier-of-a-pushed-request-0123456789-abcdef")},
                 {"code_challenge_method", "S256"}},
                Encoding::kForm, {"X-Forwarded-For: " + forwarded_for});
  }
};

TEST_F(OAuthPushedRequests, StrangersFromOneAddressDoNotLockOutOtherAddresses) {
  json c = StrictPublicClient();
  ASSERT_EQ(c["require_par"], true);
  const std::string id = c["client_id"];
  for (int i = 0; i < 20; ++i) {
    HttpResult r = PushFrom("198.51.100.7", id);
    ASSERT_EQ(r.status, 201) << i << ": " << r.body;
  }
  // The real user's push from another address succeeds at once.
  HttpResult other = PushFrom("203.0.113.20", id);
  ASSERT_EQ(other.status, 201) << other.body;
  EXPECT_EQ(other.Json()["request_uri"].get<std::string>().rfind("urn:ietf:params:oauth:request_uri:", 0),
            0u);
  // The 21st from the first address is refused, with a clear error and when to try again.
  HttpResult refused = PushFrom("198.51.100.7", id);
  ExpectError(
      refused, 429, "invalid_request",
      "the client holds 20 unused pushed authorization requests from this address; use them or let them "
      "expire");
  EXPECT_EQ(refused.Header("retry-after"), "60");
  // Forging entries left of the proxy's does not pick a fresh share: the proxy's entry names it.
  EXPECT_EQ(PushFrom("192.0.2.99, 198.51.100.7", id).status, 429);
  EXPECT_EQ(
      db_.QueryValue("SELECT COUNT(*) FROM oauth_pushed_requests WHERE client_address = '198.51.100.7'"),
      "20");
  // The server kept serving every other address.
  EXPECT_EQ(PushFrom("2001:db8::5", id).status, 201);
}

TEST_F(OAuthPushedRequests, TheBoundPerAddressComesFromConfig) {
  ASSERT_NO_FATAL_FAILURE(RestartServer("oauth:\n  par_pending_per_address: 2\n"));
  const std::string id = StrictPublicClient()["client_id"];
  EXPECT_EQ(PushFrom("198.51.100.8", id).status, 201);
  EXPECT_EQ(PushFrom("198.51.100.8", id).status, 201);
  HttpResult refused = PushFrom("198.51.100.8", id);
  ExpectError(
      refused, 429, "invalid_request",
      "the client holds 2 unused pushed authorization requests from this address; use them or let them "
      "expire");
  EXPECT_EQ(PushFrom("198.51.100.9", id).status, 201);
}

}  // namespace
}  // namespace rendezvous::testing
