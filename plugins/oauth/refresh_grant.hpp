// The refresh_token grant (spec §4.3; DESIGN §5 rotation): every use rotates the refresh token;
// presenting a rotated one again revokes its whole grant (reuse detection). Thread-safe; may
// throw DatabaseUnavailable. The Database and Logger must outlive it.
#pragma once

#include <optional>
#include <string>

#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"
#include "token_cache.hpp"
#include "tokens.hpp"

namespace rendezvous::oauth {

class RefreshGrant {
 public:
  // `cache`, when given, loses the tokens of a grant this class revokes as soon as it is revoked.
  RefreshGrant(Database& db, Logger& logger, TokenLifetimes lifetimes, TokenCache* cache = nullptr);

  // Rotates; scopes preserved; presenting a rotated token again -> invalid_grant /
  // refresh_token_revoked and the whole grant is revoked. `authenticate` runs on the client's
  // credentials, read in the same query as the token, before anything about the token is decided
  // (§7.2 answers first, whatever the token); empty: the caller authenticated the client already.
  // Two round trips in the common case: that read, then the rotation (procedure
  // oauth_rotate_refresh_token).
  //
  // DPoP (RFC 9449 §5): `dpop_jkt`, when not empty, is the key of the request's verified proof;
  // the new tokens are bound to it (token_type "DPoP"). A refresh token bound to a key needs a
  // proof: a public client's by that same key, a confidential client's by any key (it
  // authenticates anyway, and may so rotate its DPoP key), so a grant that began with DPoP never
  // falls back to bearer tokens. Otherwise invalid_grant, and the token stays usable.
  TokenResult Refresh(const std::string& client_id, const std::string& refresh_token,
                      const ClientCheck& authenticate = {}, const std::string& dpop_jkt = {});

 private:
  // Refresh's two halves: the two-round-trip common case (nullopt: not decided there) and the
  // exact decision in a transaction with locks (reuse detection, lost races).
  std::optional<TokenResult> RefreshFast(const std::string& client_id, const ClientCheck& authenticate,
                                         const std::string& hash, const std::string& dpop_jkt);
  TokenResult RefreshLocked(const std::string& client_id, const std::string& hash,
                            const std::string& dpop_jkt);

  Database& db_;
  Logger& logger_;
  TokenLifetimes lifetimes_;
  TokenCache* cache_;
};

}  // namespace rendezvous::oauth
