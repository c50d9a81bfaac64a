// Tokens for managed users (spec §5.1, `admin managed-user create`): a grant of kind 'managed'
// carrying all the client's scopes (all_scopes for a legacy client), and its first tokens.
// Thread-safe; may throw DatabaseUnavailable. The Database must outlive it.
#pragma once

#include <cstdint>
#include <string>

#include "rendezvous/database.hpp"
#include "tokens.hpp"

namespace rendezvous::oauth {

class ManagedUserTokens {
 public:
  ManagedUserTokens(Database& db, TokenLifetimes lifetimes);

  // The caller checks that the client exists and is not rejected (throws std::runtime_error when
  // the client row is missing).
  TokenResponse Issue(const std::string& client_id, int64_t user_id);

 private:
  Database& db_;
  TokenLifetimes lifetimes_;
};

}  // namespace rendezvous::oauth
