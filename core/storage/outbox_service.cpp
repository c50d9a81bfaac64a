#include "storage/outbox_service.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>
#include <utility>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

namespace rendezvous::core {
namespace {

constexpr size_t kMaxTopicLength = 64;
constexpr size_t kMaxConsumerLength = 128;
constexpr size_t kMaxTopicsPerConsumer = 64;
constexpr int kMaxBatchSize = 10000;
constexpr int kHoleScanLimit = 20000;
constexpr int kLagCap = 100000;
constexpr int kPurgeBatch = 1000;
constexpr int kMaxPurgeBatchesPerTopic = 100;
constexpr auto kMaxBackoff = std::chrono::seconds(30);
constexpr auto kFirstBackoff = std::chrono::milliseconds(500);

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

std::chrono::milliseconds Backoff(int failures) {
  auto d = kFirstBackoff;
  for (int i = 1; i < failures && d < kMaxBackoff; ++i) d *= 2;
  return std::min<std::chrono::milliseconds>(d, kMaxBackoff);
}

}  // namespace

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
                                    "Outbox batches whose handler threw (rolled back, retried)")) {
  if (options_.batch_size < 1 || options_.batch_size > kMaxBatchSize) {
    throw std::invalid_argument("outbox batch_size must be between 1 and 10000");
  }
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
  };
}

