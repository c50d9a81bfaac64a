// Schedules (working hours, DESIGN §9): the weekly hours and date overrides of a user in one time
// zone, the implicit default of a user who stored none, the UTC instants of working time over a
// range (what slots are laid on), the checks of POST and PATCH bodies and the JSON the API shows.
// Pure logic; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rendezvous/status.hpp"
#include "rendezvous/time.hpp"
#include "rendezvous/user.hpp"

namespace rendezvous::bookings {

using Json = nlohmann::json;

constexpr size_t kMaxScheduleNameChars = 255;
constexpr size_t kMaxAvailabilityEntries = 50;
constexpr size_t kMaxOverrides = 366;
constexpr int kMinutesPerDay = 1440;
constexpr const char* kDefaultScheduleName = "Working hours";

// Hours on some days of every week.
struct WeeklyHours {
  std::vector<unsigned> days;  // ISO weekday 1 = Monday .. 7 = Sunday
  int start_minute = 0;        // minutes after local midnight
  int end_minute = 0;          // minutes after local midnight; may be 1440 ("24:00")
};

// The hours of one date, replacing that date's weekly hours.
struct DateOverride {
  time::CivilDate date;
  int start_minute = 0;
  int end_minute = 0;  // start == end: not available that day
};

struct Schedule {
  std::optional<int64_t> id;  // nullopt: the implicit default
  int64_t owner_id = 0;
  std::string name;
  std::string time_zone;  // IANA name
  bool is_default = false;
  std::vector<WeeklyHours> availability;
  std::vector<DateOverride> overrides;
};

// Monday–Friday 09:00–17:00 in the owner's time zone, id nullopt, isDefault true, name
// "Working hours".
Schedule ImplicitDefaultSchedule(const User& owner);

// [start, end), UTC instants.
struct TimeRange {
  time::Millis start = 0;
  time::Millis end = 0;
  friend bool operator==(const TimeRange& a, const TimeRange& b) {
    return a.start == b.start && a.end == b.end;
  }
};

// The schedule's working time that overlaps [from, to), as UTC ranges, ascending, adjacent or
// overlapping ranges merged (so 00:00–24:00 on consecutive days is one range), not clipped to
// [from, to): a range is whole, so callers can lay a slot grid from its start. A range that runs on
// across midnight is followed at most 7 local days beyond the days [from, to) touches (a schedule
// open around the clock has no start or end otherwise).
// Local times become instants day by day with the schedule's zone (time::Zone::FromLocal), so
// daylight-saving days are right: 09:00–17:00 stays 09:00–17:00 local, 00:00–24:00 on a
// spring-forward day is 23 hours. A local time in the gap of a change to summer time is read as
// FromLocal reads it. An override replaces the weekly hours of its date. An unknown zone is read
// as UTC. Callers bound the range (a few months at most): the work is linear in its days.
std::vector<TimeRange> WorkingIntervals(const Schedule& schedule, time::Millis from, time::Millis to);

// {id, ownerId, name, timeZone, isDefault, availability: [{days: ["Monday", ..], startTime: "HH:MM",
//  endTime: "HH:MM"}], overrides: [{date: "YYYY-MM-DD", startTime, endTime}]}; id null for the
// implicit default; minute 1440 shows as "24:00".
Json ScheduleJson(const Schedule& schedule);

// Validates a POST body into a schedule of `owner` (id nullopt). Defaults: name "Working hours",
// timeZone the owner's, availability Monday–Friday 09:00–17:00, no overrides; isDefault as given
// (false when absent). Unknown members are refused. Errors are FieldInvalid statuses naming the
// member as the client wrote it ("availability[1].startTime").
Result<Schedule> ParseScheduleCreate(const Json& body, const User& owner);
// Applies a PATCH body to `schedule`: members absent are kept; `availability` and `overrides`
// replace the lists whole. isDefault, when given, sets `schedule.is_default` (the caller decides
// what true and false mean). On error `schedule` may be partly changed.
Status ApplySchedulePatch(const Json& body, Schedule& schedule);

// The `availability` and `overrides` arrays as the API writes them, checked (errors name
// "availability[i].member", "overrides[i].member"); also how the table stores them.
Result<std::vector<WeeklyHours>> ParseAvailability(const Json& value);
Result<std::vector<DateOverride>> ParseOverrides(const Json& value);
Json AvailabilityJson(const std::vector<WeeklyHours>& availability);
Json OverridesJson(const std::vector<DateOverride>& overrides);

// "Monday".."Sunday" for 1..7; nullopt for another name.
std::optional<unsigned> ParseWeekday(std::string_view name);
const char* WeekdayName(unsigned iso_weekday);
// "HH:MM", 00:00..23:59, or "24:00" when `allow_end_of_day`; minutes after midnight.
std::optional<int> ParseClock(std::string_view text, bool allow_end_of_day);
std::string FormatClock(int minutes);

}  // namespace rendezvous::bookings
