// Pushed authorization requests (RFC 9126) against a real MariaDB through the host's pool:
// PushedRequests (stored hashed, single use under concurrency, bound per client and client address,
// expiry and the purger), the PAR endpoint's handler (client authentication as at the token endpoint, the
// authorization page's validation, its answers) and the clients' require_par setting.
#include <atomic>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "client_commands.hpp"
#include "client_service.hpp"
#include "oauth_test_db.hpp"
#include "par_endpoint.hpp"
#include "pushed_requests.hpp"
#include "rendezvous/crypto.hpp"
#include "token_purger.hpp"

namespace rendezvous::oauth {
namespace {

constexpr const char* kChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";  // RFC 7636 B
constexpr const char* kRedirectEncoded = "https%3A%2F%2Fapp.example.com%2Fcb";
constexpr const char* kAddress = "192.0.2.10";
constexpr size_t kPendingPerAddress = 20;

class NullMailer final : public Mailer {
 public:
  void Send(DbConnection&, const Mail&) override {}
};

class PushedRequestsDb : public OAuthDbTest {
 protected:
  void SetUp() override {
    OpenDatabase(OAuthMigrations());
    clients_ = std::make_unique<ClientService>(*db_, users_, mailer_, logger_);
    pushed_ = std::make_unique<PushedRequests>(*db_, 60, kPendingPerAddress);
    auto confidential = clients_->Create(AppClient(1, {"BOOKING_READ", "PROFILE_READ"}));
    ASSERT_TRUE(confidential.ok()) << confidential.status().message();
    client_id_ = confidential->first.client_id;
    secret_ = *confidential->second;
    ASSERT_TRUE(clients_->Review(client_id_, true, "").ok());
    NewClient pub = AppClient(1, {"BOOKING_READ"});
    pub.kind = ClientKind::kPublic;
    auto created = clients_->Create(pub);
    ASSERT_TRUE(created.ok()) << created.status().message();
    public_id_ = created->first.client_id;
    ASSERT_TRUE(clients_->Review(public_id_, true, "").ok());
  }

  AuthorizeQuery Params(const std::string& client_id) {
    AuthorizeQuery q;
    q.client_id = client_id;
    q.redirect_uri = kAppRedirect;
    q.scope = "BOOKING_READ";
    q.state = "xyz";
    q.pushed = true;
    return q;
  }

  int64_t Count(const std::string& sql) {
    return db_->Run([&](DbConnection& conn) { return conn.QueryOne(sql)->Int(1); });
  }

  Response Post(const std::string& body, const std::optional<std::string>& authorization = std::nullopt) {
    Request req;
    req.method = Method::kPost;
    req.headers["content-type"] = "application/x-www-form-urlencoded";
    if (authorization) req.headers["authorization"] = *authorization;
    req.body = body;
    req.remote_ip = kAddress;
    return HandlePushedAuthorizationRequest(ParEndpointServices{*clients_, *pushed_}, req);
  }

  std::string ConfidentialBody(const std::string& extra = "") {
    return "client_id=" + client_id_ + "&client_secret=" + secret_ +
           "&response_type=code&redirect_uri=" + kRedirectEncoded + "&scope=BOOKING_READ&state=s1" + extra;
  }

  static Json Body(const Response& res) { return Json::parse(res.body); }

  static std::string HeaderOf(const Response& res, const std::string& name) {
    for (const auto& [n, v] : res.headers) {
      if (n == name) return v;
    }
    return "";
  }

  void ExpectError(const Response& res, int status, const std::string& error,
                   const std::string& description = "") {
    EXPECT_EQ(res.status, status) << res.body;
    EXPECT_EQ(Body(res).value("error", ""), error) << res.body;
    if (!description.empty()) {
      EXPECT_EQ(Body(res).value("error_description", ""), description);
    }
    EXPECT_EQ(HeaderOf(res, "Cache-Control"), "no-store");
  }

