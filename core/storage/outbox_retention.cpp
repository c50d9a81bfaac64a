#include "storage/outbox_retention.hpp"

#include <algorithm>
#include <limits>

#include "storage/outbox_internal.hpp"

namespace rendezvous::core {

using outbox_internal::kLagCap;
using outbox_internal::kMaxPurgeBatchesPerTopic;
using outbox_internal::kPurgeBatch;
using outbox_internal::kStillNeeded;
using outbox_internal::Placeholders;

size_t PurgeOutboxEvents(Database& db, Logger& logger, std::chrono::hours retention,
                         std::map<std::string, std::vector<std::string>> topic_consumers,
                         const std::map<std::string, std::chrono::seconds>& kept) {
  // A kept topic nobody here subscribes to is purged by its own age alone.
  for (const auto& [topic, at_least] : kept) topic_consumers[topic];
  std::map<std::string, int64_t> positions;
  db.Run([&](DbConnection& conn) {
    for (const auto& [topic, names] : topic_consumers) {
      for (const auto& name : names) {
        if (positions.count(name)) continue;
        std::optional<DbRow> row =
            conn.QueryOne("SELECT position FROM outbox_consumers WHERE consumer = ?", {name});
        positions[name] = row ? row->Int(1) : 0;
      }
    }
  });

  const int64_t retention_seconds = std::chrono::duration_cast<std::chrono::seconds>(retention).count();
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
      db.Run([&](DbConnection& conn) {
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
    db.Run([&](DbConnection& conn) {
      std::vector<DbValue> params{retention_seconds};
      for (const auto& [topic, names] : topic_consumers) params.emplace_back(topic);
      n = conn.Exec(sql, params);
    });
    deleted += n;
    if (n < static_cast<uint64_t>(kPurgeBatch)) break;
  }
  if (deleted > 0) logger.Info("outbox retention", {{"deleted", deleted}});
  return deleted;
}

int64_t CountOutboxLag(Database& db, const std::vector<std::string>& topics, int64_t position) {
  // Outside the round's transaction: a covering walk of (topic, id), capped.
  const std::string sql = "SELECT COUNT(*) FROM (SELECT 1 FROM outbox_events WHERE id > ? AND topic IN (" +
                          Placeholders(topics.size()) + ") LIMIT " + std::to_string(kLagCap) + ") t";
  std::vector<DbValue> params{position};
  params.insert(params.end(), topics.begin(), topics.end());
  std::optional<DbRow> row = db.Run([&](DbConnection& conn) { return conn.QueryOne(sql, params); });
  return row ? row->Int(1) : 0;
}

}  // namespace rendezvous::core
