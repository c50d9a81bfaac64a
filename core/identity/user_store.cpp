#include "identity/user_store.hpp"

#include <memory>
#include <set>

#include "rendezvous/crypto.hpp"

namespace rendezvous::core {
namespace {

std::optional<User> FindById(DbConnection& conn, int64_t id) {
  std::optional<DbRow> row = conn.QueryOne(std::string("SELECT ") + kUserColumns + " FROM users u WHERE u.id = ?", {id});
  if (!row) return std::nullopt;
  return UserFromRow(*row);
}

// Thrown out of a transaction to roll it back, carrying the answer.
struct RolledBack {
  Status status;
};

bool IsUsernameKey(const DuplicateKey& e) {
  return std::string(e.what()).find("uq_users_username") != std::string::npos;
}

Status UsernameTaken() {
  return Status(ErrorCode::kConflict, "this username is taken")
      .WithReason("username_taken")
      .WithDetails(Json{{"field", "username"}});
}

// `text` as a LIKE pattern matching itself literally (the escape character is '\').
std::string LikeLiteral(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '%' || c == '_' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

// The first of base, base1, base2, ... that no user has. Every candidate begins with the first 44
// characters of base (a suffix has at most 20 digits), so one read of the usernames with that
// prefix finds them all. The read locks (it waits for creations not yet committed), but it cannot
// lock a name nobody has yet: the caller retries when the insert meets a duplicate.
std::string FreeUsername(DbConnection& conn, const std::string& base) {
  const std::string prefix = base.substr(0, kMaxUsernameChars - 20);
  std::set<std::string> taken;
  for (const DbRow& row : conn.Query("SELECT username FROM users WHERE username LIKE ? FOR UPDATE",
                                     {LikeLiteral(prefix) + "%"})) {
    taken.insert(row.String(1));
  }
  if (!taken.contains(base)) return base;
  // At most taken.size() candidates are taken, so one of the first taken.size() + 1 is free.
  for (uint64_t n = 1;; ++n) {
    std::string candidate = UsernameWithSuffix(base, n);
    if (!taken.contains(candidate)) return candidate;
  }
}

}  // namespace

std::string SqlTimeToIso(const std::string& sql_time) {
  if (sql_time.size() < 19) return sql_time;
  std::string out = sql_time.substr(0, 10) + "T" + sql_time.substr(11, 8);
  std::string fraction = sql_time.size() > 20 ? sql_time.substr(20) : "";
  fraction.resize(3, '0');
  return out + "." + fraction + "Z";
}

User UserFromRow(const DbRow& row, int first) {
  User u;
  u.id = row.Int(first);
  u.email = row.String(first + 1);
  u.name = row.String(first + 2);
  u.time_zone = row.String(first + 3);
  u.week_start = row.String(first + 4);
  u.is_admin = row.Bool(first + 5);
  u.created_at = SqlTimeToIso(row.String(first + 6));
  u.username = row.String(first + 7);
  u.time_format = static_cast<int>(row.Int(first + 8));
  return u;
}

std::optional<User> UserStore::Find(int64_t id) {
  return db_.Run([&](DbConnection& conn) { return FindById(conn, id); });
}

std::optional<UserWithPassword> UserStore::FindByEmail(const std::string& email) {
  auto normalized = NormalizeEmail(email);
  if (!normalized.ok()) return std::nullopt;
  return db_.Run([&](DbConnection& conn) -> std::optional<UserWithPassword> {
    std::optional<DbRow> row = conn.QueryOne(
        std::string("SELECT ") + kUserColumns + ", u.password_hash FROM users u WHERE u.email = ?", {*normalized});
    if (!row) return std::nullopt;
    return UserWithPassword{UserFromRow(*row), row->OptString(kUserColumnCount + 1)};
  });
}

Result<User> UserStore::Create(const NewUser& fields,
                               const std::function<Status(DbConnection&, const User&)>& also) try {
  auto normalized_email = NormalizeEmail(fields.email);
  if (!normalized_email.ok()) return Status::Invalid("email", normalized_email.status().message());
  auto checked_name = ValidateName(fields.name);
  if (!checked_name.ok()) return Status::Invalid("name", checked_name.status().message());
  std::string zone = fields.time_zone.empty() ? "UTC" : fields.time_zone;
  if (!IsValidTimeZone(zone)) {
    return Status::Invalid("timeZone", "timeZone must be an IANA time zone name");
  }
  if (fields.password.size() > kMaxPasswordBytes) {
    return Status::Invalid("password", "password must be at most 1024 bytes");
  }
  if (!fields.username.empty() && !IsValidUsername(fields.username)) {
    return Status::Invalid("username",
                           "username must be 1 to 64 characters: lowercase letters, digits, '-', '_' or '.'");
  }
  std::optional<std::string> hash;
  if (!fields.password.empty()) hash = crypto::HashPassword(fields.password);

  return db_.Transaction([&](DbConnection& conn) -> Result<User> {
    // A derived username that a concurrent creation took between the look-up and the insert (the
    // look-up's lock does not cover names not yet written): look again, a bounded number of times.
    constexpr int kAttempts = 20;
    for (int attempt = 1;; ++attempt) {
      const std::string username = fields.username.empty()
                                       ? FreeUsername(conn, DeriveUsernameBase(*normalized_email))
                                       : fields.username;
      try {
        conn.Exec(
            "INSERT INTO users (email, username, name, time_zone, week_start, time_format, password_hash, "
            "is_admin, created_at, updated_at) VALUES (?, ?, ?, ?, 'Monday', 12, ?, ?, UTC_TIMESTAMP(3), "
            "UTC_TIMESTAMP(3))",
            {*normalized_email, username, *checked_name, zone, hash, fields.is_admin});
        break;
      } catch (const DuplicateKey& e) {
        // A duplicate is an expected outcome, not a failure of the transaction.
        if (!IsUsernameKey(e)) return Status(ErrorCode::kConflict, "a user with this email already exists");
        if (!fields.username.empty()) return UsernameTaken();
        if (attempt == kAttempts)
          return Status(ErrorCode::kUnavailable, "too many users are being created at once");
      }
    }
    auto user = FindById(conn, conn.LastInsertId());
    if (!user) return Status(ErrorCode::kInternal, "created user not found");
    if (also) {
      if (Status done = also(conn, *user); !done.ok()) throw RolledBack{std::move(done)};
    }
    return *user;
  });
} catch (RolledBack& rolled_back) {
  return std::move(rolled_back.status);
}

Result<User> UserStore::Update(int64_t id, const ProfilePatch& patch,
                               const std::function<Status(DbConnection&)>& also) try {
  return db_.Transaction([&](DbConnection& conn) -> Result<User> {
    if (patch.name || patch.time_zone || patch.week_start || patch.username || patch.time_format) {
      try {
        conn.Exec(
            "UPDATE users SET name = COALESCE(?, name), time_zone = COALESCE(?, time_zone), "
            "week_start = COALESCE(?, week_start), username = COALESCE(?, username), "
            "time_format = COALESCE(?, time_format), updated_at = UTC_TIMESTAMP(3) WHERE id = ?",
            {patch.name, patch.time_zone, patch.week_start, patch.username,
             patch.time_format ? std::optional<int64_t>(*patch.time_format) : std::nullopt, id});
      } catch (const DuplicateKey& e) {
        if (IsUsernameKey(e)) return UsernameTaken();
        throw;
      }
    }
    if (also) {
      if (Status done = also(conn); !done.ok()) throw RolledBack{std::move(done)};
    }
    auto user = FindById(conn, id);
    if (!user) return Status(ErrorCode::kNotFound, "user not found");
    return *user;
  });
} catch (RolledBack& rolled_back) {
  return std::move(rolled_back.status);
}

Status UserStore::Delete(int64_t id) {
  const uint64_t deleted =
      db_.Run([&](DbConnection& conn) { return conn.Exec("DELETE FROM users WHERE id = ?", {id}); });
  if (deleted == 0) return Status::NotFound("user not found");
  return Status::Ok();
}

}  // namespace rendezvous::core
