// Authorization codes, access tokens and refresh tokens (spec §3.2, §4.2–4.4, §5.1; DESIGN §5).
// All tokens are random (crypto::RandomToken, 256 bits) and stored only as SHA-256 hashes.
// Thread-safe; every method is one transaction and may throw DatabaseUnavailable.
//
// Storage (owner "oauth", migration 2): oauth_grants (one authorization of a client by a user:
// scopes, kind 'oauth' or 'managed', revoked_at), oauth_codes (single-use codes, bound to client,
// user, redirect URI, scopes and PKCE challenge; grant_id once exchanged), oauth_access_tokens and
// oauth_refresh_tokens (hash -> grant). Revoking a grant (code replay, refresh reuse, revocation
// of a refresh token) kills every token of it: resolution and refresh check the grant.
//
// Client state at the token endpoint: a rejected client -> unauthorized_client; a pending one
// works only for grants of its owner (testing before review). Tokens of a rejected client stop
// resolving.
//
// No cache: every ResolveAccessToken is one indexed query, so a revocation takes effect at once
// on every instance.
//
// Token formats: access tokens "rdvat_" + 43 base64url characters, refresh tokens "rdvrt_" + 43;
// anything else is refused without a database round trip.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <string>
#include <variant>
#include <vector>

#include "client_auth.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/http.hpp"
#include "rendezvous/log.hpp"
#include "token_request.hpp"

namespace rendezvous::oauth {

struct TokenLifetimes {
  long access_token_ttl = 1800;      // plugins.oauth.access_token_ttl
  long refresh_token_ttl = 2592000;  // plugins.oauth.refresh_token_ttl
  long code_ttl = 600;               // plugins.oauth.code_ttl
};

// What the user allowed on the consent page; bound into the code.
struct CodeGrant {
  std::string client_id;
  int64_t user_id = 0;
  std::string redirect_uri;
  std::vector<std::string> scopes;  // granted scopes (empty + all_scopes for a legacy client without `scope`)
  bool all_scopes = false;
  std::string code_challenge;       // S256 challenge, "" when none was sent
};

// The token endpoint's success body (spec §2.2): access_token, refresh_token, token_type "bearer",
// expires_in, scope (space-separated).
struct TokenResponse {
  std::string access_token;
  std::string refresh_token;
  long expires_in = 1800;
  std::string scope;
};

// {"access_token","refresh_token","token_type":"bearer","expires_in","scope"}
Json ToJson(const TokenResponse& response);

using TokenResult = std::variant<TokenResponse, TokenError>;

// Grants that can still be used: not revoked, with a refresh token that is neither rotated,
// revoked nor expired. By the grant's kind: third-party apps ("oauth") and managed users.
struct ActiveGrants {
  int64_t oauth = 0;
  int64_t managed = 0;
};

inline constexpr std::string_view kAccessTokenPrefix = "rdvat_";
inline constexpr std::string_view kRefreshTokenPrefix = "rdvrt_";

class TokenService {
 public:
  TokenService(Database& db, Logger& logger, TokenLifetimes lifetimes);
  static std::vector<Migration> Migrations();  // owner "oauth" (versions after the clients' ones)

  const TokenLifetimes& lifetimes() const { return lifetimes_; }

  // Issues a single-use authorization code for the grant (called by the consent page on Allow).
  std::string IssueCode(const CodeGrant& grant);

  // authorization_code grant, after the caller authenticated the client (secret or PKCE rules):
  // consumes the code atomically; a used, expired or unknown code, another client's code or a
  // different redirect_uri -> invalid_grant / code_invalid_or_expired. A replayed code also
  // revokes every token issued from it. PKCE: a code with a challenge needs a matching verifier;
  // a verifier without a challenge fails (downgrade protection). A code presented by its client
  // is consumed by that attempt even when the redirect_uri or verifier is wrong (one try).
  TokenResult ExchangeCode(const std::string& client_id, const std::string& code, const std::string& redirect_uri,
                           const std::string& code_verifier);
  // Decides whether the client a request names may proceed, from its stored credentials
  // (nullopt: no such client): nullopt when it may, else the answer. The token endpoint passes
  // client_auth.hpp's AuthenticateClient with the secret it was sent.
  using ClientCheck = std::function<std::optional<TokenError>(const std::optional<ClientCredentials>&)>;

  // refresh_token grant: rotates; scopes preserved; presenting a rotated token again ->
  // invalid_grant / refresh_token_revoked and the whole grant is revoked (reuse detection).
  // `authenticate` runs on the client's credentials, read in the same query as the token, before
  // anything about the token is decided (§7.2 answers first, whatever the token); empty: the
  // caller authenticated the client already. Two round trips in the common case: that read, then
  // the rotation (procedure oauth_rotate_refresh_token).
  TokenResult Refresh(const std::string& client_id, const std::string& refresh_token,
                      const ClientCheck& authenticate = {});

  // Bearer resolution for the core's registry (kind kOAuthToken or kManagedUserToken).
  std::optional<Principal> ResolveAccessToken(std::string_view token);

  // Managed users (§5.1): tokens for a user that a platform client manages; the grant carries
  // all the client's scopes (all_scopes for a legacy client). The caller checks that the client
  // exists and is not rejected (throws std::runtime_error when the client row is missing).
  TokenResponse IssueManagedUserTokens(const std::string& client_id, int64_t user_id);

  // RFC 7009 / RFC 7662 for the client's own tokens. Revoking an access token revokes it alone;
  // revoking a refresh token revokes its whole grant. Other clients' and unknown tokens: no-op /
  // {"active":false}.
  void Revoke(const std::string& client_id, const std::string& token);
  Json Introspect(const std::string& client_id, const std::string& token);

  // Deletes rows that can no longer matter, in autocommit DELETE ... LIMIT `batch` statements
  // (at most kMaxPurgeBatches per table per call): expired codes (used or not; a used code is
  // kept until it expires so a replay still revokes its grant), expired or revoked access
  // tokens, expired or revoked refresh tokens (rotated ones are kept until they expire, for
  // reuse detection). Grants are kept. Returns the number of rows deleted.
  uint64_t PurgeExpired(size_t batch = 1000);
  // Counts the active grants (one query over the live refresh tokens).
  ActiveGrants CountActiveGrants();
  // A background thread that calls PurgeExpired every `interval` (errors are logged, not fatal)
  // and, when `on_count` is given, hands it CountActiveGrants() once at the start and after
  // every purge (from that thread). StopPurger wakes and joins it promptly; both idempotent; the
  // destructor stops it.
  void StartPurger(std::chrono::milliseconds interval,
                   std::function<void(const ActiveGrants&)> on_count = {});
  void StopPurger();
  ~TokenService();

  static constexpr int kMaxPurgeBatches = 100;

 private:
  // Refresh's two halves: the two-round-trip common case (nullopt: not decided there) and the
  // exact decision in a transaction with locks (reuse detection, lost races).
  std::optional<TokenResult> RefreshFast(const std::string& client_id, const ClientCheck& authenticate,
                                         const std::string& hash);
  TokenResult RefreshLocked(const std::string& client_id, const std::string& hash);

  Database& db_;
  Logger& logger_;
  TokenLifetimes lifetimes_;
  std::mutex purge_mu_;
  std::condition_variable purge_cv_;
  bool purge_stop_ = false;
  std::thread purger_;
};

}  // namespace rendezvous::oauth
