// A bounded in-memory cache whose entries expire a fixed time after insertion; least recently
// used entries are evicted when full. Used to keep credential and user look-ups off the database
// on hot paths. Thread-safe (one mutex per shard; keys are spread over shards by hash).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

namespace rendezvous::core {

template <class Key, class Value, size_t kShards = 8>
class TtlCache {
 public:
  using Clock = std::chrono::steady_clock;
  using NowFn = std::function<Clock::time_point()>;

  // capacity: total entries over all shards (at least one per shard); ttl <= 0 disables the cache.
  TtlCache(size_t capacity, std::chrono::milliseconds ttl, NowFn now = &Clock::now)
      : per_shard_(capacity / kShards > 0 ? capacity / kShards : 1), ttl_(ttl), now_(std::move(now)) {}

  bool enabled() const { return ttl_.count() > 0; }

  // The value if present and not expired (an expired entry is dropped).
  std::optional<Value> Get(const Key& key) {
    if (!enabled()) return std::nullopt;
    Shard& s = ShardOf(key);
    std::lock_guard lock(s.mu);
    auto it = s.index.find(key);
    if (it == s.index.end()) return std::nullopt;
    if (now_() >= it->second->expires) {
      s.order.erase(it->second);
      s.index.erase(it);
      return std::nullopt;
    }
    s.order.splice(s.order.begin(), s.order, it->second);
    return it->second->value;
  }

  void Put(const Key& key, Value value) {
    if (!enabled()) return;
    Shard& s = ShardOf(key);
    std::lock_guard lock(s.mu);
    auto expires = now_() + ttl_;
    auto it = s.index.find(key);
    if (it != s.index.end()) {
      it->second->value = std::move(value);
      it->second->expires = expires;
      s.order.splice(s.order.begin(), s.order, it->second);
      return;
    }
    if (s.index.size() >= per_shard_) {
      s.index.erase(s.order.back().key);
      s.order.pop_back();
    }
    s.order.push_front(Entry{key, std::move(value), expires});
    s.index.emplace(key, s.order.begin());
  }

  void Erase(const Key& key) {
    Shard& s = ShardOf(key);
    std::lock_guard lock(s.mu);
    auto it = s.index.find(key);
    if (it == s.index.end()) return;
    s.order.erase(it->second);
    s.index.erase(it);
  }

  // Drops every entry for which pred(key, value) is true (a full scan; for rare events).
  template <class Pred>
  void EraseIf(Pred pred) {
    for (Shard& s : shards_) {
      std::lock_guard lock(s.mu);
      for (auto it = s.order.begin(); it != s.order.end();) {
        if (pred(it->key, it->value)) {
          s.index.erase(it->key);
          it = s.order.erase(it);
        } else {
          ++it;
        }
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

 private:
  struct Entry {
    Key key;
    Value value;
    Clock::time_point expires;
  };
  struct Shard {
    std::mutex mu;
    std::list<Entry> order;  // most recently used first
    std::unordered_map<Key, typename std::list<Entry>::iterator> index;
  };

  Shard& ShardOf(const Key& key) { return shards_[std::hash<Key>{}(key) % kShards]; }

  const size_t per_shard_;
  const std::chrono::milliseconds ttl_;
  const NowFn now_;
  std::array<Shard, kShards> shards_;
};

}  // namespace rendezvous::core
