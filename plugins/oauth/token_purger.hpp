// Housekeeping of the token tables (tokens.hpp): deletes the rows that can no longer matter and
// counts the grants still in use, on demand or from a background thread. Thread-safe; the calls
// may throw DatabaseUnavailable (the thread logs them). The Database and Logger must outlive it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"
#include "tokens.hpp"

namespace rendezvous::oauth {

class TokenPurger {
 public:
  TokenPurger(Database& db, Logger& logger);
  ~TokenPurger();  // stops the thread
  TokenPurger(const TokenPurger&) = delete;
  TokenPurger& operator=(const TokenPurger&) = delete;

  // Deletes rows that can no longer matter, in autocommit DELETE ... LIMIT `batch` statements
  // (at most kMaxPurgeBatches per table per call): expired codes (used or not; a used code is
  // kept until it expires so a replay still revokes its grant), expired or revoked access
  // tokens, expired or revoked refresh tokens (rotated ones are kept until they expire, for
  // reuse detection), expired pushed authorization requests, revocation log rows older than ten minutes.
  // Grants are kept. Returns the number of rows deleted.
  uint64_t PurgeExpired(size_t batch = 1000);
  // Counts the active grants (one query over the live refresh tokens).
  ActiveGrants CountActiveGrants();

  // A background thread that calls PurgeExpired every `interval` (errors are logged, not fatal)
  // and, when `on_count` is given, hands it CountActiveGrants() once at the start and after
  // every purge (from that thread). Stop wakes and joins it promptly; both idempotent.
  void Start(std::chrono::milliseconds interval, std::function<void(const ActiveGrants&)> on_count = {});
  void Stop();

  static constexpr int kMaxPurgeBatches = 100;

 private:
  Database& db_;
  Logger& logger_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace rendezvous::oauth
