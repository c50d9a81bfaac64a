// Users as the core keeps them, for plugin logic that looks users up or creates them. Free of
// HTTP: the session and CSRF side of identity is in identity.hpp, for pages and routes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "rendezvous/status.hpp"

namespace rendezvous {

struct User {
  int64_t id = 0;
  std::string email;
  std::string name;
  std::string time_zone = "UTC";
  std::string week_start = "Monday";
  // Unique; lowercase letters, digits, '-', '_', '.'; 1..64 characters (DESIGN §10).
  std::string username;
  int time_format = 12;  // 12 or 24
  bool is_admin = false;
  std::string created_at;  // ISO 8601 UTC
};

// What a new user is made of. An empty username is derived from the e-mail's local part (see
// DeriveUsernameBase in the core), with a numeric suffix when taken.
struct NewUser {
  std::string email;
  std::string name;
  std::string password;  // empty: a user that cannot sign in (managed users)
  std::string time_zone = "UTC";
  std::string username;
  bool is_admin = false;
};

// The user accounts. Thread-safe. Methods may throw DatabaseUnavailable. The host's Identity
// (identity.hpp) is one; logic classes take this narrower view.
class UserDirectory {
 public:
  virtual ~UserDirectory() = default;
  virtual std::optional<User> FindUser(int64_t id) = 0;
  virtual std::optional<User> FindUserByEmail(const std::string& email) = 0;
  // Creates a user. Invalid for a bad field (field() names it: email, name, timeZone, password,
  // username); Conflict for a taken e-mail, or for a taken username (reason "username_taken").
  virtual Result<User> CreateUser(const NewUser& fields) = 0;
  // The same with a username derived from the e-mail.
  Result<User> CreateUser(const std::string& email, const std::string& name, const std::string& password,
                          const std::string& time_zone, bool is_admin) {
    return CreateUser(NewUser{email, name, password, time_zone, "", is_admin});
  }
};

}  // namespace rendezvous
