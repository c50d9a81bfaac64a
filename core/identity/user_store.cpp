#include "identity/user_store.hpp"

#include <memory>

#include "rendezvous/crypto.hpp"

namespace rendezvous::core {
namespace {

std::optional<User> FindById(DbConnection& conn, int64_t id) {
  std::optional<DbRow> row = conn.QueryOne(std::string("SELECT ") + kUserColumns + " FROM users u WHERE u.id = ?", {id});
  if (!row) return std::nullopt;
  return UserFromRow(*row);
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

Result<User> UserStore::Create(const std::string& email, const std::string& name,
                               const std::string& password, const std::string& time_zone,
                               bool is_admin) {
  auto normalized_email = NormalizeEmail(email);
  if (!normalized_email.ok()) return normalized_email.status();
  auto checked_name = ValidateName(name);
  if (!checked_name.ok()) return checked_name.status();
  std::string zone = time_zone.empty() ? "UTC" : time_zone;
  if (!IsValidTimeZone(zone)) {
    return Status(ErrorCode::kInvalid, "timeZone must be an IANA time zone name");
  }
  if (password.size() > kMaxPasswordBytes) {
    return Status(ErrorCode::kInvalid, "password must be at most 1024 bytes");
  }
  std::optional<std::string> hash;
  if (!password.empty()) hash = crypto::HashPassword(password);

  return db_.Transaction([&](DbConnection& conn) -> Result<User> {
    try {
      conn.Exec(
          "INSERT INTO users (email, name, time_zone, week_start, password_hash, is_admin, "
          "created_at, updated_at) VALUES (?, ?, ?, 'Monday', ?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))",
          {*normalized_email, *checked_name, zone, hash, is_admin});
    } catch (const DuplicateKey&) {
      // A duplicate is an expected outcome, not a failure of the transaction.
      return Status(ErrorCode::kConflict, "a user with this email already exists");
    }
    auto user = FindById(conn, conn.LastInsertId());
    if (!user) return Status(ErrorCode::kInternal, "created user not found");
    return *user;
  });
}

Result<User> UserStore::Update(int64_t id, const ProfilePatch& patch) {
  return db_.Transaction([&](DbConnection& conn) -> Result<User> {
    if (patch.name || patch.time_zone || patch.week_start) {
      conn.Exec(
          "UPDATE users SET name = COALESCE(?, name), time_zone = COALESCE(?, time_zone), "
          "week_start = COALESCE(?, week_start), updated_at = UTC_TIMESTAMP(3) WHERE id = ?",
          {patch.name, patch.time_zone, patch.week_start, id});
    }
    auto user = FindById(conn, id);
    if (!user) return Status(ErrorCode::kNotFound, "user not found");
    return *user;
  });
}

}  // namespace rendezvous::core
