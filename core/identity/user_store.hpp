// The users table: creating, finding and updating users. Validates what it stores (email, name,
// time zone, password bound) and hashes passwords. Holds no state besides the Database reference
// (which must outlive it). Thread-safe; calls may throw DatabaseUnavailable.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "identity/validation.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/user.hpp"

namespace rendezvous::core {

// The columns UserFromRow reads, in order, for "SELECT <kUserColumns> FROM users u ...".
inline constexpr const char* kUserColumns =
    "u.id, u.email, u.name, u.time_zone, u.week_start, u.is_admin, u.created_at, u.username, u.time_format";
constexpr int kUserColumnCount = 9;
// Reads the kUserColumns starting at column `first` (1-based).
User UserFromRow(const DbRow& row, int first = 1);
// "2024-05-01 10:20:30.123" (DATETIME(3), UTC) -> "2024-05-01T10:20:30.123Z".
std::string SqlTimeToIso(const std::string& sql_time);

struct UserWithPassword {
  User user;
  std::optional<std::string> password_hash;  // nullopt: the user cannot sign in
};

class UserStore {
 public:
  explicit UserStore(Database& db) : db_(db) {}

  std::optional<User> Find(int64_t id);
  // `email` is normalised (NormalizeEmail) first; nullopt for an invalid one.
  std::optional<UserWithPassword> FindByEmail(const std::string& email);
  // kInvalid for a bad field (named), kConflict when the email is taken or the username is
  // (reason "username_taken"). An empty password stores none; an empty username is derived from
  // the e-mail (DeriveUsernameBase, then the first free UsernameWithSuffix).
  // `also`, when set, runs on the same transaction once the user's row is written, with the new
  // user: a failed Status from it rolls the creation back and is the answer.
  Result<User> Create(const NewUser& fields,
                      const std::function<Status(DbConnection&, const User&)>& also = nullptr);
  Result<User> Create(const std::string& email, const std::string& name, const std::string& password,
                      const std::string& time_zone, bool is_admin) {
    return Create(NewUser{email, name, password, time_zone, "", is_admin});
  }
  // Applies a checked patch; kNotFound when the user does not exist, kConflict (reason
  // "username_taken") when another user has the username asked for.
  // `also`, when set, runs on the same transaction after the users row was changed: a failed
  // Status from it rolls the whole patch back and is the answer.
  Result<User> Update(int64_t id, const ProfilePatch& patch,
                      const std::function<Status(DbConnection&)>& also = nullptr);
  // Deletes the user; its API keys, sessions and verified resources go with it (foreign keys).
  // kNotFound when there is no such user.
  Status Delete(int64_t id);

 private:
  Database& db_;
};

}  // namespace rendezvous::core
