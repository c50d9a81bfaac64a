// The token jobs against a real MariaDB through the host's pool, a suite per class:
// CodeExchange (codes single use under concurrency, PKCE binding, the client read once),
// RefreshGrant (rotation under concurrency, the one-call path, client authentication first),
// IssuedTokens (resolution of both kinds, refusal of malformed tokens without a query,
// introspection and revocation scoped to the client), ManagedUserTokens and TokenPurger.
#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "client_auth.hpp"
#include "client_service.hpp"
#include "code_exchange.hpp"
#include "dpop_jti_ledger.hpp"
#include "eventually.hpp"
#include "issued_tokens.hpp"
#include "managed_user_tokens.hpp"
#include "oauth_migrations.hpp"
#include "oauth_test_db.hpp"
#include "pkce.hpp"
#include "recording_database.hpp"
#include "refresh_grant.hpp"
#include "rendezvous/crypto.hpp"
#include "token_endpoint.hpp"
#include "token_purger.hpp"

namespace rendezvous::oauth {
namespace {

class NullMailer final : public Mailer {
 public:
  void Send(DbConnection&, const Mail&) override {}
};

// Runs fn(thread, round) on `threads` threads for `rounds` rounds, the threads meeting at the start
// of each round, so that their calls in a round arrive together.
template <class F>
void InRoundsOnThreads(int threads, int rounds, F&& fn) {
  std::barrier round_start(threads);
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t) {
    running.emplace_back([&, t] {
      for (int r = 0; r < rounds; ++r) {
        round_start.arrive_and_wait();
        fn(t, r);
      }
    });
  }
  for (auto& th : running) th.join();
}

class TokenJobsDb : public OAuthDbTest {
 protected:
  void SetUp() override {
    OpenDatabase(OAuthMigrations());
    clients_ = std::make_unique<ClientService>(*db_, users_, mailer_, logger_);
    codes_ = std::make_unique<CodeExchange>(*db_, logger_, TokenLifetimes{});
    refresh_ = std::make_unique<RefreshGrant>(*db_, logger_, TokenLifetimes{});
    managed_ = std::make_unique<ManagedUserTokens>(*db_, TokenLifetimes{});
    issued_ = std::make_unique<IssuedTokens>(*db_);
    purger_ = std::make_unique<TokenPurger>(*db_, logger_);
    auto r = clients_->Create(AppClient(1, {"BOOKING_READ", "PROFILE_READ"}));
    ASSERT_TRUE(r.ok()) << r.status().message();
    client_id_ = r->first.client_id;
    ASSERT_TRUE(r->second.has_value());
    secret_ = *r->second;
    ASSERT_TRUE(clients_->Review(client_id_, true, "").ok());
  }

  std::string Code(const std::string& challenge = "") {
    CodeGrant g;
    g.client_id = client_id_;
    g.user_id = 2;
    g.redirect_uri = kAppRedirect;
    g.scopes = {"BOOKING_READ"};
    g.code_challenge = challenge;
    return codes_->IssueCode(g);
  }

  NullMailer mailer_;
  std::unique_ptr<ClientService> clients_;
  std::unique_ptr<CodeExchange> codes_;
  std::unique_ptr<RefreshGrant> refresh_;
  std::unique_ptr<ManagedUserTokens> managed_;
  std::unique_ptr<IssuedTokens> issued_;
  std::unique_ptr<TokenPurger> purger_;
  std::string client_id_;
  std::string secret_;
};

// A suite per class, over the same database and client.
using OAuthCodeExchangeDb = TokenJobsDb;
using OAuthRefreshGrantDb = TokenJobsDb;
using OAuthIssuedTokensDb = TokenJobsDb;
using OAuthManagedUserTokensDb = TokenJobsDb;
using OAuthTokenPurgerDb = TokenJobsDb;

TEST_F(OAuthIssuedTokensDb, AnExchangedTokenResolvesToItsGrant) {
  TokenResult r = codes_->Exchange(client_id_, Code(), kAppRedirect, "");
  ASSERT_TRUE(std::holds_alternative<TokenResponse>(r));
  const TokenResponse& t = std::get<TokenResponse>(r);
  EXPECT_EQ(t.scope, "BOOKING_READ");
  EXPECT_EQ(t.expires_in, 1800);
  EXPECT_EQ(t.access_token.rfind(std::string(kAccessTokenPrefix), 0), 0u);
  auto p = issued_->Resolve(t.access_token);
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->managed);
  EXPECT_EQ(p->user_id, 2);
  EXPECT_EQ(p->client_id, client_id_);
  EXPECT_EQ(p->scopes.count("BOOKING_READ"), 1u);
  EXPECT_EQ(p->scopes.count("PROFILE_READ"), 0u);
  EXPECT_FALSE(p->all_scopes);
  // A refresh token is not an access token, and malformed values resolve to nothing.
  EXPECT_FALSE(issued_->Resolve(t.refresh_token));
  EXPECT_FALSE(issued_->Resolve(""));
  EXPECT_FALSE(issued_->Resolve(t.access_token + "x"));
  EXPECT_FALSE(issued_->Resolve(std::string(kAccessTokenPrefix) + std::string(43, '!')));
}

