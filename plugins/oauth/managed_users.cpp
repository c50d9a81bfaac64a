#include "managed_users.hpp"

namespace rendezvous::oauth {

ManagedUsers::ManagedUsers(Database& db, size_t cache_entries)
    : db_(db), cache_(cache_entries == 0 ? 1 : cache_entries, Cache::kNoExpiry) {}

std::optional<std::string> ManagedUsers::ManagingClient(int64_t user_id) {
  if (user_id <= 0) return std::nullopt;
  if (std::optional<std::string> known = cache_.Get(user_id)) return known;
  // Only links are remembered: a user id without one may be a managed user not created yet.
  std::optional<std::string> client = db_.Run([&](DbConnection& conn) -> std::optional<std::string> {
    std::optional<DbRow> row =
        conn.QueryOne("SELECT client_id FROM oauth_managed_users WHERE user_id = ?", {user_id});
    if (!row) return std::nullopt;
    return row->String(1);
  });
  if (client) cache_.Put(user_id, *client);
  return client;
}

namespace {

ManagedUserLink LinkOf(const DbRow& row) {
  return ManagedUserLink{row.Int(1), row.IsNull(2) ? std::string() : row.String(2)};
}

}  // namespace

std::optional<ManagedUserLink> ManagedUsers::Find(const std::string& client_id, int64_t user_id) {
  if (user_id <= 0) return std::nullopt;
  return db_.Run([&](DbConnection& conn) -> std::optional<ManagedUserLink> {
    std::optional<DbRow> row = conn.QueryOne(
        "SELECT user_id, locale FROM oauth_managed_users WHERE user_id = ? AND client_id = ? AND deleted_at "
        "IS NULL",
        {user_id, client_id});
    if (!row) return std::nullopt;
    return LinkOf(*row);
  });
}

std::vector<ManagedUserLink> ManagedUsers::List(const std::string& client_id, int64_t limit, int64_t offset) {
  return db_.Run([&](DbConnection& conn) {
    std::vector<ManagedUserLink> out;
    for (const DbRow& row :
         conn.Query("SELECT user_id, locale FROM oauth_managed_users"
                    " WHERE client_id = ? AND deleted_at IS NULL ORDER BY user_id LIMIT ? OFFSET ?",
                    {client_id, limit, offset})) {
      out.push_back(LinkOf(row));
    }
    return out;
  });
}

int64_t ManagedUsers::Count(const std::string& client_id) {
  return db_.Run([&](DbConnection& conn) {
    std::optional<DbRow> row = conn.QueryOne(
        "SELECT COUNT(*) FROM oauth_managed_users WHERE client_id = ? AND deleted_at IS NULL", {client_id});
    return row ? row->Int(1) : int64_t{0};
  });
}

void ManagedUsers::SetLocale(int64_t user_id, const std::string& locale) {
  db_.Run([&](DbConnection& conn) {
    conn.Exec("UPDATE oauth_managed_users SET locale = ? WHERE user_id = ?",
              {locale.empty() ? DbValue() : DbValue(locale), user_id});
  });
}

void ManagedUsers::MarkDeleted(int64_t user_id) {
  db_.Run([&](DbConnection& conn) {
    conn.Exec(
        "UPDATE oauth_managed_users SET deleted_at = UTC_TIMESTAMP(3) WHERE user_id = ? AND deleted_at IS "
        "NULL",
        {user_id});
  });
}

}  // namespace rendezvous::oauth
