// A user's default schedule (working hours) as the core sees it, for the `defaultScheduleId` of
// /v2/me. The bookings plugin, which owns schedules, provides this service as
// "bookings.default_schedules"; without it (bookings disabled) no user has a stored default.
// With it, every user is created with a stored default schedule (DESIGN §9's implicit default's
// hours), as Cal.com's managed users are.
#pragma once

#include <cstdint>
#include <optional>

#include "rendezvous/database.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/user.hpp"

namespace rendezvous {

// Thread-safe. Calls may throw DatabaseUnavailable.
class DefaultSchedules {
 public:
  virtual ~DefaultSchedules() = default;
  // The id of the user's stored default schedule; nullopt while the user has none (the implicit
  // default of DESIGN §9).
  virtual std::optional<int64_t> DefaultScheduleId(int64_t user_id) = 0;
  // Makes the user's schedule `schedule_id` the default (the previous default no longer is), on
  // the caller's transaction `tx`: it commits or rolls back with the caller's other changes.
  // NotFound when the user has no schedule with that id; nothing is changed then.
  virtual Status MakeDefault(DbConnection& tx, int64_t user_id, int64_t schedule_id) = 0;
  // Stores the implicit default (Monday–Friday 09:00–17:00 in the user's time zone, "Working
  // hours") as the default schedule of `user`, a user being created on the caller's transaction
  // `tx`; nothing when the user has a default already.
  virtual Status CreateDefault(DbConnection& tx, const User& user) = 0;
};

}  // namespace rendezvous