  NullMailer mailer_;
  std::unique_ptr<ClientService> clients_;
  std::unique_ptr<PushedRequests> pushed_;
  std::string client_id_, secret_, public_id_;
};

TEST_F(PushedRequestsDb, StoredHashedReadUntilConsumedOnce) {
  std::optional<PushedRequest> p = pushed_->Push(client_id_, kAddress, Params(client_id_));
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(IsPushedRequestUri(p->request_uri)) << p->request_uri;
  EXPECT_EQ(p->expires_in, 60);
  EXPECT_NE(pushed_->Push(client_id_, kAddress, Params(client_id_))->request_uri, p->request_uri);
  // Only the hash is stored.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM oauth_pushed_requests WHERE uri_hash = '" +
                  crypto::Sha256Hex(p->request_uri) + "'"),
            1);
  const std::string random = p->request_uri.substr(kRequestUriPrefix.size());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM oauth_pushed_requests WHERE LOCATE('" + random +
                  "', CONCAT(uri_hash, params)) > 0"),
            0);

  // Another client's id finds nothing and leaves it in place.
  EXPECT_EQ(pushed_->Peek(public_id_, p->request_uri), std::nullopt);
  EXPECT_EQ(pushed_->Consume(public_id_, p->request_uri), std::nullopt);
  // Read as often as the page is shown, consumed once.
  for (int i = 0; i < 2; ++i) {
    std::optional<AuthorizeQuery> seen = pushed_->Peek(client_id_, p->request_uri);
    ASSERT_TRUE(seen.has_value());
    EXPECT_TRUE(seen->pushed);
    EXPECT_EQ(seen->state, "xyz");
  }
  std::optional<AuthorizeQuery> used = pushed_->Consume(client_id_, p->request_uri);
  ASSERT_TRUE(used.has_value());
  EXPECT_EQ(used->scope, "BOOKING_READ");
  EXPECT_EQ(pushed_->Consume(client_id_, p->request_uri), std::nullopt);
  EXPECT_EQ(pushed_->Peek(client_id_, p->request_uri), std::nullopt);
  // Malformed references never reach the database as anything but a miss.
  EXPECT_EQ(pushed_->Peek(client_id_, "urn:ietf:params:oauth:request_uri:short"), std::nullopt);
  EXPECT_EQ(pushed_->Peek(std::string(200, 'x'), p->request_uri), std::nullopt);
}

