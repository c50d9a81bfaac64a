// Validated access tokens kept in memory (DESIGN §5: "an instance may serve validated tokens from
// memory" as long as a revoked one is refused at once by the instance that revoked it and within
// 1 s by every other instance on the same database).
//
// Entries are keyed by the token's SHA-256 hex (as stored), bounded by a number of entries and by
// the bytes they weigh together (least recently used evicted first), and leave at the token's
// expiry. Only live tokens are kept: an unknown, expired or revoked token is never cached, so
// requests with made-up tokens cost a database look-up each but cannot fill the cache.
//
// Revocations reach the cache as Revocation values (a token, a grant, a user or a client),
// applied by Evict: on the revoking instance right after its transaction commits, and on every
// instance by the RevocationFeed, which reads the revocation log (revocation_log.hpp) every
// 250 ms. The cache serves entries only while the feed's last successful read began less than
// kMaxStaleness ago (SetFreshUntil): when the database cannot be read, every look-up goes to the
// database again instead of trusting what may have been revoked meanwhile.
//
// A look-up that missed reads the database and then Puts what it found; a revocation applied
// while that read was under way could be undone by the Put (the read saw the token live). So a
// reader takes a Ticket before its read and Put keeps the entry only when no revocation was
// applied since that ticket.
//
// Thread-safe: every member may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "issued_tokens.hpp"
#include "rendezvous/bounded_cache.hpp"
#include "rendezvous/metrics.hpp"
#include "revocation_log.hpp"

namespace rendezvous::oauth {

struct TokenCacheLimits {
  size_t max_entries = 100000;  // plugins.oauth.token_cache_entries; 0 turns the cache off
  size_t max_bytes = 67108864;  // plugins.oauth.token_cache_bytes
};

class TokenCache {
 public:
  using Clock = std::chrono::steady_clock;
  // The longest a cached entry is served after the last read of the revocation log began.
  static constexpr std::chrono::milliseconds kMaxStaleness{900};

  // `metrics` may be null (no metrics, for unit tests); it must outlive the cache.
  explicit TokenCache(TokenCacheLimits limits, Metrics* metrics = nullptr);

  bool enabled() const { return enabled_; }

  struct Ticket {
    uint64_t generation = 0;
    Clock::time_point taken;
  };
  // Taken before the database read whose result is Put.
  Ticket Take() const;

  // The live token of that hash, when cached, not expired, and the revocation log was read
  // recently enough. Counts a hit, a miss or a stale look-up (an entry that was not served
  // because the log has not been read lately).
  std::optional<ResolvedToken> Get(const std::string& hash);
  // Keeps a token just read live (`token.expires_in_ms` after the ticket was taken), unless a
  // revocation was applied since `ticket`.
  void Put(const std::string& hash, const ResolvedToken& token, const Ticket& ticket);

  // Drops every entry the revocation names.
  void Evict(const Revocation& revocation);
  // Drops every entry (the revocation log could not be followed).
  void Clear();
  // Entries may be served until `until` (the revocation feed's last read began at until -
  // kMaxStaleness).
  void SetFreshUntil(Clock::time_point until);

  size_t Size() { return cache_.Size(); }
  size_t Bytes() { return cache_.Bytes(); }
  uint64_t Evicted() const { return cache_.Evicted(); }
  // Updates the gauges and the count of evictions for the bounds (the feed calls it each round).
  void PublishGauges();

 private:
  struct Entry {
    ResolvedToken token;
    Clock::time_point expires;
  };

  const bool enabled_;
  BoundedCache<std::string, Entry, 16> cache_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int64_t> fresh_until_{0};  // Clock ticks since its epoch
  uint64_t published_evictions_ = 0;     // under the feed's thread only
  Metric* hits_ = nullptr;
  Metric* misses_ = nullptr;
  Metric* stale_ = nullptr;
  Metric* evicted_bound_ = nullptr;
  Metric* evicted_revoked_ = nullptr;
  Metric* entries_ = nullptr;
  Metric* bytes_ = nullptr;
};

}  // namespace rendezvous::oauth
