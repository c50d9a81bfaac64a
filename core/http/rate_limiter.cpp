#include "http/rate_limiter.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <vector>

#include "http/client_address.hpp"

namespace rendezvous::core {
namespace {

// Float error must not turn "exactly full" into "one more second".
constexpr double kEpsilon = 1e-9;

int CeilSeconds(double seconds) {
  if (seconds <= kEpsilon) return 0;
  return static_cast<int>(std::min(std::ceil(seconds - kEpsilon), 1e9));
}

}  // namespace

RateLimiter::RateLimiter(long per_minute, long burst, size_t max_keys)
    : per_minute_(per_minute),
      burst_(burst),
      per_second_(static_cast<double>(per_minute) / 60.0),
      shard_capacity_(std::max<size_t>(1, (max_keys + kShards - 1) / kShards)) {
  if (per_minute < 1 || burst < 1) throw std::invalid_argument("a rate limit needs per_minute >= 1 and burst >= 1");
}

double RateLimiter::TokensAt(const Bucket& bucket, Clock::time_point now) const {
  const double elapsed = now > bucket.at ? std::chrono::duration<double>(now - bucket.at).count() : 0.0;
  return std::min(static_cast<double>(burst_), bucket.tokens + elapsed * per_second_);
}

void RateLimiter::MakeRoom(Shard& shard, Clock::time_point now) const {
  const double full = static_cast<double>(burst_) - kEpsilon;
  std::erase_if(shard.buckets, [&](const auto& entry) { return TokensAt(entry.second, now) >= full; });
  const size_t keep = shard_capacity_ - std::max<size_t>(1, shard_capacity_ / 8);
  if (shard.buckets.size() <= keep) return;
  // No bucket is full: drop the fullest ones, whose callers lose the least by starting afresh.
  std::vector<std::pair<double, std::unordered_map<std::string, Bucket>::iterator>> by_tokens;
  by_tokens.reserve(shard.buckets.size());
  for (auto it = shard.buckets.begin(); it != shard.buckets.end(); ++it)
    by_tokens.emplace_back(TokensAt(it->second, now), it);
  const size_t drop = shard.buckets.size() - keep;
  std::nth_element(by_tokens.begin(), by_tokens.begin() + static_cast<std::ptrdiff_t>(drop - 1), by_tokens.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; i < drop; ++i) shard.buckets.erase(by_tokens[i].second);
}

RateLimiter::Decision RateLimiter::Take(std::string_view key, Clock::time_point now) {
  Shard& shard = shards_[std::hash<std::string_view>{}(key) % kShards];
  double tokens;
  {
    std::lock_guard lock(shard.mu);
    auto it = shard.buckets.find(std::string(key));
    if (it == shard.buckets.end()) {
      if (shard.buckets.size() >= shard_capacity_) MakeRoom(shard, now);
      it = shard.buckets.emplace(std::string(key), Bucket{static_cast<double>(burst_), now}).first;
    }
    Bucket& bucket = it->second;
    tokens = TokensAt(bucket, now);
    bucket.at = std::max(bucket.at, now);
    if (tokens >= 1.0 - kEpsilon) {
      tokens = std::max(0.0, tokens - 1.0);
      bucket.tokens = tokens;
      Decision d;
      d.limit = static_cast<int>(burst_);
      d.remaining = static_cast<int>(std::floor(tokens + kEpsilon));
      d.reset_seconds = CeilSeconds((static_cast<double>(burst_) - tokens) / per_second_);
      return d;
    }
    bucket.tokens = tokens;
  }
  Decision d;
  d.allowed = false;
  d.limit = static_cast<int>(burst_);
  d.remaining = 0;
  d.reset_seconds = CeilSeconds((static_cast<double>(burst_) - tokens) / per_second_);
  d.retry_after_seconds = std::max(1, CeilSeconds((1.0 - tokens) / per_second_));
  return d;
}

size_t RateLimiter::size() const {
  size_t total = 0;
  for (const Shard& shard : shards_) {
    std::lock_guard lock(shard.mu);
    total += shard.buckets.size();
  }
  return total;
}

std::string AddressKey(std::string_view address) {
  std::optional<IpAddress> ip = ParseIpAddress(address);
  if (!ip) return "?" + std::string(address);
  if (!ip->v6) return std::string("4") + std::string(reinterpret_cast<const char*>(ip->bytes.data()), 4);
  return std::string("6") + std::string(reinterpret_cast<const char*>(ip->bytes.data()), 8);
}

}  // namespace rendezvous::core
