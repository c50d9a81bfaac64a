// A UserDirectory that knows a fixed list of users, for service tests that only look users up.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rendezvous/user.hpp"

namespace rendezvous::testing {

class StaticUsers final : public UserDirectory {
 public:
  explicit StaticUsers(std::vector<User> users) : users_(std::move(users)) {}

  std::optional<User> FindUser(int64_t id) override {
    for (const User& u : users_) {
      if (u.id == id) return u;
    }
    return std::nullopt;
  }
  std::optional<User> FindUserByEmail(const std::string&) override { return std::nullopt; }
  using UserDirectory::CreateUser;
  Result<User> CreateUser(const NewUser&) override {
    return Status(ErrorCode::kInternal, "not in these tests");
  }

 private:
  std::vector<User> users_;
};

// A user with an id, a name and an e-mail.
inline User TestUser(int64_t id, std::string name, std::string email) {
  User u;
  u.id = id;
  u.name = std::move(name);
  u.email = std::move(email);
  return u;
}

}  // namespace rendezvous::testing
