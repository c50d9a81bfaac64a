// Event types as other plugins see them: who owns one, and a say in its deletion. The bookings
// plugin, which owns event types, provides this service as "bookings.event_types"
// (PluginContext::Find from Start() on; absent when bookings is disabled: then there are no event
// types). The webhooks plugin uses it for the webhooks of an event type: the owner check at create
// and the deletion of those webhooks with their event type.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "rendezvous/database.hpp"

namespace rendezvous {

class EventTypeDirectory {
 public:
  // Runs inside the transaction that deletes event type `event_type_id`, after the deletion passed
  // its checks and before the row goes: work written on `tx` commits or rolls back with it. May
  // throw (the deletion then fails as a whole).
  using DeleteListener = std::function<void(DbConnection& tx, int64_t event_type_id)>;

  virtual ~EventTypeDirectory() = default;
  // The owner of event type `id`, nullopt when there is none. Read on the caller's connection;
  // with `lock`, the row is share-locked until the caller's transaction ends, so the event type
  // cannot be deleted in between. Thread-safe; may throw DatabaseUnavailable.
  virtual std::optional<int64_t> Owner(DbConnection& conn, int64_t id, bool lock) = 0;
  // Adds a listener to every deletion from now on. Call from Start() only (before requests are
  // served); not thread-safe against deletions.
  virtual void OnDelete(DeleteListener listener) = 0;
};

}  // namespace rendezvous
