#include "storage/outbox_service.hpp"

#include <pthread.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "rendezvous/text.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::core {
namespace {

// The topics each thread published since its last Notify(), by outbox. A publish and its Notify()
// run on the caller's thread (its transaction, then the wake-up): a Notify() wakes the consumers
// of what its own thread published however many threads publish at once, and one after no
// publish of its thread wakes every consumer. At most the distinct topic names the code
// publishes, per thread.
thread_local std::vector<std::pair<const void*, std::string>> t_published;

void PublishedHere(const void* outbox, const std::string& topic) {
  const auto it = std::find_if(t_published.begin(), t_published.end(),
                               [&](const auto& p) { return p.first == outbox && p.second == topic; });
  if (it == t_published.end()) t_published.emplace_back(outbox, topic);
}

constexpr size_t kMaxTopicLength = 64;
constexpr size_t kMaxConsumerLength = 128;
constexpr size_t kMaxTopicsPerConsumer = 64;
constexpr int kMaxBatchSize = 10000;
constexpr int kHoleScanLimit = 20000;
// Reads of a batch a round may make when the consumer's position moved under it.
constexpr int kClaimAttempts = 3;
constexpr int kLagCap = 100000;
constexpr int kPurgeBatch = 1000;
constexpr int kMaxPurgeBatchesPerTopic = 100;
constexpr auto kMaxBackoff = std::chrono::seconds(30);
constexpr auto kFirstBackoff = std::chrono::milliseconds(500);
constexpr auto kFirstHeldBackWait = std::chrono::milliseconds(2);
// Parsed payloads kept for the other consumers of their topic: at most this many, of at most this
// much text in all (the parsed form takes a few times the text); the lowest ids go first.
constexpr size_t kMaxSharedPayloads = 1024;
constexpr size_t kMaxSharedPayloadBytes = 2 << 20;

std::string Placeholders(size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += i == 0 ? "?" : ", ?";
  return out;
}

void CheckName(const std::string& what, const std::string& value, size_t max) {
  if (value.empty() || value.size() > max) {
    throw std::invalid_argument("outbox " + what + " must have 1 to " + std::to_string(max) +
                                " characters");
  }
}

prometheus::Family<prometheus::Counter>& CounterFamily(prometheus::Registry& registry, const char* name,
                                                       const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

constexpr size_t kMaxErrorBytes = 512;
constexpr auto kParkedCountInterval = std::chrono::seconds(1);
// At least this often a consumer looks for retries recorded elsewhere (another instance, a replay).
constexpr auto kRetryCheckInterval = std::chrono::seconds(1);
constexpr auto kLagMeasureInterval = std::chrono::seconds(1);

// Moves `at` to `to` when that is sooner, whatever other threads move it to meanwhile.
void BringForward(std::atomic<std::chrono::steady_clock::rep>& at, std::chrono::steady_clock::rep to) {
  auto seen = at.load();
  while (to < seen && !at.compare_exchange_weak(seen, to)) {
  }
}

// A handler's message as the tables keep it: well-formed UTF-8, cut on a character boundary.
std::string ErrorText(std::string_view what) {
  return text::TruncateUtf8(text::SanitizeUtf8(what), kMaxErrorBytes);
}

// Runs the handler; a throw other than a lost connection is noted in `failed` and `error` (the
// transaction still rolls back: the exception goes on, and the caller tells it from its own).
void CallHandler(const OutboxHandler& handler, DbConnection& tx, const std::vector<OutboxEvent>& events,
                 bool& failed, std::string& error) {
  try {
    handler(tx, events);
  } catch (const DatabaseUnavailable&) {
    throw;
  } catch (const std::exception& e) {
    failed = true;
    error = ErrorText(e.what());
    throw;
  } catch (...) {
    failed = true;
    error = "the handler threw a value that is not an exception";
    throw;
  }
}

std::chrono::milliseconds Backoff(int failures, std::chrono::milliseconds first = kFirstBackoff,
                                  std::chrono::milliseconds max = kMaxBackoff) {
  auto d = first;
  for (int i = 1; i < failures && d < max; ++i) d *= 2;
  return std::min<std::chrono::milliseconds>(d, max);
}

// Events a consumer still retries or has parked stay until it is done with them.
constexpr const char* kStillNeeded =
    " AND NOT EXISTS (SELECT 1 FROM outbox_retries r WHERE r.event_id = outbox_events.id)"
    " AND NOT EXISTS (SELECT 1 FROM outbox_parked p WHERE p.event_id = outbox_events.id)";

// The time as its DATETIME(3) text, read here (the session's zone is UTC): MariaDB's
// UNIX_TIMESTAMP(…) * 1000 is decimal arithmetic on every row.
constexpr const char* kEventColumns = "id, topic, type, payload, created_at";
// For a consumer handed no payloads (OutboxPayload::kNone): the text is not read at all.
constexpr const char* kEventColumnsNoPayload = "id, topic, type, '' AS payload, created_at";

}  // namespace

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

OutboxService::OutboxService(Database& db, prometheus::Registry& registry, Logger& logger,
                             OutboxOptions options)
    : db_(db),
      logger_(logger),
      options_(options),
      published_(CounterFamily(registry, "outbox_published_total",
                               "Outbox events written (rolled-back transactions included)")),
      consumed_(CounterFamily(registry, "outbox_consumed_total",
                              "Outbox events handled and committed by a consumer")),
      lag_(prometheus::BuildGauge()
               .Name("outbox_consumer_lag")
               .Help("Outbox events of a consumer's topics past its position")
               .Register(registry)),
      handler_errors_(CounterFamily(registry, "outbox_handler_errors_total",
                                    "Outbox batches and single events whose handler threw (rolled back)")),
      parked_total_(CounterFamily(registry, "outbox_events_parked_total",
                                  "Outbox events a consumer failed max_attempts times and set aside")),
      parked_now_(prometheus::BuildGauge()
                      .Name("outbox_parked_events")
                      .Help("Outbox events parked for a consumer now (until replayed or dropped)")
                      .Register(registry)) {
  if (options_.batch_size < 1 || options_.batch_size > kMaxBatchSize) {
    throw std::invalid_argument("outbox batch_size must be between 1 and 10000");
  }
  if (options_.max_attempts < 1) throw std::invalid_argument("outbox max_attempts must be at least 1");
}

OutboxService::~OutboxService() { Stop(); }

std::vector<Migration> OutboxService::Migrations() {
  return {
      {1, "outbox tables",
       "CREATE TABLE IF NOT EXISTS outbox_events (\n"
       "  id BIGINT NOT NULL AUTO_INCREMENT,\n"
       "  topic VARCHAR(64) NOT NULL,\n"
       "  type VARCHAR(64) NOT NULL,\n"
       "  payload LONGTEXT NOT NULL,\n"
       "  created_at DATETIME(3) NOT NULL,\n"
       "  PRIMARY KEY (id),\n"
       "  KEY outbox_events_topic_id (topic, id),\n"
       "  KEY outbox_events_created_at (created_at)\n"
       ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;\n"
       "CREATE TABLE IF NOT EXISTS outbox_consumers (\n"
       "  consumer VARCHAR(128) NOT NULL,\n"
       "  position BIGINT NOT NULL DEFAULT 0,\n"
       "  updated_at DATETIME(3) NOT NULL,\n"
       "  PRIMARY KEY (consumer)\n"
       ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;\n"},
      {2, "outbox retries and parked events",
       "CREATE TABLE IF NOT EXISTS outbox_retries (\n"
       "  consumer VARCHAR(128) NOT NULL,\n"
       "  event_id BIGINT NOT NULL,\n"
       "  attempts INT NOT NULL,\n"
       "  last_error VARCHAR(512) NULL,\n"
       "  next_attempt_at DATETIME(3) NOT NULL,\n"
       "  PRIMARY KEY (consumer, event_id),\n"
       "  KEY outbox_retries_due (consumer, next_attempt_at),\n"
       "  KEY outbox_retries_event (event_id)\n"
       ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;\n"
       "CREATE TABLE IF NOT EXISTS outbox_parked (\n"
       "  id BIGINT NOT NULL AUTO_INCREMENT,\n"
       "  consumer VARCHAR(128) NOT NULL,\n"
       "  event_id BIGINT NOT NULL,\n"
       "  topic VARCHAR(64) NOT NULL,\n"
       "  type VARCHAR(64) NOT NULL,\n"
       "  attempts INT NOT NULL,\n"
       "  last_error VARCHAR(512) NULL,\n"
       "  parked_at DATETIME(3) NOT NULL,\n"
       "  PRIMARY KEY (id),\n"
       "  UNIQUE KEY outbox_parked_consumer_event (consumer, event_id),\n"
       "  KEY outbox_parked_event (event_id)\n"
       ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;\n"},
  };
}

int64_t OutboxService::Publish(DbConnection& tx, const std::string& topic, const std::string& type,
                               const nlohmann::json& payload) {
  CheckName("topic", topic, kMaxTopicLength);
  CheckName("type", type, kMaxTopicLength);
  PublishedHere(this, topic);
  const int64_t id = tx.InsertReturning(
      "INSERT INTO outbox_events (topic, type, payload, created_at)"
      " VALUES (?, ?, ?, UTC_TIMESTAMP(3))",
      {topic, type, payload.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
  published_.Add({{"topic", topic}}).Increment();
  return id;
}

void OutboxService::KeepEvents(const std::string& topic, std::chrono::seconds at_least) {
  CheckName("topic", topic, kMaxTopicLength);
  std::lock_guard<std::mutex> lk(mu_);
  std::chrono::seconds& keep = kept_[topic];
  keep = std::max(keep, at_least);
}

void OutboxService::Subscribe(const std::string& consumer, const std::vector<std::string>& topics,
                              OutboxHandler handler, OutboxCommitted committed, OutboxPayload payload,
                              std::chrono::milliseconds gather) {
  CheckName("consumer", consumer, kMaxConsumerLength);
  if (topics.empty() || topics.size() > kMaxTopicsPerConsumer) {
    throw std::invalid_argument("outbox consumer '" + consumer + "' needs 1 to 64 topics");
  }
  for (const auto& t : topics) CheckName("topic", t, kMaxTopicLength);
  if (!handler) throw std::invalid_argument("outbox consumer '" + consumer + "' has no handler");
  auto c = std::make_unique<Consumer>();
  c->name = consumer;
  std::set<std::string> unique(topics.begin(), topics.end());
  c->topics.assign(unique.begin(), unique.end());
  c->handler = std::move(handler);
  c->committed = std::move(committed);
  c->texts = payload == OutboxPayload::kText || payload == OutboxPayload::kNone;
  c->no_payloads = payload == OutboxPayload::kNone;
  c->gather = std::clamp(gather, std::chrono::milliseconds{0}, options_.poll_interval);
  c->consumed = &consumed_.Add({{"consumer", consumer}});
  c->handler_errors = &handler_errors_.Add({{"consumer", consumer}});
  c->lag = &lag_.Add({{"consumer", consumer}});
  c->parked_total = &parked_total_.Add({{"consumer", consumer}});
  c->parked_now = &parked_now_.Add({{"consumer", consumer}});
  // A consumed topic is exported at zero from start-up, before anything is published to it.
  for (const std::string& topic : c->topics) published_.Add({{"topic", topic}});
  std::lock_guard<std::mutex> lk(mu_);
  if (consumers_.count(consumer)) {
    throw std::invalid_argument("outbox consumer '" + consumer + "' subscribed twice");
  }
  Consumer* raw = c.get();
  {
    std::lock_guard<std::mutex> shared_lk(shared_mu_);
    for (const std::string& topic : raw->topics) topic_consumers_[topic].push_back(raw);
  }
  consumers_.emplace(consumer, std::move(c));
  if (running_ && !stopping_) StartLoopLocked(raw);
}

void OutboxService::Notify() noexcept {
  const auto mine = [this](const std::pair<const void*, std::string>& p) { return p.first == this; };
  const bool published = std::any_of(t_published.begin(), t_published.end(), mine);
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (const auto& entry : consumers_) {
      Consumer& c = *entry.second;
      c.woken =
          c.woken || !published || std::any_of(t_published.begin(), t_published.end(), [&](const auto& p) {
            return mine(p) && std::find(c.topics.begin(), c.topics.end(), p.second) != c.topics.end();
          });
    }
  }
  // Nothing allocates here: a Notify() cannot fail.
  t_published.erase(std::remove_if(t_published.begin(), t_published.end(), mine), t_published.end());
  cv_.notify_all();
}

OutboxService::Consumer* OutboxService::Find(const std::string& consumer) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = consumers_.find(consumer);
  return it == consumers_.end() ? nullptr : it->second.get();
}

size_t OutboxService::PollOnce(const std::string& consumer) {
  Consumer* c = Find(consumer);
  if (!c) throw std::invalid_argument("unknown outbox consumer '" + consumer + "'");
  return RunRound(*c).handed;
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
        std::optional<DbRow> claim =
            tx.QueryOne("SELECT position FROM outbox_consumers WHERE consumer = ? FOR UPDATE SKIP LOCKED", {c.name});
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
      std::optional<DbRow> claim =
          tx.QueryOne("SELECT position FROM outbox_consumers WHERE consumer = ? FOR UPDATE SKIP LOCKED", {c.name});
      if (!claim || claim->Int(1) != position) {
        stop = true;
        return;
      }
      parked = RecordFailure(tx, c, event, error);
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
      if (row) parked = RecordFailure(tx, c, event, error);
    });
    if (parked) {
      ++round.parked;
      c.parked_total->Increment();
    }
  }
}

