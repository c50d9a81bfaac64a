// The outbox's retention and lag (DESIGN §6, outbox_service.hpp): deleting the events every
// consumer is done with, and counting the events past a consumer's position.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"

namespace rendezvous::core {

// One retention pass; returns the number of events deleted. `topic_consumers`: the consumers
// subscribed here, by topic (a topic with none is purged by its age alone); `kept`: the longer
// retention of a topic (KeepEvents), by topic.
size_t PurgeOutboxEvents(Database& db, Logger& logger, std::chrono::hours retention,
                         std::map<std::string, std::vector<std::string>> topic_consumers,
                         const std::map<std::string, std::chrono::seconds>& kept);

// The events of `topics` past `position`, counted up to 100,000.
int64_t CountOutboxLag(Database& db, const std::vector<std::string>& topics, int64_t position);

}  // namespace rendezvous::core
