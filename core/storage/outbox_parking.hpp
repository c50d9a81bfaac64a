// The outbox's failed events (DESIGN §6, outbox_service.hpp): a consumer's failed attempts at one
// event counted in outbox_retries, the event parked in outbox_parked at max_attempts, and the
// operator's commands over the parked ones (list, replay, drop).
//
// Thread-safety: every call may be made from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"
#include "rendezvous/outbox.hpp"

namespace rendezvous::core {

// An event a consumer parked, as `admin outbox parked` lists it.
struct ParkedEvent {
  int64_t id = 0;  // the parked row's own id (an event may be parked by several consumers)
  int64_t event_id = 0;
  std::string consumer;
  std::string topic;
  std::string type;
  int attempts = 0;
  std::string last_error;
  std::string parked_at;  // ISO 8601, UTC
};

class OutboxParking {
 public:
  // `db` and `logger` must outlive it. The wait before a retry: first_retry_delay, doubling, at
  // most max_retry_delay.
  OutboxParking(Database& db, Logger& logger, int max_attempts, std::chrono::milliseconds first_retry_delay,
                std::chrono::milliseconds max_retry_delay);

  // Counts one more failed attempt of `consumer` at `event` in `tx`; parks it at max_attempts.
  // True when parked; else the retry is due after its delay, and `retries_due_at` (steady_clock
  // ticks) is brought forward to it.
  bool RecordFailure(DbConnection& tx, const std::string& consumer, const OutboxEvent& event,
                     const std::string& error, std::atomic<std::chrono::steady_clock::rep>& retries_due_at);
  // The events parked for `consumer` now, by any instance.
  int64_t CountParked(const std::string& consumer);

  // Parked events, oldest first, of one consumer or ("") of all; at most `limit`.
  std::vector<ParkedEvent> List(const std::string& consumer, size_t limit);
  // Hands a parked event back to its consumer (attempts from zero, due at once). Returns that
  // consumer, nullopt when no parked event has that id. Throws std::runtime_error when the event
  // itself is no longer in the outbox.
  std::optional<std::string> Replay(int64_t parked_id);
  // Forgets a parked event for good. False when no parked event has that id.
  bool Drop(int64_t parked_id);

 private:
  Database& db_;
  Logger& logger_;
  const int max_attempts_;
  const std::chrono::milliseconds first_retry_delay_;
  const std::chrono::milliseconds max_retry_delay_;
};

}  // namespace rendezvous::core