bool OutboxService::RecordFailure(DbConnection& tx, Consumer& c, const OutboxEvent& event,
                                  const std::string& error) {
  std::optional<DbRow> row = tx.QueryOne(
      "SELECT attempts FROM outbox_retries WHERE consumer = ? AND event_id = ? FOR UPDATE", {c.name, event.id});
  const int attempts = static_cast<int>(row ? row->Int(1) : 0) + 1;
  if (attempts >= options_.max_attempts) {
    tx.Exec("DELETE FROM outbox_retries WHERE consumer = ? AND event_id = ?", {c.name, event.id});
    tx.Exec(
        "INSERT INTO outbox_parked (consumer, event_id, topic, type, attempts, last_error, parked_at)"
        " VALUES (?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3)) ON DUPLICATE KEY UPDATE attempts = VALUES(attempts),"
        " last_error = VALUES(last_error), parked_at = VALUES(parked_at)",
        {c.name, event.id, event.topic, event.type, static_cast<int64_t>(attempts), error});
    logger_.Error("outbox event parked: the consumer failed it max_attempts times",
                  {{"consumer", c.name}, {"event_id", event.id}, {"type", event.type},
                   {"attempts", attempts}, {"error", error}});
    return true;
  }
  const auto delay = Backoff(attempts, options_.first_retry_delay, options_.max_retry_delay);
  BringForward(c.retries_due_at, (std::chrono::steady_clock::now() + delay).time_since_epoch().count());
  tx.Exec(
      "INSERT INTO outbox_retries (consumer, event_id, attempts, last_error, next_attempt_at)"
      " VALUES (?, ?, ?, ?, UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND) ON DUPLICATE KEY UPDATE"
      " attempts = VALUES(attempts), last_error = VALUES(last_error), next_attempt_at = VALUES(next_attempt_at)",
      {c.name, event.id, static_cast<int64_t>(attempts), error,
       static_cast<int64_t>(std::chrono::duration_cast<std::chrono::microseconds>(delay).count())});
  logger_.Warn("outbox event failed; retried on its own later",
               {{"consumer", c.name}, {"event_id", event.id}, {"attempts", attempts},
                {"retry_in_ms", delay.count()}, {"error", error}});
  return false;
}

