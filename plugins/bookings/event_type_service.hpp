// The event types of their owners (tables in booking_rows.hpp): list, read, create, update and
// delete, each in one transaction. Used by the event type routes. Failures are statuses for the
// HTTP layer: NotFound (another user's event type is not found), Conflict (a duplicate slug, too
// many event types, bookings still made of it), Invalid naming the field. Thread-safe (each call
// borrows its own connection); calls may throw DatabaseUnavailable. The Database must outlive it.
// It is also the other plugins' view of event types (EventTypeDirectory, "bookings.event_types"):
// owners, and listeners run inside each deletion's transaction.
#pragma once

#include <cstdint>
#include <vector>

#include "event_type.hpp"
#include "rendezvous/contracts/event_types.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/user.hpp"

namespace rendezvous::bookings {

constexpr int kMaxEventTypesPerUser = 500;

class EventTypeService final : public EventTypeDirectory {
 public:
  // `users` names each event type's owner in its `users`.
  EventTypeService(Database& db, UserDirectory& users);

  // Up to kMaxEventTypesPerUser, oldest first.
  Json List(int64_t owner_id);
  Result<Json> Get(int64_t owner_id, int64_t id);
  // A named schedule must be the owner's.
  Result<Json> Create(int64_t owner_id, const EventTypeFields& fields);
  // `patch` must have passed ApplyEventTypePatch on a scratch object already.
  Result<Json> Update(int64_t owner_id, int64_t id, const Json& patch);
  // A Conflict while bookings of the event type exist. Answers the deleted event type. The
  // OnDelete listeners run in its transaction.
  Result<Json> Delete(int64_t owner_id, int64_t id);

  std::optional<int64_t> Owner(DbConnection& conn, int64_t id, bool lock) override;
  void OnDelete(DeleteListener listener) override;

 private:
  // The owner's username, "" when the owner is gone. Asked outside any transaction of ours.
  std::string OwnerName(int64_t owner_id);

  Database& db_;
  UserDirectory& users_;
  std::vector<DeleteListener> delete_listeners_;
};

}  // namespace rendezvous::bookings
