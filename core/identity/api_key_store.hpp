// API keys: creation (the plaintext is returned once and never stored or logged; the table holds
// its SHA-256 and the last four characters as a hint), revocation, and resolution of a bearer
// token to a Principal.
//
// Resolution checks the token's form first (the configured prefix followed by exactly 43
// base64url characters) and answers nullopt for anything else without touching the database.
// Well-formed tokens are looked up by hash through a bounded in-process cache (10k entries by
// default, least recently used evicted) whose entries, positive and negative, live for
// `cache_ttl`. Revoking a key evicts it from this process's cache at once; ANOTHER INSTANCE (or
// process) may keep honouring a revoked key for at most `cache_ttl` (default 5 s). A ttl of 0
// turns the cache off. last_used_at is written at most once a minute per key.
//
// Thread-safe. Database calls may throw DatabaseUnavailable. The Database and the Registry must
// outlive the store.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "rendezvous/bounded_cache.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/http.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::core {

class ApiKeyStore {
 public:
  using NowFn = BoundedCache<std::string, int>::NowFn;

  ApiKeyStore(Database& db, prometheus::Registry& registry, std::string prefix,
              std::chrono::seconds cache_ttl, size_t cache_capacity = 10000,
              NowFn now = &std::chrono::steady_clock::now);

  struct CreatedKey {
    int64_t id = 0;
    std::string key;  // "<prefix><43 base64url chars>", shown to the user once
  };
  // kInvalid for a name over 100 characters, kNotFound for an unknown user.
  Result<CreatedKey> Create(int64_t user_id, const std::string& name);
  // kNotFound when the key does not exist or belongs to another user. Revoking twice is ok.
  Status Revoke(int64_t user_id, int64_t key_id);
  // The hashes of every key of the user, and their eviction from this process's cache: a user
  // about to be deleted takes its keys with it (read them first, evict them once it is gone).
  std::vector<std::string> KeyHashes(int64_t user_id);
  void Evict(const std::vector<std::string>& hashes);
  // kind kApiKey, all_scopes = true; nullopt for malformed, unknown or revoked keys.
  std::optional<Principal> Resolve(std::string_view token);

  // The form check of Resolve, without any look-up.
  bool WellFormed(std::string_view token) const;

 private:
  struct Cached {
    bool valid = false;
    int64_t id = 0;
    int64_t user_id = 0;
  };

  Database& db_;
  const std::string prefix_;
  BoundedCache<std::string, Cached> cache_;
  prometheus::Counter& cache_hits_;
  prometheus::Counter& cache_misses_;
};

}  // namespace rendezvous::core