void OutboxService::CountParked(Consumer& c, bool now) {
  const auto t = std::chrono::steady_clock::now().time_since_epoch().count();
  const auto interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(kParkedCountInterval).count();
  if (!now && t - c.parked_counted_at.load() < interval) return;
  c.parked_counted_at = t;
  std::optional<DbRow> row = db_.Run([&](DbConnection& conn) {
    return conn.QueryOne("SELECT COUNT(*) FROM outbox_parked WHERE consumer = ?", {c.name});
  });
  c.parked_now->Set(row ? static_cast<double>(row->Int(1)) : 0.0);
}

void OutboxService::MeasureLag(Consumer& c, int64_t position) {
  const auto t = std::chrono::steady_clock::now().time_since_epoch().count();
  const auto interval =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(kLagMeasureInterval).count();
  if (t - c.lag_measured_at.load() < interval) return;
  c.lag_measured_at = t;
  // Outside the round's transaction: a covering walk of (topic, id), capped, once a second.
  const std::string sql = "SELECT COUNT(*) FROM (SELECT 1 FROM outbox_events WHERE id > ? AND topic IN (" +
                          Placeholders(c.topics.size()) + ") LIMIT " + std::to_string(kLagCap) + ") t";
  std::vector<DbValue> params{position};
  params.insert(params.end(), c.topics.begin(), c.topics.end());
  std::optional<DbRow> row = db_.Run([&](DbConnection& conn) { return conn.QueryOne(sql, params); });
  c.lag->Set(row ? static_cast<double>(row->Int(1)) : 0.0);
}

