// Tokens once issued (spec §4.4, RFC 7009, RFC 7662): bearer resolution for the host's registry,
// introspection and revocation for the client that holds them. No cache: every Resolve is one
// indexed query, so a revocation takes effect at once on every instance. Thread-safe; may throw
// DatabaseUnavailable. The Database must outlive it.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

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
};

class IssuedTokens {
 public:
  explicit IssuedTokens(Database& db);

  // A live access token (not expired or revoked, on a live grant of a client that is not
  // rejected); nullopt for anything else, a malformed token without a query.
  std::optional<ResolvedToken> Resolve(std::string_view token);

  // Resolve, and in the same round trip (procedure oauth_resolve_dpop_token) the claim of a DPoP
  // proof's jti: `jti_key` (64 lowercase hexadecimal characters, DpopVerifier::JtiKey) is written
  // to oauth_dpop_jtis, kept `keep_seconds`, whether or not the token is live. `jti_fresh` is true
  // when the token is live and the key was new; a malformed token claims nothing.
  struct WithJti {
    std::optional<ResolvedToken> token;
    bool jti_fresh = false;
  };
  WithJti ResolveClaimingJti(std::string_view token, const std::string& jti_key, int64_t keep_seconds);

  // For the client's own tokens only. Revoking an access token revokes it alone; revoking a
  // refresh token revokes its whole grant. Other clients' and unknown tokens: no-op /
  // {"active":false}. A DPoP-bound token shows `cnf: {"jkt": ...}` (RFC 9449 §6.2) and, for an
  // access token, token_type "DPoP".
  void Revoke(const std::string& client_id, const std::string& token);
  nlohmann::json Introspect(const std::string& client_id, const std::string& token);

 private:
  Database& db_;
};

}  // namespace rendezvous::oauth