TEST_F(PushedRequestsDb, ConcurrentConsumesGiveItOnce) {
  std::optional<PushedRequest> p = pushed_->Push(client_id_, kAddress, Params(client_id_));
  ASSERT_TRUE(p.has_value());
  std::atomic<int> got{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] {
      if (pushed_->Consume(client_id_, p->request_uri)) ++got;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(got.load(), 1);
}

TEST_F(PushedRequestsDb, ExpiredIsUnusableAndPurged) {
  std::optional<PushedRequest> p = pushed_->Push(client_id_, kAddress, Params(client_id_));
  std::optional<PushedRequest> live = pushed_->Push(client_id_, kAddress, Params(client_id_));
  ASSERT_TRUE(p && live);
  db_->Run([&](DbConnection& conn) {
    conn.Exec(
        "UPDATE oauth_pushed_requests SET expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE uri_hash = "
        "?",
        {crypto::Sha256Hex(p->request_uri)});
  });
  EXPECT_EQ(pushed_->Peek(client_id_, p->request_uri), std::nullopt);
  EXPECT_EQ(pushed_->Consume(client_id_, p->request_uri), std::nullopt);
  TokenPurger purger(*db_, logger_);
  EXPECT_EQ(purger.PurgeExpired(), 1u);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM oauth_pushed_requests"), 1);
  EXPECT_TRUE(pushed_->Peek(client_id_, live->request_uri).has_value());
}

TEST_F(PushedRequestsDb, UnusedRequestsAreBoundedPerClientAndAddress) {
  std::vector<std::string> uris;
  for (size_t i = 0; i < kPendingPerAddress; ++i) {
    auto p = pushed_->Push(client_id_, kAddress, Params(client_id_));
    ASSERT_TRUE(p.has_value()) << i;
    uris.push_back(p->request_uri);
  }
  EXPECT_EQ(pushed_->Push(client_id_, kAddress, Params(client_id_)), std::nullopt);
  Response refused = Post(ConfidentialBody());
  ExpectError(
      refused, 429, "invalid_request",
      "the client holds 20 unused pushed authorization requests from this address; use them or let them "
      "expire");
  EXPECT_EQ(HeaderOf(refused, "Retry-After"), "60");
  // Another address of the same client, and another client at that address, are not affected.
  EXPECT_TRUE(pushed_->Push(client_id_, "192.0.2.11", Params(client_id_)).has_value());
  EXPECT_TRUE(pushed_->Push(client_id_, "2001:db8::1", Params(client_id_)).has_value());
  EXPECT_TRUE(pushed_->Push(public_id_, kAddress, Params(public_id_)).has_value());
  // Using one makes room again.
  ASSERT_TRUE(pushed_->Consume(client_id_, uris[0]).has_value());
  EXPECT_TRUE(pushed_->Push(client_id_, kAddress, Params(client_id_)).has_value());
  EXPECT_EQ(pushed_->Push(client_id_, kAddress, Params(client_id_)), std::nullopt);
  EXPECT_EQ(pushed_->Push("no-such-client", kAddress, Params("no-such-client")), std::nullopt);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM oauth_pushed_requests WHERE client_address = '192.0.2.10'"), 21);
}

TEST_F(PushedRequestsDb, TheBoundPerAddressIsConfiguredAndLongAddressesAreKeyedByHash) {
  PushedRequests two(*db_, 60, 2);
  const std::string long_address(200, 'a');
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(two.Push(client_id_, long_address, Params(client_id_)).has_value());
  EXPECT_EQ(two.Push(client_id_, long_address, Params(client_id_)), std::nullopt);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM oauth_pushed_requests WHERE client_address = '" +
                  crypto::Sha256Hex(long_address) + "'"),
            2);
  EXPECT_TRUE(two.Push(client_id_, std::string(200, 'b'), Params(client_id_)).has_value());
  EXPECT_EQ(two.pending_per_address(), 2u);
}

TEST_F(PushedRequestsDb, EndpointAnswers201WithAUsableRequestUri) {
  Response res = Post(ConfidentialBody("&unknown_parameter=ignored"));
  ASSERT_EQ(res.status, 201) << res.body;
  EXPECT_EQ(HeaderOf(res, "Cache-Control"), "no-store");
  EXPECT_EQ(HeaderOf(res, "Pragma"), "no-cache");
  const Json body = Body(res);
  EXPECT_EQ(body["expires_in"], 60);
  const std::string uri = body["request_uri"];
  EXPECT_EQ(uri.rfind("urn:ietf:params:oauth:request_uri:", 0), 0u);
  std::optional<AuthorizeQuery> stored = pushed_->Peek(client_id_, uri);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->client_id, client_id_);
  EXPECT_EQ(stored->redirect_uri, kAppRedirect);
  EXPECT_EQ(stored->state, "s1");
  EXPECT_EQ(stored->response_type, "code");
  EXPECT_EQ(stored->code_challenge, std::nullopt);

  // HTTP Basic, as at the token endpoint.
  const std::string basic = "Basic " + crypto::Base64Encode(client_id_ + ":" + secret_);
  const std::string params = std::string("redirect_uri=") + kRedirectEncoded + "&scope=PROFILE_READ";
  EXPECT_EQ(Post(params, basic).status, 201);
  // A public client names itself and must use PKCE.
  EXPECT_EQ(Post("client_id=" + public_id_ + "&redirect_uri=" + kRedirectEncoded + "&scope=BOOKING_READ" +
                 "&code_challenge=" + kChallenge + "&code_challenge_method=S256")
                .status,
            201);
}