std::vector<ParkedEvent> OutboxService::ListParked(const std::string& consumer, size_t limit) {
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

bool OutboxService::Replay(int64_t parked_id) {
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
  if (found) {
    logger_.Info("outbox event replayed", {{"consumer", consumer}, {"parked_id", parked_id}});
    if (Consumer* c = Find(consumer)) BringForward(c->retries_due_at, 0);
    Notify();
  }
  return found;
}

bool OutboxService::Drop(int64_t parked_id) {
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

bool OutboxService::WaitFor(std::chrono::milliseconds d, const bool* woken) {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait_for(lk, d, [&] { return stopping_ || (woken != nullptr && *woken); });
  return !stopping_;
}

void OutboxService::ConsumerLoop(Consumer* c) {
  // "rdv-ob-" and the consumer's name, as much as a thread name holds (15 bytes): for top -H and perf.
  pthread_setname_np(pthread_self(), ("rdv-ob-" + c->name).substr(0, 15).c_str());
  // Events held back behind an id hole: looked at again soon, since most holes are an insert
  // about to commit (a busy writer), waiting longer each time the same hole is still there, up to
  // the poll interval (a hole that stays is a rolled-back insert: its events go once the settle
  // window has passed). A round that handed events met a hole past the last one: the wait starts
  // short again, so a steady stream whose rounds keep meeting fresh holes never waits long.
  std::chrono::milliseconds held_back_wait = kFirstHeldBackWait;
  for (;;) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (stopping_) return;
      c->woken = false;  // a Notify() from here on finds the round's events, or wakes the next one
    }
    Round round;
    bool failed = false;
    try {
      round = RunRound(*c);  // a failing event is retried on its own schedule, never the whole consumer
    } catch (const DatabaseUnavailable& e) {
      failed = true;
      if (c->failures == 0) {
        logger_.Warn("outbox consumer: database unavailable",
                     {{"consumer", c->name}, {"error", e.what()}});
      }
    } catch (const std::exception& e) {
      failed = true;
      logger_.Error("outbox consumer round failed", {{"consumer", c->name}, {"error", e.what()}});
    }
    if (failed) {
      ++c->failures;
      if (!WaitFor(Backoff(c->failures), nullptr)) return;
      continue;
    }
    c->failures = 0;
    if (round.handed == static_cast<size_t>(options_.batch_size)) continue;  // more is waiting
    if (round.held_back) {
      if (round.handed > 0) held_back_wait = kFirstHeldBackWait;
      if (!WaitFor(std::min(held_back_wait, options_.poll_interval), nullptr)) return;
      held_back_wait *= 2;
      continue;
    }
    held_back_wait = kFirstHeldBackWait;
    // What arrives meanwhile waits for the next round, handed with the rest (the events are
    // committed: a round finds them whenever it runs).
    if (round.handed > 0 && c->gather.count() > 0 && !WaitFor(c->gather, nullptr)) return;
    if (!WaitFor(options_.poll_interval, &c->woken)) return;
  }
}

