// Tokens for managed users (spec §5.1, `admin managed-user create`, the platform routes): a grant
// of kind 'managed' carrying all the client's scopes (all_scopes for a legacy client), and its
// tokens. The first Issue for a user also links it to its client (managed_users.hpp).
// Thread-safe; may throw DatabaseUnavailable. The Database must outlive it.
#pragma once

#include <cstdint>
#include <string>

#include "rendezvous/database.hpp"
#include "token_cache.hpp"
#include "tokens.hpp"

namespace rendezvous::oauth {

class ManagedUserTokens {
 public:
  // `cache`, when given, loses the tokens this class revokes as soon as they are revoked.
  ManagedUserTokens(Database& db, TokenLifetimes lifetimes, TokenCache* cache = nullptr);

  // The caller checks that the client exists and is not rejected (throws std::runtime_error when
  // the client row is missing). Links the user to the client when it is not linked yet, with
  // `locale` ("" = none).
  TokenResponse Issue(const std::string& client_id, int64_t user_id, const std::string& locale = "");
  // Force-refresh: revokes every managed grant of the user by this client (so every token of
  // them) and issues new tokens on a new grant, in one transaction.
  TokenResponse Reissue(const std::string& client_id, int64_t user_id);
  // Revokes every grant of the user, of every client and kind (the user is being deleted).
  void RevokeAll(int64_t user_id);
  const TokenLifetimes& lifetimes() const { return lifetimes_; }

 private:
  Database& db_;
  TokenLifetimes lifetimes_;
  TokenCache* cache_;
};

}  // namespace rendezvous::oauth
