// The transactional outbox (DESIGN §6) over the tables of owner "outbox":
//   outbox_events(id, topic, type, payload JSON text, created_at UTC)
//   outbox_consumers(consumer, position, updated_at)
//
// Publishing writes one row with the caller's transaction, so an event exists exactly when the
// change that caused it committed.
//
// Consuming: a round for consumer C runs in ONE transaction on one connection:
//   1. read the next batch (id > the position this instance last saw, topic in C's topics, by id,
//      at most batch_size) with a locking read (LOCK IN SHARE MODE);
//   2. SELECT position FROM outbox_consumers WHERE consumer = C FOR UPDATE SKIP LOCKED; when
//      another instance holds the row, the round is skipped (instances share a consumer by
//      taking turns, batch by batch — never the same batch twice); when the position is not the
//      one read from, the transaction ends and the batch is read again from it (at most 3 reads).
//      The consumer's row is claimed after the read so that no transaction holds it while waiting
//      for another's lock: on Galera an applier updating the row for another node would wait too;
//   3. keep only the part that is safe to hand out (below), call the handler with it and the same
//      connection, advance position to the last handed-out id, COMMIT.
//   The handler throwing rolls everything back (its writes too), and the batch is handed out again
//   event by event, each in a transaction of its own that claims the consumer again (below).
//   Delivery is therefore exactly once per consumer as far as the handler's database writes go,
//   and at least once for anything it does outside the database.
//
// Isolation. One event the handler cannot take (a rendering that fails, a row the database
// refuses) must not hold up the events after it, whoever they belong to:
//   - when a batch fails, each of its events is handled alone; one that fails is recorded in
//     outbox_retries(consumer, event_id, attempts, last_error, next_attempt_at) and the position
//     moves past it in the same transaction, so the events after it go on at once;
//   - each round then takes up to batch_size due retries (FOR UPDATE SKIP LOCKED on the retry
//     row, so instances share them too), each alone in its transaction; a success deletes the
//     row, a failure counts one more attempt and waits longer (0.5 s doubling, at most 30 s);
//   - at `max_attempts` failed attempts (counted in the table: across restarts and instances)
//     the event is parked: moved to outbox_parked(id, consumer, event_id, topic, type, attempts,
//     last_error, parked_at), counted, and kept until an operator replays it (back to
//     outbox_retries with no attempts, due at once) or drops it (ListParked, Replay, Drop).
//   A handler that loses the database connection (DatabaseUnavailable) counts no attempt: the
//   round fails and the loop backs off, as for the outbox's own queries.
//
// Ids that commit out of order. AUTO_INCREMENT ids are taken when a row is inserted, not when its
// transaction commits: event 10 may still be uncommitted while 11 is committed, and a consumer
// that moved its position to 11 would never see 10. Two guards:
//   a. The locking read of step 2 waits for rows inserted by transactions still open (an
//      uncommitted insert holds a lock on its row), so any event of C's topics already in the
//      table below the batch's last id is seen committed or rolled back before the batch is used.
//   b. That leaves the instant between an id being taken and its row entering the index. So the
//      ids between position and the batch's last id are checked for holes (over all topics): the
//      batch is handed out up to the first hole at once; events past a hole only once they are
//      older than `settle_window` (created_at, by the database clock). A hole that old is a
//      rolled-back insert, or an insert that has been stuck longer than the window.
//   Holes are normal after rollbacks and deadlock retries (those delay the events behind them by
//   up to settle_window) and constant with auto_increment_increment > 1 (Galera): there every
//   event waits settle_window.
//
// Retention (PurgeOnce, every `purge_interval` from the loop): events older than `retention` (or
// than a longer KeepEvents of their topic) are deleted in batches of 1,000 when every consumer
// subscribed here to their topic has passed them; events of topics nobody here subscribes to are
// deleted once older than `retention` (or their KeepEvents). An event a
// consumer retries or has parked is never deleted (the parked row names it: replay needs it). Consumers
// present in the table but not subscribed in this process are ignored (a disabled plugin must not
// keep events forever).
//
// Metrics: outbox_published_total{topic} (events written; a rolled-back transaction still
// counts), outbox_consumed_total{consumer}, outbox_consumer_lag{consumer} (events of the
// consumer's topics past its position: 0 after a round that found no more, else counted after
// the round's commit at most once a second, capped at 100,000),
// outbox_handler_errors_total{consumer} (batches and single events whose handler threw),
// outbox_events_parked_total{consumer} (events parked), outbox_parked_events{consumer} (events
// parked now, by any instance: counted after a round that parked, else at most once a second).
//
// Thread-safety: Publish, Notify, PollOnce, ListParked, Replay and Drop may be called from any
// thread. Subscribe before
// Start (a later Subscribe starts its loop at once). Start/Stop from one controlling thread. The
// object must outlive its loops: Stop() (or the destructor) joins them.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"
#include "rendezvous/outbox.hpp"
#include "storage/outbox_parking.hpp"