size_t OutboxService::PurgeOnce() {
  std::map<std::string, std::vector<std::string>> topic_consumers;
  std::map<std::string, std::chrono::seconds> kept;
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (const auto& [name, c] : consumers_) {
      for (const auto& t : c->topics) topic_consumers[t].push_back(name);
    }
    kept = kept_;
  }
  // A kept topic nobody here subscribes to is purged by its own age alone.
  for (const auto& [topic, at_least] : kept) topic_consumers[topic];
  std::map<std::string, int64_t> positions;
  db_.Run([&](DbConnection& conn) {
    for (const auto& [topic, names] : topic_consumers) {
      for (const auto& name : names) {
        if (positions.count(name)) continue;
        std::optional<DbRow> row = conn.QueryOne("SELECT position FROM outbox_consumers WHERE consumer = ?", {name});
        positions[name] = row ? row->Int(1) : 0;
      }
    }
  });

  const int64_t retention_seconds =
      std::chrono::duration_cast<std::chrono::seconds>(options_.retention).count();
  size_t deleted = 0;
  for (const auto& topic_entry : topic_consumers) {
    // Named, not a structured binding: the purge's lambda below captures the topic.
    const std::string& topic = topic_entry.first;
    const auto& names = topic_entry.second;
    int64_t passed = std::numeric_limits<int64_t>::max();
    for (const auto& name : names) passed = std::min(passed, positions[name]);
    auto keep = kept.find(topic);
    const int64_t topic_retention =
        keep == kept.end() ? retention_seconds
                           : std::max(retention_seconds, static_cast<int64_t>(keep->second.count()));
    for (int i = 0; i < kMaxPurgeBatchesPerTopic; ++i) {
      uint64_t n = 0;
      db_.Run([&](DbConnection& conn) {
        n = conn.Exec(std::string("DELETE FROM outbox_events WHERE topic = ? AND id <= ?"
                                  " AND created_at < UTC_TIMESTAMP(3) - INTERVAL ? SECOND") +
                          kStillNeeded + " ORDER BY id LIMIT " + std::to_string(kPurgeBatch),
                      {topic, passed, topic_retention});
      });
      deleted += n;
      if (n < static_cast<uint64_t>(kPurgeBatch)) break;
    }
  }
  std::string sql = "DELETE FROM outbox_events WHERE created_at < UTC_TIMESTAMP(3) - INTERVAL ? SECOND";
  if (!topic_consumers.empty()) sql += " AND topic NOT IN (" + Placeholders(topic_consumers.size()) + ")";
  sql += kStillNeeded;
  sql += " ORDER BY id LIMIT " + std::to_string(kPurgeBatch);
  for (int i = 0; i < kMaxPurgeBatchesPerTopic; ++i) {
    uint64_t n = 0;
    db_.Run([&](DbConnection& conn) {
      std::vector<DbValue> params{retention_seconds};
      for (const auto& [topic, names] : topic_consumers) params.emplace_back(topic);
      n = conn.Exec(sql, params);
    });
    deleted += n;
    if (n < static_cast<uint64_t>(kPurgeBatch)) break;
  }
  if (deleted > 0) logger_.Info("outbox retention", {{"deleted", deleted}});
  return deleted;
}

