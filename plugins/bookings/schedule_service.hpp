// The owner's operations on schedules (DESIGN §9), each change in one transaction, and the rules
// about the default: a user's first schedule becomes the default; isDefault true on create or
// patch makes that schedule the default and clears the others; the default cannot be turned off
// (another one is made the default instead); deleting the default makes the oldest remaining one
// the default. Used by the schedule routes. Thread-safe (each call borrows its own connection).
// Calls may throw DatabaseUnavailable.
#pragma once

#include <cstdint>
#include <optional>

#include "rendezvous/contracts/default_schedules.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/user.hpp"
#include "schedule.hpp"

namespace rendezvous::bookings {

constexpr int kMaxSchedulesPerUser = 100;

class ScheduleService final : public DefaultSchedules {
 public:
  explicit ScheduleService(Database& db);

  // DefaultSchedules: the id of the owner's stored default, for /v2/me.
  std::optional<int64_t> DefaultScheduleId(int64_t user_id) override;
  // DefaultSchedules: PATCH /v2/me {defaultScheduleId}, with the owner's schedules locked as for
  // any other change of the default.
  Status MakeDefault(DbConnection& tx, int64_t user_id, int64_t schedule_id) override;
  // DefaultSchedules: a new user's default, ImplicitDefaultSchedule(user) stored, on the
  // transaction that creates the user.
  Status CreateDefault(DbConnection& tx, const User& user) override;

  // The owner's stored schedules, oldest first.
  Json List(int64_t owner_id);
  // NotFound for another user's or an unknown id.
  Result<Json> Get(int64_t owner_id, int64_t id);
  // The stored default, else the implicit one (id null).
  Json GetDefault(const User& owner);
  // Conflict at kMaxSchedulesPerUser.
  Result<Json> Create(const Schedule& schedule);
  // `patch` must have passed ApplySchedulePatch on a scratch schedule already. Invalid
  // ("isDefault") for isDefault false on the default.
  Result<Json> Update(int64_t owner_id, int64_t id, const Json& patch);
  // Conflict while event types name the schedule. Answers the deleted schedule.
  Result<Json> Delete(int64_t owner_id, int64_t id);

 private:
  Database& db_;
};

}  // namespace rendezvous::bookings
