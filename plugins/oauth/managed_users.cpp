#include "managed_users.hpp"

namespace rendezvous::oauth {

ManagedUsers::ManagedUsers(Database& db, size_t cache_entries)
    : db_(db), cache_entries_(cache_entries == 0 ? 1 : cache_entries) {}

std::optional<std::string> ManagedUsers::ManagingClient(int64_t user_id) {
  if (user_id <= 0) return std::nullopt;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(user_id);
    if (it != cache_.end()) return it->second;
  }
  // Only links are remembered: a user id without one may be a managed user not created yet.
  std::optional<std::string> client = db_.Run([&](DbConnection& conn) -> std::optional<std::string> {
    std::optional<DbRow> row =
        conn.QueryOne("SELECT client_id FROM oauth_managed_users WHERE user_id = ?", {user_id});
    if (!row) return std::nullopt;
    return row->String(1);
  });
  if (client) {
    std::lock_guard<std::mutex> lock(mu_);
    if (cache_.size() >= cache_entries_) cache_.clear();
    cache_.emplace(user_id, *client);
  }
  return client;
}

}  // namespace rendezvous::oauth
