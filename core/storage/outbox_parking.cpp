#include "storage/outbox_parking.hpp"

#include <stdexcept>

#include "storage/outbox_internal.hpp"

namespace rendezvous::core {

using outbox_internal::Backoff;
using outbox_internal::BringForward;

OutboxParking::OutboxParking(Database& db, Logger& logger, int max_attempts,
                             std::chrono::milliseconds first_retry_delay,
                             std::chrono::milliseconds max_retry_delay)
    : db_(db),
      logger_(logger),
      max_attempts_(max_attempts),
      first_retry_delay_(first_retry_delay),
      max_retry_delay_(max_retry_delay) {}

bool OutboxParking::RecordFailure(DbConnection& tx, const std::string& consumer, const OutboxEvent& event,
                                  const std::string& error,
                                  std::atomic<std::chrono::steady_clock::rep>& retries_due_at) {
  std::optional<DbRow> row =
      tx.QueryOne("SELECT attempts FROM outbox_retries WHERE consumer = ? AND event_id = ? FOR UPDATE",
                  {consumer, event.id});
  const int attempts = static_cast<int>(row ? row->Int(1) : 0) + 1;
  if (attempts >= max_attempts_) {
    tx.Exec("DELETE FROM outbox_retries WHERE consumer = ? AND event_id = ?", {consumer, event.id});
    tx.Exec(
        "INSERT INTO outbox_parked (consumer, event_id, topic, type, attempts, last_error, parked_at)"
        " VALUES (?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3)) ON DUPLICATE KEY UPDATE attempts = VALUES(attempts),"
        " last_error = VALUES(last_error), parked_at = VALUES(parked_at)",
        {consumer, event.id, event.topic, event.type, static_cast<int64_t>(attempts), error});
    logger_.Error("outbox event parked: the consumer failed it max_attempts times", {{"consumer", consumer},
                                                                                     {"event_id", event.id},
                                                                                     {"type", event.type},
                                                                                     {"attempts", attempts},
                                                                                     {"error", error}});
    return true;
  }
  const auto delay = Backoff(attempts, first_retry_delay_, max_retry_delay_);
  BringForward(retries_due_at, (std::chrono::steady_clock::now() + delay).time_since_epoch().count());
  tx.Exec(
      "INSERT INTO outbox_retries (consumer, event_id, attempts, last_error, next_attempt_at)"
      " VALUES (?, ?, ?, ?, UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND) ON DUPLICATE KEY UPDATE"
      " attempts = VALUES(attempts), last_error = VALUES(last_error), next_attempt_at = "
      "VALUES(next_attempt_at)",
      {consumer, event.id, static_cast<int64_t>(attempts), error,
       static_cast<int64_t>(std::chrono::duration_cast<std::chrono::microseconds>(delay).count())});
  logger_.Warn("outbox event failed; retried on its own later", {{"consumer", consumer},
                                                                 {"event_id", event.id},
                                                                 {"attempts", attempts},
                                                                 {"retry_in_ms", delay.count()},
                                                                 {"error", error}});
  return false;
}

int64_t OutboxParking::CountParked(const std::string& consumer) {
  std::optional<DbRow> row = db_.Run([&](DbConnection& conn) {
    return conn.QueryOne("SELECT COUNT(*) FROM outbox_parked WHERE consumer = ?", {consumer});
  });
  return row ? row->Int(1) : 0;
}

std::vector<ParkedEvent> OutboxParking::List(const std::string& consumer, size_t limit) {
  const std::string sql =
      "SELECT id, event_id, consumer, topic, type, attempts, COALESCE(last_error, ''),"
      " DATE_FORMAT(parked_at, '%Y-%m-%dT%H:%i:%s.%fZ') FROM outbox_parked" +
      std::string(consumer.empty() ? "" : " WHERE consumer = ?") + " ORDER BY id LIMIT ?";
  std::vector<DbValue> params;
  if (!consumer.empty()) params.emplace_back(consumer);
  params.emplace_back(static_cast<int64_t>(limit));
  std::vector<ParkedEvent> out;
  db_.Run([&](DbConnection& conn) {
    for (const DbRow& row : conn.Query(sql, params)) {
      ParkedEvent p;
      p.id = row.Int(1);
      p.event_id = row.Int(2);
      p.consumer = row.String(3);
      p.topic = row.String(4);
      p.type = row.String(5);
      p.attempts = static_cast<int>(row.Int(6));
      p.last_error = row.String(7);
      p.parked_at = row.String(8);
      // %f gives microseconds; the API's timestamps carry milliseconds.
      if (p.parked_at.size() == 27) p.parked_at.erase(23, 3);
      out.push_back(std::move(p));
    }
  });
  return out;
}

std::optional<std::string> OutboxParking::Replay(int64_t parked_id) {
  bool found = false;
  std::string consumer;
  db_.RunTransaction([&](DbConnection& tx) {
    found = false;
    std::optional<DbRow> row =
        tx.QueryOne("SELECT consumer, event_id FROM outbox_parked WHERE id = ? FOR UPDATE", {parked_id});
    if (!row) return;
    found = true;
    consumer = row->String(1);
    const int64_t event_id = row->Int(2);
    if (!tx.QueryOne("SELECT 1 FROM outbox_events WHERE id = ?", {event_id})) {
      throw std::runtime_error("parked event " + std::to_string(parked_id) + " (outbox event " +
                               std::to_string(event_id) + ") is no longer stored; it can only be dropped");
    }
    tx.Exec(
        "INSERT INTO outbox_retries (consumer, event_id, attempts, last_error, next_attempt_at)"
        " VALUES (?, ?, 0, NULL, UTC_TIMESTAMP(3)) ON DUPLICATE KEY UPDATE attempts = 0, last_error = NULL,"
        " next_attempt_at = UTC_TIMESTAMP(3)",
        {consumer, event_id});
    tx.Exec("DELETE FROM outbox_parked WHERE id = ?", {parked_id});
  });
  if (!found) return std::nullopt;
  logger_.Info("outbox event replayed", {{"consumer", consumer}, {"parked_id", parked_id}});
  return consumer;
}

bool OutboxParking::Drop(int64_t parked_id) {
  std::optional<DbRow> row;
  uint64_t n = 0;
  db_.RunTransaction([&](DbConnection& tx) {
    row = tx.QueryOne("SELECT consumer, event_id FROM outbox_parked WHERE id = ? FOR UPDATE", {parked_id});
    n = row ? tx.Exec("DELETE FROM outbox_parked WHERE id = ?", {parked_id}) : 0;
  });
  if (n == 0) return false;
  logger_.Info("outbox parked event dropped",
               {{"consumer", row->String(1)}, {"parked_id", parked_id}, {"event_id", row->Int(2)}});
  return true;
}

}  // namespace rendezvous::core
