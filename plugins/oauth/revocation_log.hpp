// The revocation log (oauth_revocations, oauth migration 8) and the feed that follows it: how a
// revocation made on one instance reaches the token caches (token_cache.hpp) and the client caches
// (client_cache.hpp) of every instance on the same database within 1 s (DESIGN §5).
//
// Writers: every transaction that revokes access tokens (RFC 7009 revocation, reuse detection, a
// replayed code, a managed user's force-refresh or deletion) and every transaction that changes a
// client (its row: state, scopes, redirect URIs...; a secret generated or revoked: a 'client'
// row) calls RecordRevocation in that transaction, so the log row commits with the change or not
// at all. The revoking instance then also evicts at once (TokenCache::Evict, ClientCache::Evict
// after the commit). A 'client' row drops the client from the client cache and its tokens from
// the token cache (they are read again: a change of secrets leaves them valid).
//
// Reader: RevocationFeed reads, every kPollInterval, the rows created in the last kWindow by the
// database's clock (an indexed range on created_at) and evicts what the rows it had not seen
// before name. Reading a time window rather than "ids above the last one seen" is what makes it
// safe where ids are not handed out in commit order: a transaction that took id 10 may commit
// after one that took id 11 (and on Galera each node hands out its own ids,
// auto_increment_increment apart), so a row can appear behind the highest id already seen; it is
// still inside the window when it appears (a revoking transaction commits well within kWindow of
// its log row's created_at, and the nodes' clocks agree within a second). Ids only tell rows
// apart.
//
// Failing safe: after each successful read the cache may serve entries for
// TokenCache::kMaxStaleness from the moment that read began, no longer; when reads fail, the
// caches stop serving (every look-up reads the database) until one succeeds. When the gap between
// two successful reads is longer than kWindow - kSlack, rows may have left the window unseen: the
// feed then clears the caches. A read that returns more than kMaxRows rows clears them too.
//
// The purger (token_purger.hpp) deletes log rows older than kKeep.
//
// Thread-safe. The Database, Logger, TokenCache and ClientCache must outlive the feed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"

namespace rendezvous::oauth {

// What a revocation names: one access token (its hash), a grant (its id), every grant of a user
// (user id) or of a client (client_id).
enum class RevocationKind { kToken, kGrant, kUser, kClient };

struct Revocation {
  RevocationKind kind = RevocationKind::kToken;
  std::string subject;
};

// The name of a kind as the log stores it ("token", "grant", "user", "client"), and back
// (nullopt for anything else).
std::string_view RevocationKindName(RevocationKind kind);
std::optional<RevocationKind> ParseRevocationKind(std::string_view name);

// Writes the log row of `revocation` on `tx` (the revoking transaction).
void RecordRevocation(DbConnection& tx, const Revocation& revocation);

class TokenCache;
class ClientCache;

class RevocationFeed {
 public:
  static constexpr std::chrono::milliseconds kPollInterval{250};
  static constexpr std::chrono::seconds kWindow{5};
  static constexpr std::chrono::seconds kSlack{2};
  static constexpr std::chrono::minutes kKeep{10};
  static constexpr size_t kMaxRows = 10000;

  // `clients` may be null (no client cache to keep).
  RevocationFeed(Database& db, Logger& logger, TokenCache& cache, ClientCache* clients = nullptr);
  ~RevocationFeed();  // stops the thread
  RevocationFeed(const RevocationFeed&) = delete;
  RevocationFeed& operator=(const RevocationFeed&) = delete;

  // One read of the log and its evictions; false when the read failed (logged once per outage).
  bool Poll();

  // A thread that polls every kPollInterval. Stop wakes and joins it; both idempotent.
  void Start();
  void Stop();

 private:
  using Clock = std::chrono::steady_clock;

  Database& db_;
  Logger& logger_;
  TokenCache& cache_;
  ClientCache* clients_;
  std::mutex poll_mu_;                                   // one Poll at a time
  std::unordered_map<int64_t, Clock::time_point> seen_;  // log ids applied, when first seen
  Clock::time_point last_read_;                          // the start of the last successful read
  bool failing_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace rendezvous::oauth
