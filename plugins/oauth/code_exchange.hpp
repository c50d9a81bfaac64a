// Authorization codes (spec §4.1, §4.2; DESIGN §5): issued on the consent page, exchanged once at
// the token endpoint for a new grant and its first tokens (tokens.hpp has the tables).
// Thread-safe; every call is one transaction and may throw DatabaseUnavailable. The Database and
// Logger must outlive it.
#pragma once

#include <string>

#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"
#include "token_cache.hpp"
#include "tokens.hpp"

namespace rendezvous::oauth {

class CodeExchange {
 public:
  // `cache`, when given, loses the tokens of a grant this class revokes as soon as it is revoked.
  CodeExchange(Database& db, Logger& logger, TokenLifetimes lifetimes, TokenCache* cache = nullptr);

  // Issues a single-use authorization code for the grant (called by the consent page on Allow).
  std::string IssueCode(const CodeGrant& grant);

  // authorization_code grant, in one round trip (the procedure oauth_exchange_code reads,
  // decides and writes in one server-side transaction). The client is authenticated from
  // `client` (tokens.hpp) before anything about the code is decided, then the code is consumed
  // atomically; a used, expired or unknown code, another client's code or a different
  // redirect_uri -> invalid_grant / code_invalid_or_expired. A replayed code also revokes every
  // token issued from it. PKCE: a code with a challenge needs a matching verifier; a verifier
  // without a challenge fails (downgrade protection). A code presented by its client is consumed
  // by that attempt even when the redirect_uri or verifier is wrong (one try). `dpop_jkt`, when
  // not empty, is the key of the request's verified DPoP proof: both tokens are bound to it
  // (RFC 9449 §5, token_type "DPoP").
  TokenResult Exchange(const std::string& client_id, const std::string& code, const std::string& redirect_uri,
                       const std::string& code_verifier, const PresentedClient& client = {},
                       const std::string& dpop_jkt = {});

 private:
  Database& db_;
  Logger& logger_;
  TokenLifetimes lifetimes_;
  TokenCache* cache_;
};

}  // namespace rendezvous::oauth
