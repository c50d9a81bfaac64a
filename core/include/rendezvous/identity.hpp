// Users, sessions and CSRF as the core provides them to plugins (pages, token issuers).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "rendezvous/http.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous {

struct User {
  int64_t id = 0;
  std::string email;
  std::string name;
  std::string time_zone = "UTC";
  std::string week_start = "Monday";
  bool is_admin = false;
  std::string created_at;  // ISO 8601 UTC
};

// Thread-safe. Methods touching the database may throw DatabaseUnavailable.
class Identity {
 public:
  virtual ~Identity() = default;
  virtual std::optional<User> FindUser(int64_t id) = 0;
  virtual std::optional<User> FindUserByEmail(const std::string& email) = 0;
  // Creates a user; an empty password creates one that cannot sign in (managed users).
  virtual Result<User> CreateUser(const std::string& email, const std::string& name,
                                  const std::string& password, const std::string& time_zone,
                                  bool is_admin) = 0;
  // The signed-in user of an app-host request (session cookie), if any.
  virtual std::optional<User> SessionUser(const Request& req) = 0;
  // CSRF token bound to the request's session (or a pre-session cookie); forms carry it as
  // the hidden field "csrf_token". Set-Cookie headers needed are appended to `res`.
  virtual std::string CsrfToken(const Request& req, Response& res) = 0;
  virtual bool CheckCsrf(const Request& req, const std::string& token) = 0;
  // JSON of a user as /v2/me shows it.
  virtual Json UserJson(const User& user) = 0;
};

}  // namespace rendezvous
