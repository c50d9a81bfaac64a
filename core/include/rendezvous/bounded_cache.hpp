// A bounded in-memory cache for the host and the plugins: entries expire a fixed time after they
// were put (or never: kNoExpiry); the least recently used entries are evicted when a bound is
// reached. Two bounds: the number of entries, and optionally the bytes the entries weigh together
// (a `weigh(key, value)` function says what one entry weighs; an entry heavier than its shard's
// byte budget is not kept). Both bounds are split evenly over kShards shards (keys are spread by
// std::hash), each at least one entry.
//
// Thread-safety: every member may be called from any thread at any time; each shard has its own
// mutex, held while the shard is read or changed; `now` is called with it held, `weigh` without
// (neither may use the cache). Values are returned by copy: keep them small or hold a shared_ptr.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

namespace rendezvous {

template <class Key, class Value, size_t kShards = 8>
class BoundedCache {
 public:
  using Clock = std::chrono::steady_clock;
  using NowFn = std::function<Clock::time_point()>;
  using WeighFn = std::function<size_t(const Key&, const Value&)>;

  // Entries that never expire (they leave only when evicted or erased).
  static constexpr std::chrono::milliseconds kNoExpiry = std::chrono::milliseconds::max();

  // max_entries: over all shards (at least one per shard); ttl <= 0 disables the cache (Get finds
  // nothing, Put keeps nothing). max_bytes 0: no byte bound (and `weigh` is not called).
  BoundedCache(size_t max_entries, std::chrono::milliseconds ttl, NowFn now = &Clock::now,
               size_t max_bytes = 0, WeighFn weigh = {})
      : per_shard_(max_entries / kShards > 0 ? max_entries / kShards : 1),
        bytes_per_shard_(max_bytes == 0 ? 0 : (max_bytes / kShards > 0 ? max_bytes / kShards : 1)),
        ttl_(ttl),
        now_(std::move(now)),
        weigh_(std::move(weigh)) {}

  bool enabled() const { return ttl_.count() > 0; }

  // The value if present and not expired (an expired entry is dropped).
  std::optional<Value> Get(const Key& key) {
    if (!enabled()) return std::nullopt;
    Shard& s = ShardOf(key);
    std::lock_guard lock(s.mu);
    auto it = s.index.find(key);
    if (it == s.index.end()) return std::nullopt;
    if (it->second->expires != Clock::time_point::max() && now_() >= it->second->expires) {
      Drop(s, it->second);
      return std::nullopt;
    }
    s.order.splice(s.order.begin(), s.order, it->second);
    return it->second->value;
  }

  // Keeps `value` for `key` (replacing an older one), then evicts the least recently used entries
  // of the shard past its bounds.
  void Put(const Key& key, Value value) {
    if (!enabled()) return;
    const size_t bytes = bytes_per_shard_ > 0 && weigh_ ? weigh_(key, value) : 0;
    Shard& s = ShardOf(key);
    std::lock_guard lock(s.mu);
    const auto expires = ttl_ == kNoExpiry ? Clock::time_point::max() : now_() + ttl_;
    auto it = s.index.find(key);
    if (it != s.index.end()) Drop(s, it->second);
    if (bytes_per_shard_ > 0 && bytes > bytes_per_shard_) return;
    while (!s.order.empty() &&
           (s.index.size() >= per_shard_ || (bytes_per_shard_ > 0 && s.bytes + bytes > bytes_per_shard_))) {
      Drop(s, std::prev(s.order.end()));
      evicted_.fetch_add(1, std::memory_order_relaxed);
    }
    s.order.push_front(Entry{key, std::move(value), expires, bytes});
    s.index.emplace(key, s.order.begin());
    s.bytes += bytes;
  }

  void Erase(const Key& key) {
    Shard& s = ShardOf(key);
    std::lock_guard lock(s.mu);
    auto it = s.index.find(key);
    if (it != s.index.end()) Drop(s, it->second);
  }

  // Drops every entry for which pred(key, value) is true (a full scan; for rare events).
  template <class Pred>
  void EraseIf(Pred pred) {
    for (Shard& s : shards_) {
      std::lock_guard lock(s.mu);
      for (auto it = s.order.begin(); it != s.order.end();) {
        auto next = std::next(it);
        if (pred(it->key, it->value)) Drop(s, it);
        it = next;
      }
    }
  }

  size_t Size() {
    size_t n = 0;
    for (Shard& s : shards_) {
      std::lock_guard lock(s.mu);
      n += s.index.size();
    }
    return n;
  }

  // The entries dropped so far to keep a bound (not those erased, replaced or expired).
  uint64_t Evicted() const { return evicted_.load(std::memory_order_relaxed); }

  // What the entries weigh together (0 without a byte bound).
  size_t Bytes() {
    size_t n = 0;
    for (Shard& s : shards_) {
      std::lock_guard lock(s.mu);
      n += s.bytes;
    }
    return n;
  }

 private:
  struct Entry {
    Key key;
    Value value;
    Clock::time_point expires;
    size_t bytes;
  };
  struct Shard {
    std::mutex mu;
    std::list<Entry> order;  // most recently used first
    std::unordered_map<Key, typename std::list<Entry>::iterator> index;
    size_t bytes = 0;
  };

  Shard& ShardOf(const Key& key) { return shards_[std::hash<Key>{}(key) % kShards]; }

  static void Drop(Shard& s, typename std::list<Entry>::iterator it) {
    s.bytes -= it->bytes;
    s.index.erase(it->key);
    s.order.erase(it);
  }

  const size_t per_shard_;
  const size_t bytes_per_shard_;
  const std::chrono::milliseconds ttl_;
  const NowFn now_;
  const WeighFn weigh_;
  std::array<Shard, kShards> shards_;
  std::atomic<uint64_t> evicted_{0};
};

}  // namespace rendezvous
