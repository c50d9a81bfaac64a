// The outbox's claim round (outbox_service.hpp): a consumer's next batch claimed, handed out and
// committed, one by one when it fails, then its due retries; and the parsed payloads kept for the
// topic's other consumers.
#include <functional>
#include <optional>
#include <string_view>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>

#include "rendezvous/time.hpp"
#include "storage/outbox_internal.hpp"
#include "storage/outbox_retention.hpp"
#include "storage/outbox_service.hpp"

namespace rendezvous::core {

using outbox_internal::CallHandler;
using outbox_internal::kClaimAttempts;
using outbox_internal::kEventColumns;
using outbox_internal::kEventColumnsNoPayload;
using outbox_internal::kHoleScanLimit;
using outbox_internal::kLagMeasureInterval;
using outbox_internal::kMaxSharedPayloadBytes;
using outbox_internal::kMaxSharedPayloads;
using outbox_internal::kParkedCountInterval;
using outbox_internal::kRetryCheckInterval;
using outbox_internal::Placeholders;

OutboxEvent OutboxService::EventFromRow(const DbRow& row, int first, const Consumer* reader, bool texts) {
  OutboxEvent e;
  e.id = row.Int(first);
  e.topic = row.String(first + 1);
  e.type = row.String(first + 2);
  e.created_at = std::chrono::system_clock::time_point(
      std::chrono::milliseconds(time::ParseSql(row.String(first + 4)).value_or(0)));
  std::string text = row.String(first + 3);
  if (texts) {
    e.payload_text = std::move(text);
    return e;
  }
  bool well_formed = false;
  std::optional<size_t> hash;
  if (reader != nullptr) {
    std::lock_guard<std::mutex> lk(shared_mu_);
    auto it = shared_.find(e.id);
    if (it != shared_.end()) {
      hash = std::hash<std::string_view>{}(text);
      if (it->second.text_hash == *hash && it->second.text_size == text.size()) {
        e.payload = it->second.payload;
        well_formed = it->second.well_formed;
        if (--it->second.takers_left == 0) ForgetShared(it);
      }
    }
  }
  if (!e.payload) {
    nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
    well_formed = !parsed.is_discarded();
    if (!well_formed) parsed = text;
    e.payload = std::make_shared<const nlohmann::json>(std::move(parsed));
    if (reader != nullptr) {
      KeepShared(e, *reader, hash ? *hash : std::hash<std::string_view>{}(text), text.size(), well_formed);
    }
  }
  if (well_formed) e.payload_text = std::move(text);
  return e;
}

void OutboxService::KeepShared(const OutboxEvent& e, const Consumer& reader, size_t text_hash,
                               size_t text_size, bool well_formed) {
  if (text_size > kMaxSharedPayloadBytes / 8) return;
  std::lock_guard<std::mutex> lk(shared_mu_);
  auto consumers = topic_consumers_.find(e.topic);
  if (consumers == topic_consumers_.end()) return;
  // Kept for the topic's other consumers that are behind it, but near enough to read it before
  // it would be dropped (a backlog that one consumer drains faster than another is not kept).
  size_t takers = 0;
  for (const Consumer* other : consumers->second) {
    const int64_t at = other->position.load();
    if (other != &reader && !other->texts && at < e.id &&
        e.id - at <= static_cast<int64_t>(kMaxSharedPayloads))
      ++takers;
  }
  auto it = shared_.find(e.id);
  if (it != shared_.end()) {
    // Parsed by two consumers at once: this one counts as taking the kept copy.
    if (it->second.text_hash == text_hash && it->second.text_size == text_size) {
      if (--it->second.takers_left == 0) ForgetShared(it);
      return;
    }
    ForgetShared(it);  // an id used again (a new database): the old text is gone
  }
  if (takers == 0) return;
  while (!shared_.empty() &&
         (shared_.size() >= kMaxSharedPayloads || shared_bytes_ + text_size > kMaxSharedPayloadBytes)) {
    ForgetShared(shared_.begin());
  }
  shared_.emplace(e.id, SharedPayload{text_hash, text_size, well_formed, e.payload, takers});
  shared_bytes_ += text_size;
}

void OutboxService::ForgetShared(std::map<int64_t, SharedPayload>::iterator it) {
  shared_bytes_ -= it->second.text_size;
  shared_.erase(it);
}

OutboxService::Round OutboxService::RunRound(Consumer& c) {
  if (!c.row_created.load()) {
    db_.Run([&](DbConnection& conn) {
      conn.Exec(
          "INSERT IGNORE INTO outbox_consumers (consumer, position, updated_at)"
          " VALUES (?, 0, UTC_TIMESTAMP(3))",
          {c.name});
    });
    c.row_created = true;
  }

  const std::string in = Placeholders(c.topics.size());
  const std::string batch_sql = std::string("SELECT ") +
                                (c.no_payloads ? kEventColumnsNoPayload : kEventColumns) +
                                ", created_at <= UTC_TIMESTAMP(3) - INTERVAL ? MICROSECOND"
                                " FROM outbox_events WHERE id > ? AND topic IN (" +
                                in +
                                ")"
                                " ORDER BY id LIMIT ? LOCK IN SHARE MODE";

  Round round;
  bool row_missing_or_locked = false;
  int64_t lag = -1;
  int64_t lag_position = -1;
  int64_t start_position = 0;
  std::vector<OutboxEvent> batch;
  std::string error;
  bool batch_failed = false;
  // The batch is read before the consumer's row is claimed, from the position this instance last
  // saw; read again when the claim finds it moved (the header's steps 1 and 2 say why).
  bool position_moved = false;
  try {
    for (int attempt = 0; attempt == 0 || (position_moved && attempt < kClaimAttempts); ++attempt) {
      db_.RunTransaction([&](DbConnection& tx) {
        round = Round{};
        row_missing_or_locked = false;
        position_moved = false;
        lag = -1;
        lag_position = -1;
        batch.clear();

        struct Candidate {
          OutboxEvent event;
          bool settled = false;
        };
        std::vector<Candidate> candidates;
        const int64_t expected_position = c.position.load();
        {
          std::vector<DbValue> params{
              std::chrono::duration_cast<std::chrono::microseconds>(options_.settle_window).count(),
              expected_position};
          params.insert(params.end(), c.topics.begin(), c.topics.end());
          params.emplace_back(options_.batch_size);
          for (const DbRow& row : tx.Query(batch_sql, params)) {
            Candidate cand;
            cand.event = EventFromRow(row, 1, &c, c.texts);
            cand.settled = row.Int(6) != 0;
            candidates.push_back(std::move(cand));
          }
        }

        std::optional<DbRow> claim = tx.QueryOne(
            "SELECT position FROM outbox_consumers WHERE consumer = ? FOR UPDATE SKIP LOCKED", {c.name});
        if (!claim) {
          row_missing_or_locked = true;
          return;
        }
        int64_t position = claim->Int(1);
        start_position = position;
        c.position = position;
        if (position != expected_position) {
          position_moved = true;
          return;
        }

        if (!candidates.empty()) {
          // The first id missing after `position` (any topic): events at or past it must settle.
          // Nothing is missing when the candidates follow `position` without a gap, and nothing
          // waits when every candidate has settled: then the ids need no scan.
          int64_t first_hole = std::numeric_limits<int64_t>::max();
          // An event of these topics the scan finds but the candidates' read did not: it became
          // visible in between (its insert raced that read). Nothing at or past it is taken this
          // round, settled or not; the next round reads it.
          int64_t first_unseen = std::numeric_limits<int64_t>::max();
          const int64_t last = candidates.back().event.id;
          const bool gapless = last - position == static_cast<int64_t>(candidates.size());
          const bool all_settled = std::all_of(candidates.begin(), candidates.end(),
                                               [](const Candidate& cand) { return cand.settled; });
          if (!gapless && !all_settled) {
            const std::vector<DbRow> ids =
                tx.Query("SELECT id, topic FROM outbox_events WHERE id > ? AND id <= ? ORDER BY id LIMIT ?",
                         {position, last, kHoleScanLimit});
            int64_t expected = position + 1;
            size_t next_candidate = 0;
            for (const DbRow& row : ids) {
              const int64_t id = row.Int(1);
              if (id != expected) {
                first_hole = expected;
                break;
              }
              expected = id + 1;
              while (next_candidate < candidates.size() && candidates[next_candidate].event.id < id)
                ++next_candidate;
              const bool candidate =
                  next_candidate < candidates.size() && candidates[next_candidate].event.id == id;
              if (!candidate && std::binary_search(c.topics.begin(), c.topics.end(), row.String(2))) {
                first_unseen = id;
                break;
              }
            }
            if (first_hole == std::numeric_limits<int64_t>::max() &&
                first_unseen == std::numeric_limits<int64_t>::max() && expected <= last) {
              first_hole = expected;  // scan limit reached: unknown beyond, treat as a hole
            }
          }

          for (auto& cand : candidates) {
            if (cand.event.id >= first_unseen || (cand.event.id >= first_hole && !cand.settled)) break;
            batch.push_back(std::move(cand.event));
          }
          round.held_back = batch.size() < candidates.size();

          if (!batch.empty()) {
            CallHandler(c.handler, tx, batch, round.handler_failed, error);
            tx.Exec(
                "UPDATE outbox_consumers SET position = ?, updated_at = UTC_TIMESTAMP(3) WHERE consumer = ?",
                {batch.back().id, c.name});
            position = batch.back().id;
            c.position = position;
            round.handed = batch.size();
          }
        }

        // The backlog is measured after the commit, at most once a second (MeasureLag): counting
        // it here, after every full batch, would make a drain quadratic in its length.
        if (!round.held_back && candidates.size() < static_cast<size_t>(options_.batch_size)) lag = 0;
        lag_position = position;
      });
    }
  } catch (...) {
    if (!round.handler_failed) throw;  // the outbox's own queries: the round fails
    batch_failed = true;
  }
  if (batch_failed) {
    c.handler_errors->Increment();
    logger_.Warn("outbox handler failed; batch rolled back, handling its events one by one",
                 {{"consumer", c.name}, {"events", batch.size()}, {"error", error}});
    const bool held_back = round.held_back;
    round = Round{};
    round.handler_failed = true;
    round.held_back = held_back;
    HandleOneByOne(c, start_position, batch, round);
  }
  if (round.handed > 0) Committed(c);
  if (row_missing_or_locked) c.row_created = false;  // recreate it next round if it was deleted
  const size_t handed_before_retries = round.handed;
  RetryDue(c, round);
  if (round.handed > handed_before_retries) Committed(c);
  if (round.handed > 0) c.consumed->Increment(static_cast<double>(round.handed));
  if (!batch_failed) {
    if (lag >= 0) {
      c.lag->Set(static_cast<double>(lag));
    } else if (lag_position >= 0) {
      MeasureLag(c, lag_position);
    }
  }
  CountParked(c, round.parked > 0);
  return round;
}

void OutboxService::Committed(Consumer& c) {
  if (!c.committed) return;
  try {
    c.committed();
  } catch (const std::exception& e) {
    logger_.Warn("outbox consumer's after-commit callback failed",
                 {{"consumer", c.name}, {"error", e.what()}});
  }
}

void OutboxService::HandleOneByOne(Consumer& c, int64_t position, const std::vector<OutboxEvent>& batch,
                                   Round& round) {
  for (const OutboxEvent& event : batch) {
    const std::vector<OutboxEvent> one{event};
    bool stop = false;
    bool failed = false;
    std::string error;
    bool threw = false;
    try {
      db_.RunTransaction([&](DbConnection& tx) {
        stop = failed = false;
        // Claimed again for each event: another instance may have taken the consumer meanwhile.
        std::optional<DbRow> claim = tx.QueryOne(
            "SELECT position FROM outbox_consumers WHERE consumer = ? FOR UPDATE SKIP LOCKED", {c.name});
        if (!claim || claim->Int(1) != position) {
          stop = true;
          return;
        }
        CallHandler(c.handler, tx, one, failed, error);
        tx.Exec("UPDATE outbox_consumers SET position = ?, updated_at = UTC_TIMESTAMP(3) WHERE consumer = ?",
                {event.id, c.name});
      });
    } catch (...) {
      if (!failed) throw;
      threw = true;
    }
    if (stop) return;
    if (!threw) {
      ++round.handed;
      position = event.id;
      continue;
    }
    c.handler_errors->Increment();
    bool parked = false;
    db_.RunTransaction([&](DbConnection& tx) {
      stop = parked = false;
      std::optional<DbRow> claim = tx.QueryOne(
          "SELECT position FROM outbox_consumers WHERE consumer = ? FOR UPDATE SKIP LOCKED", {c.name});
      if (!claim || claim->Int(1) != position) {
        stop = true;
        return;
      }
      parked = parking_.RecordFailure(tx, c.name, event, error, c.retries_due_at);
      tx.Exec("UPDATE outbox_consumers SET position = ?, updated_at = UTC_TIMESTAMP(3) WHERE consumer = ?",
              {event.id, c.name});
    });
    if (stop) return;
    position = event.id;
    if (parked) {
      ++round.parked;
      c.parked_total->Increment();
    }
  }
}

void OutboxService::RetryDue(Consumer& c, Round& round) {
  // The retries are looked for only when one may be due: most rounds have none, and looking costs
  // a transaction. Retries this instance records or replays bring the time forward; those of other
  // instances (or of `admin outbox parked replay`) are found within the interval.
  const auto now = std::chrono::steady_clock::now();
  if (now.time_since_epoch().count() < c.retries_due_at.load()) return;
  const auto interval = std::min<std::chrono::steady_clock::duration>(
      {kRetryCheckInterval, options_.poll_interval, options_.first_retry_delay});
  c.retries_due_at = (now + interval).time_since_epoch().count();
  const std::string due_sql =
      "SELECT event_id FROM outbox_retries WHERE consumer = ? AND next_attempt_at <= UTC_TIMESTAMP(3)"
      " ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED";
  const std::string event_sql = std::string("SELECT ") +
                                (c.no_payloads ? kEventColumnsNoPayload : kEventColumns) +
                                " FROM outbox_events WHERE id = ?";
  for (int i = 0; i < options_.batch_size; ++i) {
    bool none = false;
    bool failed = false;
    std::string error;
    OutboxEvent event;
    bool threw = false;
    try {
      db_.RunTransaction([&](DbConnection& tx) {
        none = failed = false;
        std::optional<DbRow> due = tx.QueryOne(due_sql, {c.name});
        if (!due) {
          none = true;
          return;
        }
        const int64_t event_id = due->Int(1);
        std::optional<DbRow> row = tx.QueryOne(event_sql, {event_id});
        if (row) {
          event = EventFromRow(*row, 1, nullptr, c.texts);  // a retry: the others took it long ago
          CallHandler(c.handler, tx, {event}, failed, error);
        } else {
          logger_.Warn("outbox retry of an event no longer stored; forgotten",
                       {{"consumer", c.name}, {"event_id", event_id}});
        }
        tx.Exec("DELETE FROM outbox_retries WHERE consumer = ? AND event_id = ?", {c.name, event_id});
      });
    } catch (...) {
      if (!failed) throw;
      threw = true;
    }
    if (none) return;
    if (!threw) {
      if (event.id != 0) ++round.handed;
      if (i + 1 == options_.batch_size) c.retries_due_at = 0;  // more may be due: look again next round
      continue;
    }
    c.handler_errors->Increment();
    bool parked = false;
    db_.RunTransaction([&](DbConnection& tx) {
      parked = false;
      // Locked by nobody else (SKIP LOCKED): another instance may have taken it meanwhile.
      std::optional<DbRow> row = tx.QueryOne(
          "SELECT attempts FROM outbox_retries WHERE consumer = ? AND event_id = ? FOR UPDATE SKIP LOCKED",
          {c.name, event.id});
      if (row) parked = parking_.RecordFailure(tx, c.name, event, error, c.retries_due_at);
    });
    if (parked) {
      ++round.parked;
      c.parked_total->Increment();
    }
  }
}

void OutboxService::CountParked(Consumer& c, bool now) {
  const auto t = std::chrono::steady_clock::now().time_since_epoch().count();
  const auto interval =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(kParkedCountInterval).count();
  if (!now && t - c.parked_counted_at.load() < interval) return;
  c.parked_counted_at = t;
  c.parked_now->Set(static_cast<double>(parking_.CountParked(c.name)));
}

void OutboxService::MeasureLag(Consumer& c, int64_t position) {
  const auto t = std::chrono::steady_clock::now().time_since_epoch().count();
  const auto interval =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(kLagMeasureInterval).count();
  if (t - c.lag_measured_at.load() < interval) return;
  c.lag_measured_at = t;
  c.lag->Set(static_cast<double>(CountOutboxLag(db_, c.topics, position)));
}

}  // namespace rendezvous::core
