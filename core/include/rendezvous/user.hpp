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
  bool is_admin = false;
  std::string created_at;  // ISO 8601 UTC
};

// The user accounts. Thread-safe. Methods may throw DatabaseUnavailable. The host's Identity
// (identity.hpp) is one; logic classes take this narrower view.
class UserDirectory {
 public:
  virtual ~UserDirectory() = default;
  virtual std::optional<User> FindUser(int64_t id) = 0;
  virtual std::optional<User> FindUserByEmail(const std::string& email) = 0;
  // Creates a user; an empty password creates one that cannot sign in (managed users).
  virtual Result<User> CreateUser(const std::string& email, const std::string& name,
                                  const std::string& password, const std::string& time_zone,
                                  bool is_admin) = 0;
};

}  // namespace rendezvous
