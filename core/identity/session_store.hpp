// Sign-in sessions of the app host. The browser holds a random token (cookie rdv_session); the
// table holds only its SHA-256, the user, the session's CSRF token and the expiry. Thread-safe;
// calls touching the database may throw DatabaseUnavailable. The Database must outlive the store.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rendezvous/database.hpp"
#include "rendezvous/user.hpp"

namespace rendezvous::core {

struct Session {
  User user;
  std::string csrf_token;
};

class SessionStore {
 public:
  SessionStore(Database& db, std::chrono::seconds ttl) : db_(db), ttl_(ttl) {}

  struct NewSession {
    std::string token;       // goes into the cookie; never stored
    std::string csrf_token;
  };
  // Starts a session for `user_id` (and drops a few expired sessions on the way).
  NewSession Create(int64_t user_id);
  // The live session of `token`; nullopt for a malformed, unknown or expired token (a malformed
  // one without touching the database).
  std::optional<Session> Find(std::string_view token);
  void Delete(std::string_view token);

  // Tokens are 32 random bytes in base64url: exactly 43 characters of [A-Za-z0-9_-].
  static bool WellFormedToken(std::string_view token);

 private:
  Database& db_;
  const std::chrono::seconds ttl_;
};

}  // namespace rendezvous::core
