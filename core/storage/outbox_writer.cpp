#include "storage/outbox_writer.hpp"

#include <algorithm>
#include <unordered_map>

#include "rendezvous/outbox.hpp"

namespace rendezvous::core {

std::vector<Migration> OutboxMigrations() {
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

int64_t WriteOutboxEvent(DbConnection& tx, const std::string& topic, const std::string& type,
                         const nlohmann::json& payload) {
  return tx.InsertReturning(
      "INSERT INTO outbox_events (topic, type, payload, created_at)"
      " VALUES (?, ?, ?, UTC_TIMESTAMP(3))",
      {topic, type, payload.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
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
