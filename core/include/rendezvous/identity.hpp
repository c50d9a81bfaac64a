// Users, sessions and CSRF as the core provides them to plugins (pages, token issuers). Plugin
// logic that only looks users up takes the HTTP-free UserDirectory (user.hpp) instead.
#pragma once

#include <optional>
#include <string>

#include "rendezvous/http.hpp"
#include "rendezvous/user.hpp"

namespace rendezvous {

// Thread-safe. Methods touching the database may throw DatabaseUnavailable.
class Identity : public UserDirectory {
 public:
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
