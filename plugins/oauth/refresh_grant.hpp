// The refresh_token grant (spec §4.3; DESIGN §5 rotation): every use rotates the refresh token;
// presenting a rotated one again revokes its whole grant (reuse detection). Thread-safe; may
// throw DatabaseUnavailable. The Database and Logger must outlive it.
#pragma once

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
  // refresh_token_revoked and the whole grant is revoked. The client is authenticated from
  // `client` (tokens.hpp) before anything about the token is decided (§7.2 answers first,
  // whatever the token). One round trip: the procedure oauth_refresh_grant reads, decides and
  // writes in one server-side transaction (oauth_migrations.cpp).
  //
  // DPoP (RFC 9449 §5): `dpop_jkt`, when not empty, is the key of the request's verified proof;
  // the new tokens are bound to it (token_type "DPoP"). A refresh token bound to a key needs a
  // proof: a public client's by that same key, a confidential client's by any key (it
  // authenticates anyway, and may so rotate its DPoP key), so a grant that began with DPoP never
  // falls back to bearer tokens. Otherwise invalid_grant, and the token stays usable.
  TokenResult Refresh(const std::string& client_id, const std::string& refresh_token,
                      const PresentedClient& client = {}, const std::string& dpop_jkt = {});

 private:
  Database& db_;
  Logger& logger_;
  TokenLifetimes lifetimes_;
  TokenCache* cache_;
};

}  // namespace rendezvous::oauth
