// The schedules table (owner "bookings", migration 3 in booking_migrations.cpp, which also gives
// event types their `schedule_id`): its rows read into schedules and written from them, and the schedule an
// event type uses. Every call works on a connection it is lent (and may throw what DbConnection throws).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include "rendezvous/database.hpp"
#include "rendezvous/user.hpp"
#include "schedule.hpp"

namespace rendezvous::bookings {

// Column list for SELECT, in the order ScheduleFromRow reads it.
inline constexpr const char* kScheduleColumns =
    "id, owner_id, name, time_zone, default_owner_id, availability, overrides";

Schedule ScheduleFromRow(const DbRow& row);
// name, time_zone, default_owner_id, availability, overrides (the columns after owner_id), then
// `tail`.
std::vector<DbValue> ScheduleValues(const Schedule& schedule, std::initializer_list<DbValue> tail);

// How LoadSchedule locks the row: kUpdate, FOR UPDATE (a schedule about to change); kShare, LOCK IN
// SHARE MODE (a schedule an event type is about to name, so it cannot be deleted before that commits).
enum class ScheduleLock { kNone, kShare, kUpdate };
// The schedule `id` of `owner_id`; nullopt for another owner's or one that does not exist.
std::optional<Schedule> LoadSchedule(DbConnection& conn, int64_t owner_id, int64_t id,
                                     ScheduleLock lock = ScheduleLock::kNone);
// The owner's stored default schedule, if any.
std::optional<Schedule> LoadDefaultSchedule(DbConnection& conn, int64_t owner_id);

// The schedule an event type uses: `schedule_id` when set (it must be the owner's; if it vanished,
// the fallback below), else the owner's stored default, else ImplicitDefaultSchedule(owner).
Schedule ScheduleForEventType(DbConnection& conn, const User& owner, std::optional<int64_t> schedule_id);

}  // namespace rendezvous::bookings