// Several live tokens read in one statement; the ones not live are left out.
TEST_F(OAuthIssuedTokensDb, LiveTokensAreReadByTheirHashesTogether) {
  std::vector<std::string> tokens;
  for (int i = 0; i < 3; ++i) {
    TokenResult r = codes_->Exchange(client_id_, Code(), kAppRedirect, "");
    ASSERT_TRUE(std::holds_alternative<TokenResponse>(r));
    tokens.push_back(std::get<TokenResponse>(r).access_token);
  }
  issued_->Revoke(client_id_, tokens[2]);
  const std::vector<std::string> hashes = {crypto::Sha256Hex(tokens[0]), crypto::Sha256Hex(tokens[1]),
                                           crypto::Sha256Hex(tokens[2]), crypto::Sha256Hex("unknown")};
  testing::RecordingDatabase recorded(*db_);
  auto live = recorded.Run([&](DbConnection& conn) { return IssuedTokens::LiveByHash(conn, hashes); });
  EXPECT_EQ(recorded.Statements().size(), 1u);
  ASSERT_EQ(live.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(live.contains(hashes[i]));
    EXPECT_EQ(live.at(hashes[i]).grant_id, issued_->Resolve(tokens[i])->grant_id);
    EXPECT_EQ(live.at(hashes[i]).user_id, 2);
  }
  EXPECT_NE(live.at(hashes[0]).grant_id, live.at(hashes[1]).grant_id);
  // One hash: the prepared statement; text that is not a hash is refused before any statement.
  auto one = db_->Run([&](DbConnection& conn) { return IssuedTokens::LiveByHash(conn, {hashes[1]}); });
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one.begin()->second.grant_id, live.at(hashes[1]).grant_id);
  EXPECT_THROW(db_->Run([&](DbConnection& conn) {
    IssuedTokens::LiveByHash(conn, {hashes[0], "x' OR 1=1"});
  }),
               std::invalid_argument);
}

