#include "schedule_rows.hpp"

#include <string>

namespace rendezvous::bookings {

Schedule ScheduleFromRow(const DbRow& row) {
  Schedule s;
  s.id = row.Int(1);
  s.owner_id = row.Int(2);
  s.name = row.String(3);
  s.time_zone = row.String(4);
  s.is_default = !row.IsNull(5);
  // Stored rows passed the same checks on the way in; a row that no longer parses reads as empty.
  Result<std::vector<WeeklyHours>> availability =
      ParseAvailability(Json::parse(row.String(6), nullptr, false));
  if (availability.ok()) s.availability = std::move(availability).value();
  Result<std::vector<DateOverride>> overrides = ParseOverrides(Json::parse(row.String(7), nullptr, false));
  if (overrides.ok()) s.overrides = std::move(overrides).value();
  return s;
}

std::vector<DbValue> ScheduleValues(const Schedule& s, std::initializer_list<DbValue> tail) {
  std::vector<DbValue> v{s.name, s.time_zone,
                         s.is_default ? std::optional<int64_t>(s.owner_id) : std::nullopt,
                         AvailabilityJson(s.availability).dump(), OverridesJson(s.overrides).dump()};
  v.insert(v.end(), tail.begin(), tail.end());
  return v;
}

std::optional<Schedule> LoadSchedule(DbConnection& conn, int64_t owner_id, int64_t id, ScheduleLock lock) {
  const char* suffix = lock == ScheduleLock::kUpdate  ? " FOR UPDATE"
                       : lock == ScheduleLock::kShare ? " LOCK IN SHARE MODE"
                                                      : "";
  std::optional<DbRow> row = conn.QueryOne(
      std::string("SELECT ") + kScheduleColumns + " FROM schedules WHERE id = ? AND owner_id = ?" + suffix,
      {id, owner_id});
  if (!row) return std::nullopt;
  return ScheduleFromRow(*row);
}

std::optional<Schedule> LoadDefaultSchedule(DbConnection& conn, int64_t owner_id) {
  std::optional<DbRow> row = conn.QueryOne(
      std::string("SELECT ") + kScheduleColumns + " FROM schedules WHERE default_owner_id = ?", {owner_id});
  if (!row) return std::nullopt;
  return ScheduleFromRow(*row);
}

Schedule ScheduleForEventType(DbConnection& conn, const User& owner, std::optional<int64_t> schedule_id) {
  if (schedule_id) {
    if (std::optional<Schedule> named = LoadSchedule(conn, owner.id, *schedule_id)) return *named;
  }
  if (std::optional<Schedule> stored = LoadDefaultSchedule(conn, owner.id)) return *stored;
  return ImplicitDefaultSchedule(owner);
}

}  // namespace rendezvous::bookings