TEST_F(PushedRequestsDb, EndpointAuthenticatesTheClientAsTheTokenEndpointDoes) {
  ExpectError(Post(std::string("redirect_uri=") + kRedirectEncoded + "&scope=BOOKING_READ"), 400,
              "invalid_request", "client_id is required");
  ExpectError(Post("client_id=no-such-client&redirect_uri=x"), 401, "invalid_client", "client_not_found");
  ExpectError(Post("client_id=" + client_id_ + "&client_secret=wrong&scope=BOOKING_READ"), 401,
              "invalid_client", "invalid_client_credentials");
  ExpectError(Post("client_id=" + client_id_ + "&scope=BOOKING_READ"), 401, "invalid_client",
              "invalid_client_credentials");
  Response basic = Post("scope=BOOKING_READ", "Basic " + crypto::Base64Encode(client_id_ + ":wrong"));
  ExpectError(basic, 401, "invalid_client", "invalid_client_credentials");
  EXPECT_EQ(HeaderOf(basic, "WWW-Authenticate"), "Basic realm=\"rendezvous\"");
  ExpectError(Post(ConfidentialBody(), "Basic " + crypto::Base64Encode(client_id_ + ":" + secret_)), 400,
              "invalid_request",
              "use one client authentication method: HTTP Basic or client_secret in the body");
  // A public client sending a secret is refused as at the token endpoint.
  ExpectError(Post("client_id=" + public_id_ + "&client_secret=x&scope=BOOKING_READ"), 401, "invalid_client",
              "invalid_client_credentials");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM oauth_pushed_requests"), 0) << "nothing stored by a refused push";
}

TEST_F(PushedRequestsDb, EndpointValidatesAsTheAuthorizationPage) {
  ExpectError(Post("client_id=" + client_id_ + "&client_secret=" + secret_ + "&scope=BOOKING_READ"), 400,
              "invalid_request", "redirect_uri is required");
  ExpectError(Post("client_id=" + client_id_ + "&client_secret=" + secret_ +
                   "&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb%2Fother&scope=BOOKING_READ"),
              400, "invalid_request", "redirect_uri is not registered for this OAuth client");
  ExpectError(
      Post("client_id=" + client_id_ + "&client_secret=" + secret_ + "&redirect_uri=" + kRedirectEncoded),
      400, "invalid_request", "scope parameter is required for this OAuth client");
  ExpectError(Post(ConfidentialBody("&scope=NOT_A_SCOPE")), 400, "invalid_request",
              "parameter scope is given more than once");
  ExpectError(Post("client_id=" + client_id_ + "&client_secret=" + secret_ +
                   "&redirect_uri=" + kRedirectEncoded + "&scope=NOT_A_SCOPE"),
              400, "invalid_scope", "Requested scope is not a recognized scope");
  ExpectError(Post("client_id=" + client_id_ + "&client_secret=" + secret_ +
                   "&redirect_uri=" + kRedirectEncoded + "&scope=EVENT_TYPE_WRITE"),
              400, "invalid_request", "Requested scope exceeds the client's registered scopes");
  ExpectError(Post("client_id=" + client_id_ + "&client_secret=" + secret_ +
                   "&redirect_uri=" + kRedirectEncoded + "&scope=BOOKING_READ&response_type=token"),
              400, "unsupported_response_type");
  ExpectError(Post("client_id=" + public_id_ + "&redirect_uri=" + kRedirectEncoded + "&scope=BOOKING_READ"),
              400, "invalid_request", "code_challenge (PKCE, method S256) is required for public clients");
  ExpectError(Post("client_id=" + public_id_ + "&redirect_uri=" + kRedirectEncoded +
                   "&scope=BOOKING_READ&code_challenge=" + kChallenge + "&code_challenge_method=plain"),
              400, "invalid_request", "code_challenge_method must be S256");
  ExpectError(Post(ConfidentialBody("&request_uri=urn%3Aietf%3Aparams%3Aoauth%3Arequest_uri%3Ax")), 400,
              "invalid_request", "request_uri cannot be pushed");
  ExpectError(Post(ConfidentialBody("&state=" + std::string(kMaxStateLength + 1, 's'))), 400,
              "invalid_request");
  ExpectError(Post(ConfidentialBody("&x=" + std::string(kMaxTokenBodyBytes, 'x'))), 413, "invalid_request");
  ExpectError(Post(ConfidentialBody("&scope2=%ZZ")), 400, "invalid_request",
              "malformed application/x-www-form-urlencoded body");

  auto created = clients_->Create(AppClient(1, {"BOOKING_READ"}));
  ASSERT_TRUE(created.ok());
  ASSERT_TRUE(clients_->Review(created->first.client_id, false, "no").ok());
  ExpectError(Post("client_id=" + created->first.client_id + "&client_secret=" + *created->second +
                   "&redirect_uri=" + kRedirectEncoded + "&scope=BOOKING_READ"),
              400, "unauthorized_client");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM oauth_pushed_requests"), 0) << "nothing stored by a refused push";
}

