// The outbox's events table (DESIGN §6): its tables, owner "outbox", and the writing of one event.
// The consuming side is OutboxService (outbox_service.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rendezvous/database.hpp"

namespace rendezvous::core {

// The outbox's tables: outbox_events, outbox_consumers, outbox_retries, outbox_parked.
std::vector<Migration> OutboxMigrations();

// Writes one event with the caller's transaction and returns its id. Topic and type are checked by
// the caller. Invalid UTF-8 in the payload's strings is replaced. SQL errors propagate.
int64_t WriteOutboxEvent(DbConnection& tx, const std::string& topic, const std::string& type,
                         const nlohmann::json& payload);

}  // namespace rendezvous::core
