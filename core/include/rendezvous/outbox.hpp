// The transactional outbox (DESIGN §6): events are written in the same transaction as the change
// that caused them; consumers claim them in order, in batches, shared across instances.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "rendezvous/database.hpp"

namespace rendezvous {

struct OutboxEvent {
  int64_t id = 0;
  std::string topic;     // e.g. "booking"
  std::string type;      // e.g. "BOOKING_CREATED"
  // The payload, parsed once per process: consumers handed the same event while it is fresh share
  // one parsed copy, so it is read-only. Never null in an event the outbox hands to a consumer of
  // parsed payloads; null for a consumer of texts (OutboxPayload::kText).
  std::shared_ptr<const nlohmann::json> payload;
  std::chrono::system_clock::time_point created_at;
  // The payload as the outbox stores it (compact JSON text) when the event was read from the
  // outbox; empty otherwise. Lets a consumer that forwards the event as it is skip serializing it.
  // For a consumer of parsed payloads, set only when the text is well-formed JSON; for a consumer
  // of texts, always set, as stored (not checked); for a consumer of neither, empty.
  std::string payload_text;
};

// Called with a batch of events, inside the transaction that advances the consumer's position:
// whatever the handler writes with `tx` commits together with the progress (so work rows the
// handler inserts are created exactly once). Throwing rolls both back; the batch's events are
// then handed out again one per call, and one that keeps failing is retried on its own (later
// events do not wait for it) until `outbox.max_attempts` failures park it for the operator
// (`rendezvous admin outbox parked|replay|drop`). So a handler may see an event again, alone,
// after later ones, and must treat each event on its own. Throw only for what another attempt
// may fix or an operator must see; never for input it can judge bad itself (skip that).
using OutboxHandler = std::function<void(DbConnection& tx, const std::vector<OutboxEvent>& batch)>;
// Called on the consumer's loop thread once the handler's writes have committed: after a batch,
// and after the events handled one by one or retried when there were any. Work the handler queued
// (rows another thread takes up) can be signalled here, when that thread can already see it.
using OutboxCommitted = std::function<void()>;

// What a consumer is handed of each event's payload.
enum class OutboxPayload {
  kParsed,  // `payload` parsed, `payload_text` when well-formed
  kText,    // `payload_text` only: for a consumer that reads a few members (rendezvous/json_pick.hpp)
            // and parses the whole rarely; the parse is the larger part of a light consumer's work
  kNone,    // neither (`payload` null, `payload_text` empty): for a consumer that most of the time
            // needs no event's content, and reads the texts it needs by id (OutboxPayloads)
};

class Outbox {
 public:
  virtual ~Outbox() = default;
  // Writes an event with `tx` (the caller's transaction). Returns its id.
  virtual int64_t Publish(DbConnection& tx, const std::string& topic, const std::string& type,
                          const nlohmann::json& payload) = 0;
  // Registers a named consumer of the given topics. The host's background loop claims batches
  // (SELECT ... FOR UPDATE SKIP LOCKED on the consumer's progress row), so across instances one
  // claims a batch at a time. Must be called before the host starts (plugin Start()). `committed`
  // (optional) runs after each commit that handed events to `handler`; `payload` says what the
  // handler is given of each event's payload. `gather`: after a round that handed events, the
  // consumer waits this long before its next one, so that the events of a steady stream are
  // handed in fewer, larger rounds (each round is a transaction of its own); for consumers whose
  // work may wait that long, never for those that carry an event's latency (0: none).
  virtual void Subscribe(const std::string& consumer, const std::vector<std::string>& topics,
                         OutboxHandler handler, OutboxCommitted committed = {},
                         OutboxPayload payload = OutboxPayload::kParsed,
                         std::chrono::milliseconds gather = std::chrono::milliseconds{0}) = 0;
  // Wakes the consumer loops now (after a local publish) instead of at their next poll.
  virtual void Notify() noexcept = 0;
  // The events of `topic` are kept at least `at_least` after they were written, however short the
  // host's own retention: for a consumer whose rows refer to events instead of copying them
  // (OutboxPayloads). Before the host starts, like Subscribe; the longest of several calls holds.
  virtual void KeepEvents(const std::string& topic, std::chrono::seconds at_least) = 0;
};

// The payloads of the events `ids`, as stored (compact JSON texts), by id, read with `tx`. An
// event no longer kept is absent.
std::unordered_map<int64_t, std::string> OutboxPayloads(DbConnection& tx, const std::vector<int64_t>& ids);

}  // namespace rendezvous
