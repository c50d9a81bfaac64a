// Token buckets for the rate limits of DESIGN §4: one bucket per key (a client address, a
// credential), `per_minute` tokens a minute refill it, `burst` is its size, a request takes one
// token or is refused. Limits are per process: instances behind one balancer each count their own.
//
// Memory is bounded whatever the callers send: at most `max_keys` buckets (split over shards).
// When a shard is full, the buckets that have refilled completely are dropped first (forgetting
// them loses nothing: a new bucket starts full); when none has, the fullest eighth goes, so a
// caller that rotates keys evicts the buckets nearest to full, never the ones it drained first.
//
// Thread-safe: Take() locks only the shard of its key.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace rendezvous::core {

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kDefaultMaxKeys = 65536;

  struct Decision {
    bool allowed = true;
    int limit = 0;                // the bucket's size (burst): X-RateLimit-Limit
    int remaining = 0;            // whole tokens left after this request: X-RateLimit-Remaining
    int reset_seconds = 0;        // until the bucket is full again: X-RateLimit-Reset
    int retry_after_seconds = 0;  // refused: until a token is back, >= 1 (Retry-After); else 0
  };

  // per_minute >= 1, burst >= 1 (std::invalid_argument otherwise); max_keys >= the shard count.
  RateLimiter(long per_minute, long burst, size_t max_keys = kDefaultMaxKeys);
  RateLimiter(const RateLimiter&) = delete;
  RateLimiter& operator=(const RateLimiter&) = delete;

  // Takes a token from `key`'s bucket at `now` (callers pass a monotonic time; a time earlier
  // than the bucket's last one counts as no time passed).
  Decision Take(std::string_view key, Clock::time_point now);

  // Buckets held now, across shards.
  size_t size() const;

  long per_minute() const { return per_minute_; }
  long burst() const { return burst_; }

 private:
  static constexpr size_t kShards = 32;
  struct Bucket {
    double tokens = 0;
    Clock::time_point at;
  };
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<std::string, Bucket> buckets;
  };

  double TokensAt(const Bucket& bucket, Clock::time_point now) const;
  void MakeRoom(Shard& shard, Clock::time_point now) const;

  const long per_minute_;
  const long burst_;
  const double per_second_;
  const size_t shard_capacity_;
  std::array<Shard, kShards> shards_;
};

// The key a client address is limited by: an IPv4 address as it is; an IPv6 address by its /64
// (what one subscriber is usually given, so rotating inside it gains nothing). Text that is not
// an address is its own key.
std::string AddressKey(std::string_view address);

}  // namespace rendezvous::core
