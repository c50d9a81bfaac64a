// Internal to the outbox's files: the limits and helpers its writer, claim round, parking and
// retention share.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/database.hpp"
#include "rendezvous/outbox.hpp"
#include "rendezvous/text.hpp"

namespace rendezvous::core::outbox_internal {

inline constexpr size_t kMaxTopicLength = 64;
inline constexpr size_t kMaxConsumerLength = 128;
inline constexpr size_t kMaxTopicsPerConsumer = 64;
inline constexpr int kMaxBatchSize = 10000;
inline constexpr int kHoleScanLimit = 20000;
// Reads of a batch a round may make when the consumer's position moved under it.
inline constexpr int kClaimAttempts = 3;
inline constexpr int kLagCap = 100000;
inline constexpr int kPurgeBatch = 1000;
inline constexpr int kMaxPurgeBatchesPerTopic = 100;
inline constexpr auto kMaxBackoff = std::chrono::seconds(30);
inline constexpr auto kFirstBackoff = std::chrono::milliseconds(500);
inline constexpr auto kFirstHeldBackWait = std::chrono::milliseconds(2);
// Parsed payloads kept for the other consumers of their topic: at most this many, of at most this
// much text in all (the parsed form takes a few times the text); the lowest ids go first.
inline constexpr size_t kMaxSharedPayloads = 1024;
inline constexpr size_t kMaxSharedPayloadBytes = 2 << 20;

inline std::string Placeholders(size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += i == 0 ? "?" : ", ?";
  return out;
}

inline void CheckName(const std::string& what, const std::string& value, size_t max) {
  if (value.empty() || value.size() > max) {
    throw std::invalid_argument("outbox " + what + " must have 1 to " + std::to_string(max) + " characters");
  }
}

inline constexpr size_t kMaxErrorBytes = 512;
inline constexpr auto kParkedCountInterval = std::chrono::seconds(1);
// At least this often a consumer looks for retries recorded elsewhere (another instance, a replay).
inline constexpr auto kRetryCheckInterval = std::chrono::seconds(1);
inline constexpr auto kLagMeasureInterval = std::chrono::seconds(1);

// Moves `at` to `to` when that is sooner, whatever other threads move it to meanwhile.
inline void BringForward(std::atomic<std::chrono::steady_clock::rep>& at, std::chrono::steady_clock::rep to) {
  auto seen = at.load();
  while (to < seen && !at.compare_exchange_weak(seen, to)) {
  }
}

// A handler's message as the tables keep it: well-formed UTF-8, cut on a character boundary.
inline std::string ErrorText(std::string_view what) {
  return text::TruncateUtf8(text::SanitizeUtf8(what), kMaxErrorBytes);
}

// Runs the handler; a throw other than a lost connection is noted in `failed` and `error` (the
// transaction still rolls back: the exception goes on, and the caller tells it from its own).
inline void CallHandler(const OutboxHandler& handler, DbConnection& tx,
                        const std::vector<OutboxEvent>& events, bool& failed, std::string& error) {
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

inline std::chrono::milliseconds Backoff(int failures, std::chrono::milliseconds first = kFirstBackoff,
                                         std::chrono::milliseconds max = kMaxBackoff) {
  auto d = first;
  for (int i = 1; i < failures && d < max; ++i) d *= 2;
  return std::min<std::chrono::milliseconds>(d, max);
}

// Events a consumer still retries or has parked stay until it is done with them.
inline constexpr const char* kStillNeeded =
    " AND NOT EXISTS (SELECT 1 FROM outbox_retries r WHERE r.event_id = outbox_events.id)"
    " AND NOT EXISTS (SELECT 1 FROM outbox_parked p WHERE p.event_id = outbox_events.id)";

// The time as its DATETIME(3) text, read here (the session's zone is UTC): MariaDB's
// UNIX_TIMESTAMP(…) * 1000 is decimal arithmetic on every row.
inline constexpr const char* kEventColumns = "id, topic, type, payload, created_at";
// For a consumer handed no payloads (OutboxPayload::kNone): the text is not read at all.
inline constexpr const char* kEventColumnsNoPayload = "id, topic, type, '' AS payload, created_at";

}  // namespace rendezvous::core::outbox_internal
