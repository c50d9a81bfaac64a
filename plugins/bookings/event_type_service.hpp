// The event types of their owners (tables in booking_rows.hpp): list, read, create, update and
// delete, each in one transaction. Used by the event type routes. Failures are statuses for the
// HTTP layer: NotFound (another user's event type is not found), Conflict (a duplicate slug, too
// many event types, bookings still made of it), Invalid naming the field. Thread-safe (each call
// borrows its own connection); calls may throw DatabaseUnavailable. The Database must outlive it.
#pragma once

#include <cstdint>

#include "event_type.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::bookings {

constexpr int kMaxEventTypesPerUser = 500;

class EventTypeService {
 public:
  explicit EventTypeService(Database& db);

  // Up to kMaxEventTypesPerUser, oldest first.
  Json List(int64_t owner_id);
  Result<Json> Get(int64_t owner_id, int64_t id);
  // A named schedule must be the owner's.
  Result<Json> Create(int64_t owner_id, const EventTypeFields& fields);
  // `patch` must have passed ApplyEventTypePatch on a scratch object already.
  Result<Json> Update(int64_t owner_id, int64_t id, const Json& patch);
  // A Conflict while bookings of the event type exist. Answers the deleted event type.
  Result<Json> Delete(int64_t owner_id, int64_t id);

 private:
  Database& db_;
};

}  // namespace rendezvous::bookings