int64_t OutboxService::Publish(DbConnection& tx, const std::string& topic, const std::string& type,
                               const nlohmann::json& payload) {
  CheckName("topic", topic, kMaxTopicLength);
  CheckName("type", type, kMaxTopicLength);
  tx.Exec(
      "INSERT INTO outbox_events (topic, type, payload, created_at)"
      " VALUES (?, ?, ?, UTC_TIMESTAMP(3))",
      {topic, type, payload.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
  const int64_t id = tx.LastInsertId();
  published_.Add({{"topic", topic}}).Increment();
  return id;
}

void OutboxService::Subscribe(const std::string& consumer, const std::vector<std::string>& topics,
                              OutboxHandler handler) {
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
  c->consumed = &consumed_.Add({{"consumer", consumer}});
  c->handler_errors = &handler_errors_.Add({{"consumer", consumer}});
  c->lag = &lag_.Add({{"consumer", consumer}});
  // A consumed topic is exported at zero from start-up, before anything is published to it.
  for (const std::string& topic : c->topics) published_.Add({{"topic", topic}});
  std::lock_guard<std::mutex> lk(mu_);
  if (consumers_.count(consumer)) {
    throw std::invalid_argument("outbox consumer '" + consumer + "' subscribed twice");
  }
  Consumer* raw = c.get();
  consumers_.emplace(consumer, std::move(c));
  if (running_ && !stopping_) StartLoopLocked(raw);
}

void OutboxService::Notify() noexcept {
  {
    std::lock_guard<std::mutex> lk(mu_);
    ++generation_;
  }
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
  const std::string batch_sql =
      "SELECT id, topic, type, payload, CAST(UNIX_TIMESTAMP(created_at) * 1000 AS SIGNED),"
      " created_at <= UTC_TIMESTAMP(3) - INTERVAL ? MICROSECOND"
      " FROM outbox_events WHERE id > ? AND topic IN (" + in + ")"
      " ORDER BY id LIMIT ? LOCK IN SHARE MODE";
  const std::string lag_sql =
      "SELECT COUNT(*) FROM (SELECT 1 FROM outbox_events WHERE id > ? AND topic IN (" + in +
      ") LIMIT " + std::to_string(kLagCap) + ") t";

  Round round;
  bool row_missing_or_locked = false;
  int64_t lag = -1;
  try {
    db_.RunTransaction([&](DbConnection& tx) {
      round = Round{};
      row_missing_or_locked = false;
      lag = -1;

      std::optional<DbRow> claim =
          tx.QueryOne("SELECT position FROM outbox_consumers WHERE consumer = ? FOR UPDATE SKIP LOCKED", {c.name});
      if (!claim) {
        row_missing_or_locked = true;
        return;
      }
      int64_t position = claim->Int(1);

      struct Candidate {
        OutboxEvent event;
        bool settled = false;
      };
      std::vector<Candidate> candidates;
      {
        std::vector<DbValue> params{
            std::chrono::duration_cast<std::chrono::microseconds>(options_.settle_window).count(), position};
        params.insert(params.end(), c.topics.begin(), c.topics.end());
        params.emplace_back(options_.batch_size);
        for (const DbRow& row : tx.Query(batch_sql, params)) {
          Candidate cand;
          cand.event.id = row.Int(1);
          cand.event.topic = row.String(2);
          cand.event.type = row.String(3);
          const std::string text = row.String(4);
          cand.event.payload = nlohmann::json::parse(text, nullptr, false);
          if (cand.event.payload.is_discarded()) cand.event.payload = text;
          cand.event.created_at = std::chrono::system_clock::time_point(std::chrono::milliseconds(row.Int(5)));
          cand.settled = row.Int(6) != 0;
          candidates.push_back(std::move(cand));
        }
      }

      if (!candidates.empty()) {
        // The first id missing after `position` (any topic): events at or past it must settle.
        int64_t first_hole = std::numeric_limits<int64_t>::max();
        const int64_t last = candidates.back().event.id;
        const std::vector<DbRow> ids = tx.Query(
            "SELECT id FROM outbox_events WHERE id > ? AND id <= ? ORDER BY id LIMIT ?",
            {position, last, kHoleScanLimit});
        int64_t expected = position + 1;
        for (const DbRow& row : ids) {
          const int64_t id = row.Int(1);
          if (id != expected) {
            first_hole = expected;
            break;
          }
          expected = id + 1;
        }
        if (first_hole == std::numeric_limits<int64_t>::max() && expected <= last) {
          first_hole = expected;  // scan limit reached: unknown beyond, treat as a hole
        }

        std::vector<OutboxEvent> batch;
        for (auto& cand : candidates) {
          if (cand.event.id >= first_hole && !cand.settled) break;
          batch.push_back(std::move(cand.event));
        }
        round.held_back = batch.size() < candidates.size();

        if (!batch.empty()) {
          try {
            c.handler(tx, batch);
          } catch (...) {
            round.handler_failed = true;
            throw;
          }
          tx.Exec("UPDATE outbox_consumers SET position = ?, updated_at = UTC_TIMESTAMP(3) WHERE consumer = ?",
                  {batch.back().id, c.name});
          position = batch.back().id;
          round.handed = batch.size();
        }
      }

      if (!round.held_back && candidates.size() < static_cast<size_t>(options_.batch_size)) {
        lag = 0;
      } else {
        std::vector<DbValue> params{position};
        params.insert(params.end(), c.topics.begin(), c.topics.end());
        std::optional<DbRow> row = tx.QueryOne(lag_sql, params);
        lag = row ? row->Int(1) : 0;
      }
    });
  } catch (const std::exception& e) {
    if (!round.handler_failed) throw;
    c.handler_errors->Increment();
    logger_.Error("outbox handler failed; batch rolled back",
                  {{"consumer", c.name}, {"error", e.what()}});
    return round;
  } catch (...) {
    if (!round.handler_failed) throw;
    c.handler_errors->Increment();
    logger_.Error("outbox handler failed; batch rolled back", {{"consumer", c.name}});
    return round;
  }
  if (row_missing_or_locked) c.row_created = false;  // recreate it next round if it was deleted
  if (round.handed > 0) c.consumed->Increment(static_cast<double>(round.handed));
  if (lag >= 0) c.lag->Set(static_cast<double>(lag));
  return round;
}

bool OutboxService::WaitFor(std::chrono::milliseconds d, uint64_t seen_generation,
                            bool wake_on_notify) {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait_for(lk, d, [&] {
    return stopping_ || (wake_on_notify && generation_ != seen_generation);
  });
  return !stopping_;
}

void OutboxService::ConsumerLoop(Consumer* c) {
  for (;;) {
    uint64_t generation;
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (stopping_) return;
      generation = generation_;
    }
    Round round;
    bool failed = false;
    try {
      round = RunRound(*c);
      failed = round.handler_failed;
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
      if (!WaitFor(Backoff(c->failures), generation, false)) return;
      continue;
    }
    c->failures = 0;
    if (round.handed == static_cast<size_t>(options_.batch_size)) continue;  // more is waiting
    if (!WaitFor(options_.poll_interval, generation, !round.held_back)) return;
  }
}

size_t OutboxService::PurgeOnce() {
  std::map<std::string, std::vector<std::string>> topic_consumers;
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (const auto& [name, c] : consumers_) {
      for (const auto& t : c->topics) topic_consumers[t].push_back(name);
    }
  }
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
  for (const auto& [topic, names] : topic_consumers) {
    int64_t passed = std::numeric_limits<int64_t>::max();
    for (const auto& name : names) passed = std::min(passed, positions[name]);
    for (int i = 0; i < kMaxPurgeBatchesPerTopic; ++i) {
      uint64_t n = 0;
      db_.Run([&](DbConnection& conn) {
        n = conn.Exec(
            "DELETE FROM outbox_events WHERE topic = ? AND id <= ?"
            " AND created_at < UTC_TIMESTAMP(3) - INTERVAL ? SECOND ORDER BY id LIMIT " +
                std::to_string(kPurgeBatch),
            {topic, passed, retention_seconds});
      });
      deleted += n;
      if (n < static_cast<uint64_t>(kPurgeBatch)) break;
    }
  }
  std::string sql = "DELETE FROM outbox_events WHERE created_at < UTC_TIMESTAMP(3) - INTERVAL ? SECOND";
  if (!topic_consumers.empty()) sql += " AND topic NOT IN (" + Placeholders(topic_consumers.size()) + ")";
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
    if (!WaitFor(std::chrono::duration_cast<std::chrono::milliseconds>(options_.purge_interval), 0,
                 false)) {
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
