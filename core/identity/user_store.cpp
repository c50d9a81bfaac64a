#include "identity/user_store.hpp"

#include <memory>

#include <cppconn/datatype.h>
#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>

#include "rendezvous/crypto.hpp"

namespace rendezvous::core {
namespace {

constexpr int kErDupEntry = 1062;

std::optional<User> FindById(DbConnection& conn, int64_t id) {
  auto& stmt = conn.Prepare(std::string("SELECT ") + kUserColumns + " FROM users u WHERE u.id = ?");
  stmt.setInt64(1, id);
  std::unique_ptr<sql::ResultSet> rs(stmt.executeQuery());
  if (!rs->next()) return std::nullopt;
  return UserFromRow(*rs);
}

}  // namespace

std::string SqlTimeToIso(const std::string& sql_time) {
  if (sql_time.size() < 19) return sql_time;
  std::string out = sql_time.substr(0, 10) + "T" + sql_time.substr(11, 8);
  std::string fraction = sql_time.size() > 20 ? sql_time.substr(20) : "";
  fraction.resize(3, '0');
  return out + "." + fraction + "Z";
}

User UserFromRow(sql::ResultSet& row, unsigned first) {
  User u;
  u.id = row.getInt64(first);
  u.email = row.getString(first + 1);
  u.name = row.getString(first + 2);
  u.time_zone = row.getString(first + 3);
  u.week_start = row.getString(first + 4);
  u.is_admin = row.getBoolean(first + 5);
  u.created_at = SqlTimeToIso(row.getString(first + 6));
  return u;
}

std::optional<User> UserStore::Find(int64_t id) {
  return db_.Run([&](DbConnection& conn) { return FindById(conn, id); });
}

std::optional<UserWithPassword> UserStore::FindByEmail(const std::string& email) {
  auto normalized = NormalizeEmail(email);
  if (!normalized.ok()) return std::nullopt;
  return db_.Run([&](DbConnection& conn) -> std::optional<UserWithPassword> {
    auto& stmt = conn.Prepare(std::string("SELECT ") + kUserColumns +
                              ", u.password_hash FROM users u WHERE u.email = ?");
    stmt.setString(1, *normalized);
    std::unique_ptr<sql::ResultSet> rs(stmt.executeQuery());
    if (!rs->next()) return std::nullopt;
    UserWithPassword out{UserFromRow(*rs), std::nullopt};
    if (!rs->isNull(kUserColumnCount + 1)) {
      out.password_hash = static_cast<std::string>(rs->getString(kUserColumnCount + 1));
    }
    return out;
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
    auto& stmt = conn.Prepare(
        "INSERT INTO users (email, name, time_zone, week_start, password_hash, is_admin, "
        "created_at, updated_at) VALUES (?, ?, ?, 'Monday', ?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))");
    stmt.setString(1, *normalized_email);
    stmt.setString(2, *checked_name);
    stmt.setString(3, zone);
    if (hash) {
      stmt.setString(4, *hash);
    } else {
      stmt.setNull(4, sql::DataType::VARCHAR);
    }
    stmt.setBoolean(5, is_admin);
    try {
      stmt.executeUpdate();
    } catch (const sql::SQLException& e) {
      // A duplicate is an expected outcome, not a failure of the transaction.
      if (e.getErrorCode() == kErDupEntry) {
        return Status(ErrorCode::kConflict, "a user with this email already exists");
      }
      throw;
    }
    auto user = FindById(conn, conn.LastInsertId());
    if (!user) return Status(ErrorCode::kInternal, "created user not found");
    return *user;
  });
}

Result<User> UserStore::Update(int64_t id, const ProfilePatch& patch) {
  return db_.Transaction([&](DbConnection& conn) -> Result<User> {
    if (patch.name || patch.time_zone || patch.week_start) {
      auto& stmt = conn.Prepare(
          "UPDATE users SET name = COALESCE(?, name), time_zone = COALESCE(?, time_zone), "
          "week_start = COALESCE(?, week_start), updated_at = UTC_TIMESTAMP(3) WHERE id = ?");
      const std::optional<std::string>* fields[] = {&patch.name, &patch.time_zone, &patch.week_start};
      for (unsigned i = 0; i < 3; ++i) {
        if (*fields[i]) {
          stmt.setString(i + 1, **fields[i]);
        } else {
          stmt.setNull(i + 1, sql::DataType::VARCHAR);
        }
      }
      stmt.setInt64(4, id);
      stmt.executeUpdate();
    }
    auto user = FindById(conn, id);
    if (!user) return Status(ErrorCode::kNotFound, "user not found");
    return *user;
  });
}

}  // namespace rendezvous::core