// A DPoP proof's jti claimed with its token's look-up: each claimant gets its own token (or none)
// and each key is new once, however the claims meet in the ledger's writes.
TEST_F(OAuthIssuedTokensDb, ClaimsResolveTheirOwnTokensWhateverTheConcurrency) {
  std::vector<std::string> hashes;
  std::vector<int64_t> grants;
  for (int i = 0; i < 2; ++i) {
    TokenResult r = codes_->Exchange(client_id_, Code(), kAppRedirect, "");
    ASSERT_TRUE(std::holds_alternative<TokenResponse>(r));
    const std::string& token = std::get<TokenResponse>(r).access_token;
    hashes.push_back(crypto::Sha256Hex(token));
    grants.push_back(issued_->Resolve(token)->grant_id);
  }
  hashes.push_back(crypto::Sha256Hex("not a token"));
  DpopJtiLedger ledger(*db_, 360);
  constexpr int kThreads = 12, kRounds = 20;
  std::atomic<int> wrong{0}, fresh{0};
  InRoundsOnThreads(kThreads, kRounds, [&](int t, int r) {
    const size_t which = static_cast<size_t>(t + r) % hashes.size();
    std::optional<ResolvedToken> token;
    Result<bool> claimed = ledger.ClaimResolving(
        crypto::Sha256Hex(std::to_string(t) + "." + std::to_string(r)), hashes[which], token);
    if (!claimed.ok()) {
      ++wrong;
      return;
    }
    fresh += *claimed ? 1 : 0;
    const bool right = which < grants.size() ? token && token->grant_id == grants[which] : !token;
    if (!right) ++wrong;
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(fresh.load(), kThreads * kRounds);
  // The same key again: not new, and the token is still read.
  std::optional<ResolvedToken> token;
  EXPECT_EQ(ledger.ClaimResolving(crypto::Sha256Hex("0.0"), hashes[0], token).value(), false);
  ASSERT_TRUE(token);
  EXPECT_EQ(token->grant_id, grants[0]);
  EXPECT_FALSE(ledger.ClaimResolving(crypto::Sha256Hex("0.1"), "not hex", token).ok());
}

void ExpectSameToken(const std::optional<ResolvedToken>& got, const std::optional<ResolvedToken>& want) {
  ASSERT_TRUE(got);
  ASSERT_TRUE(want);
  EXPECT_EQ(got->grant_id, want->grant_id);
  EXPECT_EQ(got->client_id, want->client_id);
  EXPECT_EQ(got->user_id, want->user_id);
  EXPECT_EQ(got->scopes, want->scopes);
  EXPECT_EQ(got->all_scopes, want->all_scopes);
  EXPECT_EQ(got->managed, want->managed);
  EXPECT_EQ(got->dpop_jkt, want->dpop_jkt);
}

// A new proof's claim reads its token in the claim's own statement, whatever kind of token it is
// (what Resolve answers, member by member); a replayed one, not new, has its token read after.
TEST_F(OAuthIssuedTokensDb, AClaimReadsItsTokenInItsOwnStatement) {
  const std::string jkt(43, 'k');
  TokenResult bound = codes_->Exchange(client_id_, Code(), kAppRedirect, "", {}, jkt);
  ASSERT_TRUE(std::holds_alternative<TokenResponse>(bound));
  const std::vector<std::string> tokens = {std::get<TokenResponse>(bound).access_token,
                                           managed_->Issue(client_id_, 3).access_token};
  testing::RecordingDatabase recorded(*db_);
  DpopJtiLedger ledger(recorded, 360);
  std::optional<ResolvedToken> token;
  ASSERT_TRUE(ledger.ClaimResolving(crypto::Sha256Hex("first"), crypto::Sha256Hex(tokens[0]), token).value());
  for (size_t i = 0; i < tokens.size(); ++i) {
    recorded.Clear();
    const std::string key = crypto::Sha256Hex("proof " + std::to_string(i));
    ASSERT_TRUE(ledger.ClaimResolving(key, crypto::Sha256Hex(tokens[i]), token).value());
    EXPECT_EQ(recorded.Statements().size(), 1u);
    ExpectSameToken(token, issued_->Resolve(tokens[i]));
    recorded.Clear();
    EXPECT_FALSE(ledger.ClaimResolving(key, crypto::Sha256Hex(tokens[i]), token).value());
    EXPECT_EQ(recorded.Statements().size(), 2u);
    ExpectSameToken(token, issued_->Resolve(tokens[i]));
  }
  EXPECT_EQ(token->user_id, 3);
  EXPECT_TRUE(token->managed);
  // A revoked token: the key is new, no token comes back.
  issued_->Revoke(client_id_, tokens[0]);
  recorded.Clear();
  EXPECT_TRUE(ledger.ClaimResolving(crypto::Sha256Hex("after"), crypto::Sha256Hex(tokens[0]), token).value());
  EXPECT_EQ(recorded.Statements().size(), 1u);
  EXPECT_FALSE(token);
}

TEST_F(OAuthCodeExchangeDb, ConcurrentExchangesOfOneCodeIssueOnce) {
  const std::string code = Code();
  constexpr int kThreads = 8;
  std::atomic<int> ok{0}, invalid{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      TokenResult r = codes_->Exchange(client_id_, code, kAppRedirect, "");
      if (std::holds_alternative<TokenResponse>(r))
        ++ok;
      else if (std::get<TokenError>(r) == TokenError::CodeInvalidOrExpired())
        ++invalid;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(invalid.load(), kThreads - 1);
}

TEST_F(OAuthRefreshGrantDb, ConcurrentRefreshesRotateOnce) {
  auto first = std::get<TokenResponse>(codes_->Exchange(client_id_, Code(), kAppRedirect, ""));
  constexpr int kThreads = 6;
  std::atomic<int> ok{0}, revoked{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      TokenResult r = refresh_->Refresh(client_id_, first.refresh_token);
      if (std::holds_alternative<TokenResponse>(r))
        ++ok;
      else if (std::get<TokenError>(r) == TokenError::RefreshTokenRevoked())
        ++revoked;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(revoked.load(), kThreads - 1);
}

// Committed transactions the pool has run (rendezvous' db_transactions_total{result="commit"}).
double Commits(prometheus::Registry& registry) {
  for (const auto& family : registry.Collect()) {
    if (family.name != "db_transactions_total") continue;
    for (const auto& m : family.metric) {
      for (const auto& l : m.label)
        if (l.name == "result" && l.value == "commit") return m.counter.value;
    }
  }
  return 0;
}

// The statements a client sent on the connection so far (the server's session status
// `Questions`: statements inside a stored procedure are not counted, the SHOW itself is).
int64_t Questions(DbConnection& conn) {
  std::optional<DbRow> row = conn.QueryOne("SHOW SESSION STATUS LIKE 'Questions'");
  return row ? row->Int(2) : -1;
}

// Each grant is one statement the server receives from us (one round trip): counted by the server
// on a pool of one connection, around a code exchange, a refresh and a reuse that revokes.
TEST_F(OAuthRefreshGrantDb, EachGrantIsOneStatementOnTheServer) {
  prometheus::Registry registry;
  core::MysqlDatabase one(testing::OptionsFor(scratch_, 1), registry, logger_);
  CodeExchange codes(one, logger_, TokenLifetimes{});
  RefreshGrant refresh(one, logger_, TokenLifetimes{});
  const std::string code = Code();
  // Statements a call sends, the SHOW after it not counted.
  auto statements_of = [&](const std::function<void()>& call) {
    const int64_t before = one.Run([](DbConnection& conn) { return Questions(conn); });
    call();
    return one.Run([](DbConnection& conn) { return Questions(conn); }) - before - 1;
  };
  EXPECT_EQ(statements_of([] {}), 0);
  TokenResult exchanged;
  EXPECT_EQ(statements_of([&] {
              exchanged = codes.Exchange(client_id_, code, kAppRedirect, "", {true, secret_});
            }),
            1);
  ASSERT_TRUE(std::holds_alternative<TokenResponse>(exchanged));
  const std::string first = std::get<TokenResponse>(exchanged).refresh_token;
  TokenResult rotated;
  EXPECT_EQ(statements_of([&] { rotated = refresh.Refresh(client_id_, first, {true, secret_}); }), 1);
  ASSERT_TRUE(std::holds_alternative<TokenResponse>(rotated));
  EXPECT_EQ(std::get<TokenResponse>(rotated).scope, "BOOKING_READ");
  TokenResult reused;
  EXPECT_EQ(statements_of([&] { reused = refresh.Refresh(client_id_, first, {true, secret_}); }), 1);
  EXPECT_EQ(std::get<TokenError>(reused), TokenError::RefreshTokenRevoked());
  EXPECT_FALSE(issued_->Resolve(std::get<TokenResponse>(rotated).access_token).has_value());
  TokenResult replayed;
  EXPECT_EQ(statements_of([&] {
              replayed = codes.Exchange(client_id_, code, kAppRedirect, "", {true, secret_});
            }),
            1);
  EXPECT_EQ(std::get<TokenError>(replayed), TokenError::CodeInvalidOrExpired());
  // No client-side transaction either: the procedures commit in the server.
  EXPECT_EQ(Commits(registry), 0);
}

// The procedures' refusals are the token endpoint's answers, word for word, and a refused request
// writes nothing: DPoP binding (a public client's key, a confidential client's any key), a public
// client's missing verifier, a client under review or rejected.
TEST_F(OAuthRefreshGrantDb, EveryRefusalOfTheProceduresIsTheEndpointsAnswer) {
  const std::string jkt(43, 'k'), other(43, 'o');
  auto bound =
      std::get<TokenResponse>(codes_->Exchange(client_id_, Code(), kAppRedirect, "", {true, secret_}, jkt));
  EXPECT_TRUE(bound.dpop);
  EXPECT_EQ(std::get<TokenError>(refresh_->Refresh(client_id_, bound.refresh_token, {true, secret_})),
            TokenError::InvalidGrant("the refresh token is DPoP-bound: a DPoP proof is required"));
  // A confidential client may move its grant to another key.
  auto moved =
      std::get<TokenResponse>(refresh_->Refresh(client_id_, bound.refresh_token, {true, secret_}, other));
  EXPECT_TRUE(moved.dpop);
  EXPECT_EQ(scratch_.QueryValue("SELECT dpop_jkt FROM oauth_refresh_tokens WHERE token_hash = '" +
                                crypto::Sha256Hex(moved.refresh_token) + "'"),
            other);

  NewClient pub = AppClient(1, {"BOOKING_READ"});
  pub.kind = ClientKind::kPublic;
  auto made = clients_->Create(pub);
  ASSERT_TRUE(made.ok()) << made.status().message();
  const std::string public_id = made->first.client_id;
  CodeGrant g;
  g.client_id = public_id;
  g.user_id = 2;
  g.redirect_uri = kAppRedirect;
  g.scopes = {"BOOKING_READ"};
  const std::string verifier(50, 'v');
  g.code_challenge = S256Challenge(verifier);
  const std::string code = codes_->IssueCode(g);
  // Under review, only the owner's grants (user 2 is not the owner); rejected, none.
  EXPECT_EQ(std::get<TokenError>(codes_->Exchange(public_id, code, kAppRedirect, verifier, {true, ""}, jkt)),
            TokenError::UnauthorizedClient("the OAuth client is pending review; only its owner can use it"));
  ASSERT_TRUE(clients_->Review(public_id, true, "").ok());
  EXPECT_EQ(std::get<TokenError>(codes_->Exchange(public_id, code, kAppRedirect, "", {true, ""}, jkt)),
            TokenError::InvalidRequest("code_verifier is required for public clients"));
  EXPECT_EQ(
      scratch_.QueryValue("SELECT COUNT(*) FROM oauth_codes WHERE used_at IS NOT NULL AND client_id = '" +
                          public_id + "'"),
      "0");
  auto pub_tokens =
      std::get<TokenResponse>(codes_->Exchange(public_id, code, kAppRedirect, verifier, {true, ""}, jkt));
  EXPECT_EQ(
      std::get<TokenError>(refresh_->Refresh(public_id, pub_tokens.refresh_token, {true, ""}, other)),
      TokenError::InvalidGrant("the DPoP proof is not signed by the key the refresh token is bound to"));
  EXPECT_EQ(
      std::get<TokenError>(refresh_->Refresh(public_id, pub_tokens.refresh_token, {true, "a secret"}, jkt)),
      TokenError::InvalidClientCredentials());
  scratch_.Exec("UPDATE oauth_clients SET state = 'rejected' WHERE client_id = '" + public_id + "'");
  EXPECT_EQ(std::get<TokenError>(refresh_->Refresh(public_id, pub_tokens.refresh_token, {true, ""}, jkt)),
            TokenError::UnauthorizedClient("the OAuth client is not approved"));
  // None of the refusals rotated the public client's token.
  EXPECT_EQ(scratch_.QueryValue("SELECT rotated_at IS NULL FROM oauth_refresh_tokens WHERE token_hash = '" +
                                crypto::Sha256Hex(pub_tokens.refresh_token) + "'"),
            "1");
}

TEST_F(OAuthRefreshGrantDb, TheRefreshProcedureFindsTheTokenByItsKey) {
  auto first = std::get<TokenResponse>(codes_->Exchange(client_id_, Code(), kAppRedirect, ""));
  const std::string grant = scratch_.QueryValue("SELECT MIN(id) FROM oauth_grants");
  // The procedure finds the token by its primary key: it reads a handful of rows, not every
  // token (a hash parameter in another character set than the column's would scan them all).
  scratch_.Exec(
      "INSERT INTO oauth_refresh_tokens (token_hash, grant_id, created_at, expires_at)"
      " SELECT SHA2(CONCAT('filler-', seq), 256), " +
      grant +
      ", UTC_TIMESTAMP(3),"
      " UTC_TIMESTAMP(3) + INTERVAL 1 DAY FROM seq_1_to_500");
  int64_t rows_read = -1;
  std::string outcome;
  db_->Run([&](DbConnection& conn) {
    auto reads = [&] {
      std::optional<DbRow> row = conn.QueryOne(
          "SELECT SUM(VARIABLE_VALUE) FROM information_schema.SESSION_STATUS"
          " WHERE VARIABLE_NAME IN ('HANDLER_READ_NEXT', 'HANDLER_READ_RND_NEXT')");
      return row ? row->Int(1) : 0;
    };
    const int64_t before_reads = reads();
    std::optional<DbRow> row =
        conn.QueryOne("CALL oauth_refresh_grant(?, FALSE, NULL, '', ?, ?, ?, 60, 60, '')",
                      {client_id_, std::string(64, 'f'), std::string(64, 'c'), std::string(64, 'd')});
    rows_read = reads() - before_reads;
    outcome = row ? row->String(1) : "";
  });
  EXPECT_EQ(outcome, "invalid_refresh_token");
  EXPECT_GE(rows_read, 0);
  EXPECT_LT(rows_read, 50) << "the rotation scanned the refresh tokens";
  // The connection is usable after the call, and the token still rotates.
  EXPECT_TRUE(std::holds_alternative<TokenResponse>(refresh_->Refresh(client_id_, first.refresh_token)));
}

TEST_F(OAuthCodeExchangeDb, PkceBinding) {
  const std::string verifier(50, 'v');
  const std::string challenge = S256Challenge(verifier);
  EXPECT_TRUE(std::holds_alternative<TokenResponse>(
      codes_->Exchange(client_id_, Code(challenge), kAppRedirect, verifier)));
  EXPECT_EQ(
      std::get<TokenError>(codes_->Exchange(client_id_, Code(challenge), kAppRedirect, std::string(50, 'w'))),
      TokenError::CodeInvalidOrExpired());
  EXPECT_EQ(std::get<TokenError>(codes_->Exchange(client_id_, Code(challenge), kAppRedirect, "")),
            TokenError::CodeInvalidOrExpired());
  EXPECT_EQ(std::get<TokenError>(codes_->Exchange(client_id_, Code(), kAppRedirect, verifier)),
            TokenError::CodeInvalidOrExpired());
}

TEST_F(OAuthRefreshGrantDb, RefreshAuthenticatesTheClientFromTheTokenQueryFirst) {
  auto first = std::get<TokenResponse>(codes_->Exchange(client_id_, Code(), kAppRedirect, ""));
  auto with_secret = [](std::string secret) { return PresentedClient{true, std::move(secret)}; };
  // A wrong secret answers invalid_client whatever the token, and rotates nothing.
  EXPECT_EQ(std::get<TokenError>(refresh_->Refresh(client_id_, first.refresh_token, with_secret("wrong"))),
            TokenError::InvalidClientCredentials());
  EXPECT_EQ(std::get<TokenError>(refresh_->Refresh(client_id_, "malformed", with_secret("wrong"))),
            TokenError::InvalidClientCredentials());
  EXPECT_EQ(
      std::get<TokenError>(refresh_->Refresh("no-such-client", first.refresh_token, with_secret(secret_))),
      TokenError::ClientNotFound());
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM oauth_refresh_tokens WHERE rotated_at IS NOT NULL"),
            "0");
  // The right secret rotates.
  TokenResult good = refresh_->Refresh(client_id_, first.refresh_token, with_secret(secret_));
  ASSERT_TRUE(std::holds_alternative<TokenResponse>(good));
  EXPECT_EQ(std::get<TokenResponse>(good).scope, "BOOKING_READ");
}

TEST_F(OAuthManagedUserTokensDb, ManagedUserTokensResolveAsTheirOwnKind) {
  TokenResponse t = managed_->Issue(client_id_, 2);
  EXPECT_EQ(t.scope, "BOOKING_READ PROFILE_READ");
  auto p = issued_->Resolve(t.access_token);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->managed);
  EXPECT_EQ(p->scopes.count("PROFILE_READ"), 1u);
  TokenResult r = refresh_->Refresh(client_id_, t.refresh_token);
  ASSERT_TRUE(std::holds_alternative<TokenResponse>(r));
  auto p2 = issued_->Resolve(std::get<TokenResponse>(r).access_token);
  ASSERT_TRUE(p2);
  EXPECT_TRUE(p2->managed);
}

TEST_F(OAuthIssuedTokensDb, IntrospectAndRevokeAreScopedToTheClient) {
  auto t = std::get<TokenResponse>(codes_->Exchange(client_id_, Code(), kAppRedirect, ""));
  Json j = issued_->Introspect(client_id_, t.access_token);
  EXPECT_EQ(j["active"], true);
  EXPECT_EQ(j["sub"], "2");
  EXPECT_EQ(issued_->Introspect("someone-else", t.access_token), Json({{"active", false}}));
  issued_->Revoke("someone-else", t.access_token);
  EXPECT_TRUE(issued_->Resolve(t.access_token));
  issued_->Revoke(client_id_, t.access_token);
  EXPECT_FALSE(issued_->Resolve(t.access_token));
  EXPECT_EQ(issued_->Introspect(client_id_, t.access_token), Json({{"active", false}}));
}

TEST_F(OAuthTokenPurgerDb, PurgeDeletesOnlyWhatCanNoLongerMatter) {
  const std::string live_code = Code();
  auto count = [&](const std::string& sql) {
    return db_->Run([&](DbConnection& conn) {
      std::optional<DbRow> row = conn.QueryOne(sql);
      return row ? row->Int(1) : -1;
    });
  };
  db_->Run([&](DbConnection& conn) {
    for (int i = 0; i < 5; ++i) {
      conn.ExecUnprepared(
          "INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, scopes, created_at, "
          "expires_at)"
          " VALUES (SHA2('expired" +
          std::to_string(i) +
          "', 256), 'c', 2, 'x', '[]',"
          " UTC_TIMESTAMP(3) - INTERVAL 1 HOUR, UTC_TIMESTAMP(3) - INTERVAL 1 MINUTE)");
    }
    const char* rows[][2] = {{"a_expired", "UTC_TIMESTAMP(3) - INTERVAL 1 SECOND"},
                             {"a_live", "UTC_TIMESTAMP(3) + INTERVAL 1 HOUR"}};
    for (auto& r : rows) {
      conn.ExecUnprepared(std::string("INSERT INTO oauth_access_tokens (token_hash, grant_id, created_at, "
                                      "expires_at) VALUES (SHA2('") +
                          r[0] + "', 256), 1, UTC_TIMESTAMP(3), " + r[1] + ")");
      conn.ExecUnprepared(std::string("INSERT INTO oauth_refresh_tokens (token_hash, grant_id, created_at, "
                                      "expires_at) VALUES (SHA2('") +
                          r[0] + "', 256), 1, UTC_TIMESTAMP(3), " + r[1] + ")");
    }
    conn.ExecUnprepared(
        "INSERT INTO oauth_access_tokens (token_hash, grant_id, created_at, expires_at, revoked_at) VALUES"
        " (SHA2('a_revoked', 256), 1, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL 1 HOUR, "
        "UTC_TIMESTAMP(3))");
    conn.ExecUnprepared(
        "INSERT INTO oauth_refresh_tokens (token_hash, grant_id, created_at, expires_at, rotated_at) VALUES"
        " (SHA2('r_rotated', 256), 1, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL 1 HOUR, "
        "UTC_TIMESTAMP(3))");
    // DPoP proof jtis: one past its replay window, one still in it.
    conn.ExecUnprepared(
        "INSERT INTO oauth_dpop_jtis (jti_hash, expires_at) VALUES"
        " (SHA2('jti_old', 256), UTC_TIMESTAMP(3) - INTERVAL 1 SECOND),"
        " (SHA2('jti_live', 256), UTC_TIMESTAMP(3) + INTERVAL 1 HOUR)");
  });
  // Batches of 2 exercise the loop: 5 codes, 2 access tokens, 1 refresh token, 1 jti.
  EXPECT_EQ(purger_->PurgeExpired(2), 9u);
  EXPECT_EQ(count("SELECT COUNT(*) FROM oauth_dpop_jtis WHERE jti_hash = SHA2('jti_live', 256)"), 1);
  EXPECT_EQ(count("SELECT COUNT(*) FROM oauth_dpop_jtis"), 1);
  EXPECT_EQ(count("SELECT COUNT(*) FROM oauth_codes"), 1);
  EXPECT_EQ(count("SELECT COUNT(*) FROM oauth_access_tokens WHERE token_hash = SHA2('a_live', 256)"), 1);
  EXPECT_EQ(count("SELECT COUNT(*) FROM oauth_access_tokens"), 1);
  EXPECT_EQ(count("SELECT COUNT(*) FROM oauth_refresh_tokens"), 2);  // live and rotated (reuse detection)
  EXPECT_EQ(purger_->PurgeExpired(2), 0u);
  // The live code still works.
  EXPECT_TRUE(
      std::holds_alternative<TokenResponse>(codes_->Exchange(client_id_, live_code, kAppRedirect, "")));
}

TEST_F(OAuthTokenPurgerDb, ActiveGrantsAreThoseWithALiveRefreshToken) {
  // "oauth managed"
  auto active = [&] {
    ActiveGrants a = purger_->CountActiveGrants();
    return std::to_string(a.oauth) + " " + std::to_string(a.managed);
  };
  EXPECT_EQ(active(), "0 0");
  TokenResult first = codes_->Exchange(client_id_, Code(), kAppRedirect, "");
  ASSERT_TRUE(std::holds_alternative<TokenResponse>(first));
  TokenResult second = codes_->Exchange(client_id_, Code(), kAppRedirect, "");
  ASSERT_TRUE(std::holds_alternative<TokenResponse>(second));
  managed_->Issue(client_id_, 1);
  EXPECT_EQ(active(), "2 1");

  // A rotation keeps the grant active; revoking its refresh token ends it.
  TokenResult rotated = refresh_->Refresh(client_id_, std::get<TokenResponse>(first).refresh_token);
  ASSERT_TRUE(std::holds_alternative<TokenResponse>(rotated));
  EXPECT_EQ(active(), "2 1");
  issued_->Revoke(client_id_, std::get<TokenResponse>(rotated).refresh_token);
  EXPECT_EQ(active(), "1 1");
  // Expired refresh tokens do not count.
  db_->Run([](DbConnection& conn) {
    conn.ExecUnprepared("UPDATE oauth_refresh_tokens SET expires_at = UTC_TIMESTAMP(3)");
  });
  EXPECT_EQ(active(), "0 0");
}

TEST_F(OAuthTokenPurgerDb, PurgerHandsOverTheActiveGrantsAtItsStart) {
  ASSERT_TRUE(std::holds_alternative<TokenResponse>(codes_->Exchange(client_id_, Code(), kAppRedirect, "")));
  std::mutex mu;
  std::condition_variable cv;
  std::optional<ActiveGrants> counted;
  purger_->Start(std::chrono::hours(1), [&](const ActiveGrants& a) {
    std::lock_guard<std::mutex> lk(mu);
    counted = a;
    cv.notify_all();
  });
  {
    std::unique_lock<std::mutex> lk(mu);
    EXPECT_TRUE(cv.wait_for(lk, std::chrono::seconds(10), [&] { return counted.has_value(); }));
  }
  purger_->Stop();
  ASSERT_TRUE(counted.has_value());
  EXPECT_EQ(counted->oauth, 1);
  EXPECT_EQ(counted->managed, 0);
}

TEST_F(OAuthTokenPurgerDb, PurgerStopsPromptly) {
  purger_->Start(std::chrono::hours(1));
  const auto t0 = std::chrono::steady_clock::now();
  purger_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  purger_->Stop();  // idempotent
}

TEST_F(OAuthTokenPurgerDb, PurgerSweepsInTheBackground) {
  db_->Run([&](DbConnection& conn) {
    conn.ExecUnprepared(
        "INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, scopes, created_at, "
        "expires_at)"
        " VALUES (SHA2('old', 256), 'c', 2, 'x', '[]', UTC_TIMESTAMP(3) - INTERVAL 1 HOUR,"
        " UTC_TIMESTAMP(3) - INTERVAL 1 MINUTE)");
  });
  purger_->Start(std::chrono::milliseconds(20));
  int64_t left = 1;
  testing::Eventually(
      "the purger emptying oauth_codes", {std::chrono::seconds(10), std::chrono::milliseconds(10)}, [&] {
        left = db_->Run(
            [&](DbConnection& conn) { return conn.QueryOne("SELECT COUNT(*) FROM oauth_codes")->Int(1); });
        return left == 0;
      });
  purger_->Stop();
  EXPECT_EQ(left, 0);
}

TEST_F(OAuthCodeExchangeDb, ExchangeAuthenticatesTheClientBeforeTheCode) {
  const std::string code = Code();
  auto with_secret = [](std::string secret) { return PresentedClient{true, std::move(secret)}; };
  // A wrong secret or an unknown client answers invalid_client whatever the code, and leaves the
  // code unused.
  EXPECT_EQ(std::get<TokenError>(codes_->Exchange(client_id_, code, kAppRedirect, "", with_secret("wrong"))),
            TokenError::InvalidClientCredentials());
  EXPECT_EQ(std::get<TokenError>(codes_->Exchange(client_id_, "", kAppRedirect, "", with_secret("wrong"))),
            TokenError::InvalidClientCredentials());
  EXPECT_EQ(
      std::get<TokenError>(codes_->Exchange("no-such-client", code, kAppRedirect, "", with_secret(secret_))),
      TokenError::ClientNotFound());
  EXPECT_EQ(std::get<TokenError>(
                codes_->Exchange(std::string(65, 'c'), code, kAppRedirect, "", with_secret(secret_))),
            TokenError::ClientNotFound());
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM oauth_codes WHERE used_at IS NOT NULL"), "0");
  // Authenticated, a malformed code is refused; the right secret exchanges the code.
  EXPECT_EQ(std::get<TokenError>(
                codes_->Exchange(client_id_, std::string(300, 'x'), kAppRedirect, "", with_secret(secret_))),
            TokenError::CodeInvalidOrExpired());
  TokenResult good = codes_->Exchange(client_id_, code, kAppRedirect, "", with_secret(secret_));
  ASSERT_TRUE(std::holds_alternative<TokenResponse>(good));
  EXPECT_EQ(std::get<TokenResponse>(good).scope, "BOOKING_READ");
}

TEST_F(OAuthCodeExchangeDb, EachGrantAtTheTokenEndpointIsOneStatement) {
  testing::RecordingDatabase recorded(*db_);
  ClientService clients(recorded, users_, mailer_, logger_);
  CodeExchange codes(recorded, logger_, TokenLifetimes{});
  RefreshGrant refresh(recorded, logger_, TokenLifetimes{});
  IssuedTokens issued(recorded);
  DpopVerifier dpop(recorded, 300);
  const TokenEndpointServices services{clients, codes, refresh,
                                       issued,  dpop,  "https://api.example.com/v2/auth/oauth2/token"};
  Request req;
  req.method = Method::kPost;
  req.headers["content-type"] = "application/x-www-form-urlencoded";
  req.body = "grant_type=authorization_code&client_id=" + client_id_ + "&client_secret=" + secret_ +
             "&code=" + Code() + "&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb";
  recorded.Clear();
  Response res = HandleTokenRequest(services, req);
  EXPECT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(recorded.Statements(),
            std::vector<std::string>{"CALL oauth_exchange_code(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"});
  EXPECT_NE(std::find(res.headers.begin(), res.headers.end(),
                      std::pair<std::string, std::string>("Cache-Control", "no-store")),
            res.headers.end());
  // The refresh grant likewise.
  const std::string refresh_token = Json::parse(res.body).value("refresh_token", "");
  req.body = "grant_type=refresh_token&client_id=" + client_id_ + "&client_secret=" + secret_ +
             "&refresh_token=" + refresh_token;
  recorded.Clear();
  res = HandleTokenRequest(services, req);
  EXPECT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(recorded.Statements(),
            std::vector<std::string>{"CALL oauth_refresh_grant(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"});
}

class OAuthDpopJtisDb : public OAuthDbTest {
 protected:
  void SetUp() override { OpenDatabase(OAuthMigrations()); }

  int64_t Count(const std::string& sql) {
    return db_->Run([&](DbConnection& conn) { return conn.QueryOne(sql)->Int(1); });
  }
  // 16 threads in 30 rounds, each claiming a key of its own, then the round's key all at once.
  void ClaimFromManyThreads(DpopJtiLedger& ledger);
};

TEST_F(OAuthDpopJtisDb, EachKeyIsNewOnceWhateverTheConcurrency) {
  DpopJtiLedger ledger(*db_, 360);
  ClaimFromManyThreads(ledger);
}

// The writes of a server without INSERT … RETURNING (MySQL 8): each claim of a batch on its own.
TEST_F(OAuthDpopJtisDb, EachKeyIsNewOnceWhenClaimsAreWrittenOneByOne) {
  DpopJtiLedger ledger(*db_, 360, false);
  ClaimFromManyThreads(ledger);
  DpopJtiLedger other(*db_, 360, false);
  EXPECT_EQ(other.Claim(crypto::Sha256Hex("round 0")).value(), false);
}

void OAuthDpopJtisDb::ClaimFromManyThreads(DpopJtiLedger& ledger) {
  constexpr int kThreads = 16, kRounds = 30;
  std::atomic<int> fresh{0}, replayed{0}, failed{0};
  // In each round every thread claims a key of its own and then the round's key, which all threads
  // claim at once: its claims meet in one write, and in the writes after it.
  InRoundsOnThreads(kThreads, kRounds, [&](int t, int r) {
    const std::string own = crypto::Sha256Hex(std::to_string(t) + "." + std::to_string(r));
    for (const std::string& key : {own, crypto::Sha256Hex("round " + std::to_string(r))}) {
      Result<bool> claimed = ledger.Claim(key);
      if (!claimed.ok()) {
        ++failed;
      } else {
        ++(*claimed ? fresh : replayed);
      }
    }
  });
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(fresh.load(), kThreads * kRounds + kRounds);
  EXPECT_EQ(replayed.load(), (kThreads - 1) * kRounds);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM oauth_dpop_jtis"), kThreads * kRounds + kRounds);
  // Kept for the given seconds (give or take the test's own run time).
  EXPECT_EQ(
      Count("SELECT COUNT(*) FROM oauth_dpop_jtis WHERE expires_at"
            " BETWEEN UTC_TIMESTAMP(3) + INTERVAL 300 SECOND AND UTC_TIMESTAMP(3) + INTERVAL 361 SECOND"),
      kThreads * kRounds + kRounds);
}

TEST_F(OAuthDpopJtisDb, AKeyClaimedBeforeOrOnAnotherInstanceIsNotNew) {
  const std::string key = crypto::Sha256Hex("jti");
  DpopJtiLedger one(*db_, 360), other(*db_, 360);
  EXPECT_EQ(one.Claim(key).value(), true);
  EXPECT_EQ(one.Claim(key).value(), false);
  EXPECT_EQ(other.Claim(key).value(), false);
  EXPECT_EQ(other.Claim(crypto::Sha256Hex("jti2")).value(), true);
}

TEST_F(OAuthDpopJtisDb, OnlyHexadecimalKeysAreWritten) {
  DpopJtiLedger ledger(*db_, 360);
  for (const std::string& bad : {std::string(), std::string(64, 'A'), std::string(63, 'a'),
                                 std::string(63, 'a') + "'", std::string(65, 'a')}) {
    Result<bool> claimed = ledger.Claim(bad);
    ASSERT_FALSE(claimed.ok()) << bad;
    EXPECT_EQ(claimed.status().code(), ErrorCode::kInvalid);
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM oauth_dpop_jtis"), 0);
}

}  // namespace
}  // namespace rendezvous::oauth