TEST_F(PushedRequestsDb, RequireParIsSavedAndNeedsNoReview) {
  NewClient n = AppClient(1, {"BOOKING_READ"});
  n.require_par = true;
  auto created = clients_->Create(n);
  ASSERT_TRUE(created.ok());
  EXPECT_TRUE(created->first.require_par);
  EXPECT_EQ(ClientJson(created->first)["require_par"], true);
  EXPECT_EQ(ClientJson(*clients_->Get(client_id_))["require_par"], false);

  // On an approved client, turning it on or off keeps it approved.
  for (bool value : {true, false}) {
    ClientUpdate u;
    u.require_par = value;
    auto updated = clients_->Update(client_id_, 1, u);
    ASSERT_TRUE(updated.ok()) << updated.status().message();
    EXPECT_EQ(updated->require_par, value);
    EXPECT_EQ(updated->state, ClientState::kApproved);
    EXPECT_EQ(clients_->Get(client_id_)->require_par, value);
  }
  // A rejected client stays rejected, with its reason.
  ASSERT_TRUE(clients_->Review(created->first.client_id, false, "not yet").ok());
  ClientUpdate off;
  off.require_par = false;
  auto rejected = clients_->Update(created->first.client_id, std::nullopt, off);
  ASSERT_TRUE(rejected.ok());
  EXPECT_FALSE(rejected->require_par);
  EXPECT_EQ(rejected->state, ClientState::kRejected);
  EXPECT_EQ(rejected->review_reason, "not yet");
  // With a settings change the review rules apply as before.
  ClientUpdate renamed;
  renamed.name = "Renamed";
  renamed.require_par = true;
  auto pending = clients_->Update(client_id_, std::nullopt, renamed);
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(pending->state, ClientState::kPending);
  EXPECT_TRUE(pending->require_par);
}

TEST_F(PushedRequestsDb, RequireParOnTheCommandLine) {
  auto run = [&](std::vector<std::string> args, Json* printed = nullptr) {
    std::ostringstream out, err;
    const int code = RunClientCommand(*clients_, args, out, err);
    if (printed && code == 0) *printed = Json::parse(out.str());
    if (code != 0) {
      EXPECT_NE(err.str(), "");
    }
    return code;
  };
  Json created;
  ASSERT_EQ(run({"create", "--owner-id", "1", "--name", "Strict", "--redirect-uri", kAppRedirect, "--scope",
                 "BOOKING_READ", "--require-par"},
                &created),
            0);
  EXPECT_EQ(created["require_par"], true);
  const std::string id = created["client_id"];
  Json shown;
  ASSERT_EQ(run({"show", client_id_}, &shown), 0);
  EXPECT_EQ(shown["require_par"], false);
  Json updated;
  ASSERT_EQ(run({"update", client_id_, "--require-par", "true"}, &updated), 0);
  EXPECT_EQ(updated["require_par"], true);
  EXPECT_EQ(updated["state"], "approved");
  ASSERT_EQ(run({"update", id, "--require-par", "false"}, &updated), 0);
  EXPECT_EQ(updated["require_par"], false);
  EXPECT_EQ(run({"update", id, "--require-par", "yes"}), 2);
  EXPECT_EQ(run({"update", id, "--require-par"}), 2);
  EXPECT_EQ(
      run({"create", "--owner-id", "1", "--name", "X", "--redirect-uri", kAppRedirect, "--require-par=true"}),
      2);
  EXPECT_FALSE(clients_->Get(id)->require_par);
}

}  // namespace
}  // namespace rendezvous::oauth
