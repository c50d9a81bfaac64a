// What client authentication (client_auth.hpp) reads of a client -- its kind and its active
// secrets' hashes -- kept in memory, so that the introspection, revocation and PAR endpoints (and
// every other caller of ClientService::LoadCredentials) authenticate a client without a database
// round trip. The secret the client sends is still hashed and compared in constant time against
// every cached hash (AuthenticateClient); only the stored side comes from memory.
//
// Kept honest like the token cache (token_cache.hpp): every change that can make a client
// authenticate differently (a secret generated or revoked, any change of the client's row) writes a
// 'client' row to the revocation log in its transaction (revocation_log.hpp) and evicts the client
// here once it committed, so the instance that made the change answers from the database at once;
// every other instance evicts it when its RevocationFeed reads the row (within 1 s), and serves
// nothing while the log has not been read for TokenCache::kMaxStaleness.
//
// Only clients that exist are kept: a look-up of an unknown client_id reads the database and keeps
// nothing, so made-up ids cost a query each but cannot fill the cache. Entries are bounded by
// count and bytes (least recently used evicted first) and leave kTimeToLive after they were read,
// whatever the log says.
//
// A look-up that missed takes a Ticket before its read; Put keeps the entry only when no eviction
// was applied since (an eviction racing with the read could otherwise be undone).
//
// Thread-safe: every member may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "client_auth.hpp"
#include "rendezvous/bounded_cache.hpp"
#include "rendezvous/metrics.hpp"

namespace rendezvous::oauth {

struct ClientCacheLimits {
  size_t max_entries = 10000;  // 0 turns the cache off
  size_t max_bytes = 8388608;
};

class ClientCache {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kTimeToLive{60};

  // `metrics` may be null (no metrics, for unit tests); it must outlive the cache.
  explicit ClientCache(ClientCacheLimits limits, Metrics* metrics = nullptr);

  bool enabled() const { return enabled_; }

  struct Ticket {
    uint64_t generation = 0;
  };
  // Taken before the database read whose result is Put.
  Ticket Take() const;

  // The client's credentials, when cached and the revocation log was read recently enough. Counts
  // a hit, a miss or a stale look-up (an entry not served because the log was not read lately).
  std::optional<ClientCredentials> Get(const std::string& client_id);
  // Keeps the credentials of a client just read, unless an eviction was applied since `ticket`.
  void Put(const std::string& client_id, const ClientCredentials& credentials, const Ticket& ticket);

  // Drops the client (a 'client' revocation named it).
  void Evict(const std::string& client_id);
  // Drops every entry (the revocation log could not be followed).
  void Clear();
  // Entries may be served until `until` (set by the revocation feed after each read).
  void SetFreshUntil(Clock::time_point until);

  size_t Size() { return cache_.Size(); }
  size_t Bytes() { return cache_.Bytes(); }
  uint64_t Evicted() const { return cache_.Evicted(); }
  // Updates the entries gauge and the count of evictions for the bounds (the feed calls it each
  // round).
  void PublishGauges();

 private:
  const bool enabled_;
  BoundedCache<std::string, ClientCredentials, 8> cache_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int64_t> fresh_until_{0};  // Clock ticks since its epoch
  uint64_t published_evictions_ = 0;     // under the feed's thread only
  Metric* hits_ = nullptr;
  Metric* misses_ = nullptr;
  Metric* stale_ = nullptr;
  Metric* evicted_bound_ = nullptr;
  Metric* evicted_revoked_ = nullptr;
  Metric* entries_ = nullptr;
};

}  // namespace rendezvous::oauth