namespace prometheus {
class Registry;
class Counter;
class Gauge;
template <typename T>
class Family;
}  // namespace prometheus

namespace rendezvous::core {

struct OutboxOptions {
  std::chrono::milliseconds poll_interval{500};
  int batch_size = 100;
  std::chrono::hours retention{24 * 7};
  // Events behind an id hole are handed out only once older than this (see above).
  std::chrono::milliseconds settle_window{2000};
  std::chrono::seconds purge_interval{60};
  // A consumer's failed attempts at one event before it is parked (config outbox.max_attempts).
  int max_attempts = 8;
  // The wait before retrying a failed event: first_retry_delay, doubling, at most max_retry_delay.
  std::chrono::milliseconds first_retry_delay{500};
  std::chrono::milliseconds max_retry_delay{30000};
};

class OutboxService final : public Outbox {
 public:
  // `db`, `registry` and `logger` must outlive the service. Creates no thread.
  OutboxService(Database& db, prometheus::Registry& registry, Logger& logger, OutboxOptions options = {});
  ~OutboxService() override;
  OutboxService(const OutboxService&) = delete;
  OutboxService& operator=(const OutboxService&) = delete;

  // The tables, owner "outbox".
  static std::vector<Migration> Migrations();

  // Topic and type: 1 to 64 characters (std::invalid_argument otherwise). Invalid UTF-8 in the
  // payload's strings is replaced. SQL errors propagate (they fail the caller's transaction).
  int64_t Publish(DbConnection& tx, const std::string& topic, const std::string& type,
                  const nlohmann::json& payload) override;
  // consumer: 1 to 128 characters, unique; topics: 1 to 64 non-empty names of 1 to 64
  // characters. Throws std::invalid_argument otherwise.
  void Subscribe(const std::string& consumer, const std::vector<std::string>& topics, OutboxHandler handler,
                 OutboxCommitted committed = {}, OutboxPayload payload = OutboxPayload::kParsed,
                 std::chrono::milliseconds gather = std::chrono::milliseconds{0}) override;
  void Notify() noexcept override;
  void KeepEvents(const std::string& topic, std::chrono::seconds at_least) override;

  // Starts one loop thread per consumer plus one for retention. Idempotent.
  void Start();
  // Stops and joins the loops. Returns once each loop's current round ends (rounds are bounded
  // by the database read timeout and the handler).
  void Stop();

  // Runs one claim-and-handle round for `consumer` now (the next batch, one by one when it fails,
  // then the due retries); returns the number of events handled and committed. Returns 0 when
  // another instance holds the consumer or nothing is ready. Handler failures are logged and
  // counted, never thrown. Throws DatabaseUnavailable (the handler's too) and SQL errors of its
  // own queries; std::invalid_argument for an unknown consumer.
  size_t PollOnce(const std::string& consumer);

  // One retention pass; returns the number of events deleted.
  size_t PurgeOnce();

  // Parked events, oldest first, of one consumer or ("") of all; at most `limit`.
  std::vector<ParkedEvent> ListParked(const std::string& consumer = "", size_t limit = 1000);
  // Hands a parked event back to its consumer: its attempts start again from zero and it is due
  // at once (the consumer's loop, on any instance, takes it up within a poll interval). False
  // when no parked event has that id. Throws std::runtime_error when the event itself is no longer
  // in the outbox (it cannot be handled again: drop it).
  bool Replay(int64_t parked_id);
  // Forgets a parked event for good. False when no parked event has that id.
  bool Drop(int64_t parked_id);