void OutboxService::PurgeLoop() {
  for (;;) {
    try {
      PurgeOnce();
    } catch (const std::exception& e) {
      logger_.Warn("outbox retention failed", {{"error", e.what()}});
    }
    if (!WaitFor(std::chrono::duration_cast<std::chrono::milliseconds>(options_.purge_interval), nullptr)) {
      return;
    }
  }
}

void OutboxService::StartLoopLocked(Consumer* c) {
  c->thread = std::thread([this, c] { ConsumerLoop(c); });
}

void OutboxService::Start() {
  std::lock_guard<std::mutex> lk(mu_);
  if (running_) return;
  running_ = true;
  stopping_ = false;
  for (auto& [name, c] : consumers_) StartLoopLocked(c.get());
  purge_thread_ = std::thread([this] { PurgeLoop(); });
}

void OutboxService::Stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!running_) return;
    stopping_ = true;
    for (auto& [name, c] : consumers_) {
      if (c->thread.joinable()) threads.push_back(std::move(c->thread));
    }
    if (purge_thread_.joinable()) threads.push_back(std::move(purge_thread_));
  }
  cv_.notify_all();
  for (auto& t : threads) t.join();
  std::lock_guard<std::mutex> lk(mu_);
  running_ = false;
  stopping_ = false;
}

}  // namespace rendezvous::core

namespace rendezvous {

std::unordered_map<int64_t, std::string> OutboxPayloads(DbConnection& tx, const std::vector<int64_t>& ids) {
  std::unordered_map<int64_t, std::string> out;
  // The ids are numbers, spelled out: one statement a chunk whatever its length, sent unprepared
  // (its text changes with the list).
  constexpr size_t kChunk = 1000;
  for (size_t at = 0; at < ids.size(); at += kChunk) {
    std::string sql = "SELECT id, payload FROM outbox_events WHERE id IN (";
    for (size_t i = at; i < std::min(ids.size(), at + kChunk); ++i) {
      if (i > at) sql += ',';
      sql += std::to_string(ids[i]);
    }
    sql += ')';
    for (const DbRow& row : tx.QueryUnprepared(sql)) out.emplace(row.Int(1), row.String(2));
  }
  return out;
}

}  // namespace rendezvous
