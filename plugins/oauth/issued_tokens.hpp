// Tokens once issued (spec §4.4, RFC 7009, RFC 7662): bearer resolution for the host's registry,
// introspection and revocation for the client that holds them. With a TokenCache, live access
// tokens are served from memory (token_cache.hpp says for how long a revoked one may still be
// served: not at all here once Revoke returned, at most 1 s on other instances); without one,
// every Resolve is one indexed query. Thread-safe; may throw DatabaseUnavailable. The Database
// and the cache must outlive it.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "rendezvous/database.hpp"
#include "tokens.hpp"

namespace rendezvous::oauth {

// Who a live access token speaks for: its grant, client, user and scopes.
struct ResolvedToken {
  int64_t grant_id = 0;
  std::string client_id;
  int64_t user_id = 0;
  std::set<std::string> scopes;
  bool all_scopes = false;  // a legacy client's grant
  bool managed = false;     // a managed user's grant (§5.1), else a third-party app's
  std::string dpop_jkt;     // the DPoP key the token is bound to ('' = a bearer token)
  // For introspection and the cache: the scope introspection shows (the grant's, or the client's
  // for an all-scopes grant, space-separated), the token's expiry and issue times (Unix seconds)
  // and how long it had left when it was read (milliseconds, by the database's clock).
  std::string scope_text;
  int64_t expires_at = 0;
  int64_t issued_at = 0;
  int64_t expires_in_ms = 0;
};

class TokenCache;

class IssuedTokens {
 public:
  explicit IssuedTokens(Database& db, TokenCache* cache = nullptr);

  // A live access token (not expired or revoked, on a live grant of a client that is not
  // rejected); nullopt for anything else, a malformed token without a query.
  std::optional<ResolvedToken> Resolve(std::string_view token);
  // Resolve by the token's hash (SHA-256 hex), from the cache when it holds it.
  std::optional<ResolvedToken> ResolveHash(const std::string& hash);

  // The live access tokens among `hashes` (SHA-256 hex of tokens, as stored), by hash, read on
  // `conn` in one statement: what Resolve reads, for several tokens at once (DpopJtiLedger reads
  // the tokens of the DPoP proofs it claims together this way). At most 1000 hashes.
  static std::unordered_map<std::string, ResolvedToken> LiveByHash(DbConnection& conn,
                                                                   const std::vector<std::string>& hashes);

  // A scalar subquery (parenthesised) giving, for the access token whose hash is the value of
  // `hash_expression` (SQL text, spliced in as it is: the caller writes only what it has checked),
  // the live token's columns as one JSON array, NULL when no live token has that hash. The
  // conditions are Resolve's. DpopJtiLedger asks it in its INSERT's RETURNING clause, so that a
  // proof's jti is claimed and its token read in one statement. TokenOfJson reads the value.
  static std::string LiveTokenJson(std::string_view hash_expression);
  static std::optional<ResolvedToken> TokenOfJson(std::string_view text);

  // For the client's own tokens only. Revoking an access token revokes it alone; revoking a
  // refresh token revokes its whole grant. Other clients' and unknown tokens: no-op /
  // {"active":false}. A DPoP-bound token shows `cnf: {"jkt": ...}` (RFC 9449 §6.2) and, for an
  // access token, token_type "DPoP".
  void Revoke(const std::string& client_id, const std::string& token);
  nlohmann::json Introspect(const std::string& client_id, const std::string& token);

 private:
  // The live access token whose hash is `hash`, read on `conn` (one prepared statement).
  static std::optional<ResolvedToken> LiveOne(DbConnection& conn, const std::string& hash);

  Database& db_;
  TokenCache* cache_;
};

}  // namespace rendezvous::oauth
