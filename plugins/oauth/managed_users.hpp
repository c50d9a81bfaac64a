// Managed users (DESIGN §10): which OAuth client created each one. The link is written with the
// user's first tokens (ManagedUserTokens::Issue) and never changes; it stays after the user is
// deleted (deleted_at), so the events of a deleted user's bookings still name their client.
//
// Storage (owner "oauth", migration 7): oauth_managed_users (user_id, client_id, locale,
// created_at, deleted_at). Thread-safe; may throw DatabaseUnavailable. The Database must outlive
// it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rendezvous/bounded_cache.hpp"
#include "rendezvous/database.hpp"

namespace rendezvous::oauth {

// A managed user as its client sees it here: the user's id and the locale the client gave.
struct ManagedUserLink {
  int64_t user_id = 0;
  std::string locale;  // "" when none was given
};

class ManagedUsers {
 public:
  // `cache_entries` bounds the answers kept in memory (the least recently used goes first).
  explicit ManagedUsers(Database& db, size_t cache_entries = 100000);

  // The client that created `user_id` (deleted or not); nullopt for a user no client manages.
  // Known links are answered from memory: a link never changes.
  std::optional<std::string> ManagingClient(int64_t user_id);

  // `user_id` when `client_id` manages it and has not deleted it; nullopt otherwise (another
  // client's user is not told apart from no user).
  std::optional<ManagedUserLink> Find(const std::string& client_id, int64_t user_id);
  // The client's users not deleted, by id, `offset` skipped, at most `limit`; and how many there are.
  std::vector<ManagedUserLink> List(const std::string& client_id, int64_t limit, int64_t offset);
  int64_t Count(const std::string& client_id);
  void SetLocale(int64_t user_id, const std::string& locale);
  // The user is gone; the link stays (ManagingClient still answers).
  void MarkDeleted(int64_t user_id);

 private:
  Database& db_;
  using Cache = BoundedCache<int64_t, std::string>;
  Cache cache_;  // links never change: kept until evicted
};

}  // namespace rendezvous::oauth