 private:
  struct Consumer {
    std::string name;
    std::vector<std::string> topics;
    OutboxHandler handler;
    OutboxCommitted committed;
    bool texts = false;                    // handed payload texts only (OutboxPayload::kText)
    bool no_payloads = false;              // handed no payload at all (OutboxPayload::kNone)
    std::chrono::milliseconds gather{0};   // the wait after a round that handed events
    std::atomic<bool> row_created{false};  // the outbox_consumers row is known to exist
    std::atomic<int64_t> position{0};      // as its last round here found it (shared payloads)
    int failures = 0;                      // consecutive failed rounds (loop thread only)
    bool woken = false;  // mu_: Notify() since its round began, after a publish of one of its topics
    prometheus::Counter* consumed = nullptr;
    prometheus::Counter* handler_errors = nullptr;
    prometheus::Gauge* lag = nullptr;
    prometheus::Counter* parked_total = nullptr;
    prometheus::Gauge* parked_now = nullptr;
    std::atomic<std::chrono::steady_clock::rep> parked_counted_at{0};  // steady_clock ticks
    std::atomic<std::chrono::steady_clock::rep> lag_measured_at{0};    // steady_clock ticks
    // No retry of this consumer is due before this (steady_clock ticks), as far as this instance
    // knows: its own failures and replays bring it forward, another instance's are seen within
    // kRetryCheckInterval.
    std::atomic<std::chrono::steady_clock::rep> retries_due_at{0};
    std::thread thread;
  };

  struct Round {
    size_t handed = 0;
    bool handler_failed = false;
    bool held_back = false;  // events exist that were not safe to hand out yet
    size_t parked = 0;
  };

  // A parsed payload kept for the topic's other consumers.
  struct SharedPayload {
    size_t text_hash = 0;  // of the text it was parsed from, with its size: an id used again misses
    size_t text_size = 0;
    bool well_formed = false;  // the text was JSON (else the payload is the text as a string)
    std::shared_ptr<const nlohmann::json> payload;
    size_t takers_left = 0;  // consumers here of its topic that have not taken it yet
  };

  Consumer* Find(const std::string& consumer);
  // The event of an outbox_events row (kEventColumns from `first`). With `share`, its payload is
  // taken from shared_ when another consumer parsed it, else parsed and kept there for them.
  // `reader` is the consumer reading it.
  // `reader`: the consumer reading it in a round (shares parsed payloads), else null; `texts`:
  // the text only, unparsed.
  OutboxEvent EventFromRow(const DbRow& row, int first, const Consumer* reader, bool texts);
  void KeepShared(const OutboxEvent& e, const Consumer& reader, size_t text_hash, size_t text_size,
                  bool well_formed);
  void ForgetShared(std::map<int64_t, SharedPayload>::iterator it);  // shared_mu_ held
  // Runs the consumer's `committed` callback, if any (after a commit that handed events); a throw
  // is logged (the events are committed).
  void Committed(Consumer& c);
  Round RunRound(Consumer& c);
  // The failed batch again, one event per transaction, from `position`.
  void HandleOneByOne(Consumer& c, int64_t position, const std::vector<OutboxEvent>& batch, Round& round);
  // Up to batch_size due retries of `c`, each in its own transaction.
  void RetryDue(Consumer& c, Round& round);
  void CountParked(Consumer& c, bool now);
  // Counts the events past `position` into the lag gauge, at most once a second.
  void MeasureLag(Consumer& c, int64_t position);
  void ConsumerLoop(Consumer* c);
  void PurgeLoop();
  void StartLoopLocked(Consumer* c);
  // Waits up to `d`, or until Stop(), or (when `woken` is given) until *woken is set. False when
  // stopping.
  bool WaitFor(std::chrono::milliseconds d, const bool* woken);

  Database& db_;
  Logger& logger_;
  const OutboxOptions options_;
  OutboxParking parking_;  // retries, parked events and their admin commands

  prometheus::Family<prometheus::Counter>& published_;
  prometheus::Family<prometheus::Counter>& consumed_;
  prometheus::Family<prometheus::Gauge>& lag_;
  prometheus::Family<prometheus::Counter>& handler_errors_;
  prometheus::Family<prometheus::Counter>& parked_total_;
  prometheus::Family<prometheus::Gauge>& parked_now_;

  std::mutex mu_;  // consumers_ (the map, not the rounds), each Consumer's woken, running_, stopping_
  std::condition_variable cv_;
  std::map<std::string, std::unique_ptr<Consumer>> consumers_;
  std::map<std::string, std::chrono::seconds> kept_;  // mu_: KeepEvents, by topic
  bool running_ = false;
  bool stopping_ = false;
  std::thread purge_thread_;

  std::mutex shared_mu_;                     // shared_, shared_bytes_, topic_consumers_
  std::map<int64_t, SharedPayload> shared_;  // by event id
  size_t shared_bytes_ = 0;                  // text bytes of shared_'s payloads
  std::map<std::string, std::vector<const Consumer*>> topic_consumers_;  // subscribed here, by topic
};

}  // namespace rendezvous::core
