#include "schedule.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "field_checks.hpp"
#include "rendezvous/text.hpp"

namespace rendezvous::bookings {
namespace {

// How far beyond the days of the asked range a range running across midnight is followed.
constexpr int64_t kFollowDays = 7;

constexpr const char* kWeekdays[] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                     "Friday", "Saturday", "Sunday"};

// Merges ascending-by-start ranges in place where they overlap or touch.
void MergeSorted(std::vector<TimeRange>& ranges) {
  std::vector<TimeRange> out;
  for (const TimeRange& r : ranges) {
    if (!out.empty() && r.start <= out.back().end) {
      out.back().end = std::max(out.back().end, r.end);
    } else {
      out.push_back(r);
    }
  }
  ranges = std::move(out);
}

struct Hours {
  int start_minute;
  int end_minute;
};

Status UnknownScheduleMember(const Json& body) {
  static const std::set<std::string> kMembers = {"name", "timeZone", "isDefault", "availability",
                                                 "overrides"};
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (kMembers.count(it.key())) continue;
    if (it.key() == "id" || it.key() == "ownerId") return FieldInvalid(it.key(), "is read-only");
    return FieldInvalid(it.key(), "is not a member of a schedule");
  }
  return Status::Ok();
}

Status ReadClock(const Json& entry, const std::string& at, const char* member, bool allow_end_of_day,
                 int& out) {
  const std::string field = at + "." + member;
  if (!entry.contains(member)) return FieldInvalid(field, "is required");
  const Json& v = entry[member];
  std::optional<int> minutes;
  if (v.is_string()) minutes = ParseClock(v.get<std::string>(), allow_end_of_day);
  if (!minutes) {
    return FieldInvalid(field, allow_end_of_day ? "must be a time \"HH:MM\" from 00:00 to 24:00"
                                                : "must be a time \"HH:MM\" from 00:00 to 23:59");
  }
  out = *minutes;
  return Status::Ok();
}

Status CheckMembers(const Json& entry, const std::string& at, std::initializer_list<const char*> allowed,
                    const char* what) {
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    if (std::find_if(allowed.begin(), allowed.end(), [&](const char* k) { return it.key() == k; }) ==
        allowed.end()) {
      return FieldInvalid(at + "." + it.key(), std::string("is not a member of ") + what);
    }
  }
  return Status::Ok();
}

Status Apply(const Json& body, Schedule& s) {
  if (!body.is_object()) return FieldInvalid("body", "must be a JSON object");
  if (Status e = UnknownScheduleMember(body); !e.ok()) return e;
  if (body.contains("name")) {
    const Json& v = body["name"];
    if (!v.is_string()) return FieldInvalid("name", "must be a string");
    std::string name(text::Trim(v.get<std::string>()));
    if (std::string problem = CheckText(name, kMaxScheduleNameChars, false); !problem.empty())
      return FieldInvalid("name", problem);
    if (name.empty()) return FieldInvalid("name", "must not be empty");
    s.name = std::move(name);
  }
  if (body.contains("timeZone")) {
    const Json& v = body["timeZone"];
    std::optional<time::Zone> zone;
    if (v.is_string()) zone = time::Zone::Find(v.get<std::string>());
    if (!zone) return FieldInvalid("timeZone", "must be an IANA time zone such as \"Europe/Berlin\"");
    s.time_zone = v.get<std::string>();
  }
  if (body.contains("isDefault")) {
    if (!body["isDefault"].is_boolean()) return FieldInvalid("isDefault", "must be true or false");
    s.is_default = body["isDefault"].get<bool>();
  }
  if (body.contains("availability")) {
    Result<std::vector<WeeklyHours>> a = ParseAvailability(body["availability"]);
    if (!a.ok()) return a.status();
    s.availability = std::move(a).value();
  }
  if (body.contains("overrides")) {
    Result<std::vector<DateOverride>> o = ParseOverrides(body["overrides"]);
    if (!o.ok()) return o.status();
    s.overrides = std::move(o).value();
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<WeeklyHours>> ParseAvailability(const Json& value) {
  if (!value.is_array()) return FieldInvalid("availability", "must be an array");
  if (value.size() > kMaxAvailabilityEntries) {
    return FieldInvalid("availability",
                        "must have at most " + std::to_string(kMaxAvailabilityEntries) + " entries");
  }
  std::vector<WeeklyHours> out;
  for (size_t i = 0; i < value.size(); ++i) {
    const Json& entry = value[i];
    const std::string at = "availability[" + std::to_string(i) + "]";
    if (!entry.is_object()) return FieldInvalid(at, "must be an object");
    if (Status e = CheckMembers(entry, at, {"days", "startTime", "endTime"}, "an availability entry");
        !e.ok())
      return e;
    if (!entry.contains("days")) return FieldInvalid(at + ".days", "is required");
    const Json& days = entry["days"];
    if (!days.is_array() || days.empty()) return FieldInvalid(at + ".days", "must be a non-empty array");
    WeeklyHours hours;
    for (size_t d = 0; d < days.size(); ++d) {
      const std::string day_at = at + ".days[" + std::to_string(d) + "]";
      std::optional<unsigned> day;
      if (days[d].is_string()) day = ParseWeekday(days[d].get<std::string>());
      if (!day) return FieldInvalid(day_at, "must be a day name from Monday to Sunday");
      if (std::find(hours.days.begin(), hours.days.end(), *day) != hours.days.end()) {
        return FieldInvalid(day_at, "repeats " + std::string(WeekdayName(*day)));
      }
      hours.days.push_back(*day);
    }
    if (Status e = ReadClock(entry, at, "startTime", false, hours.start_minute); !e.ok()) return e;
    if (Status e = ReadClock(entry, at, "endTime", true, hours.end_minute); !e.ok()) return e;
    if (hours.start_minute >= hours.end_minute)
      return FieldInvalid(at + ".endTime", "must be after startTime");
    out.push_back(std::move(hours));
  }
  return out;
}

Result<std::vector<DateOverride>> ParseOverrides(const Json& value) {
  if (!value.is_array()) return FieldInvalid("overrides", "must be an array");
  if (value.size() > kMaxOverrides) {
    return FieldInvalid("overrides", "must have at most " + std::to_string(kMaxOverrides) + " entries");
  }
  std::vector<DateOverride> out;
  std::set<int64_t> dates;
  for (size_t i = 0; i < value.size(); ++i) {
    const Json& entry = value[i];
    const std::string at = "overrides[" + std::to_string(i) + "]";
    if (!entry.is_object()) return FieldInvalid(at, "must be an object");
    if (Status e = CheckMembers(entry, at, {"date", "startTime", "endTime"}, "an override"); !e.ok())
      return e;
    if (!entry.contains("date")) return FieldInvalid(at + ".date", "is required");
    std::optional<time::CivilDate> date;
    if (entry["date"].is_string()) date = time::ParseDate(entry["date"].get<std::string>());
    if (!date) return FieldInvalid(at + ".date", "must be a date \"YYYY-MM-DD\"");
    if (!dates.insert(time::DaysFromCivil(*date)).second) {
      return FieldInvalid(at + ".date", "repeats " + time::FormatDate(*date) + "; a date has one override");
    }
    DateOverride o;
    o.date = *date;
    if (Status e = ReadClock(entry, at, "startTime", false, o.start_minute); !e.ok()) return e;
    if (Status e = ReadClock(entry, at, "endTime", true, o.end_minute); !e.ok()) return e;
    if (o.start_minute > o.end_minute) {
      return FieldInvalid(at + ".endTime", "must not be before startTime (equal times: not available)");
    }
    out.push_back(o);
  }
  return out;
}

std::optional<unsigned> ParseWeekday(std::string_view name) {
  for (unsigned i = 0; i < 7; ++i) {
    if (name == kWeekdays[i]) return i + 1;
  }
  return std::nullopt;
}

const char* WeekdayName(unsigned iso_weekday) {
  return iso_weekday >= 1 && iso_weekday <= 7 ? kWeekdays[iso_weekday - 1] : "";
}

std::optional<int> ParseClock(std::string_view t, bool allow_end_of_day) {
  auto digit = [&](size_t i) { return t[i] >= '0' && t[i] <= '9'; };
  if (t.size() != 5 || t[2] != ':' || !digit(0) || !digit(1) || !digit(3) || !digit(4)) return std::nullopt;
  const int h = (t[0] - '0') * 10 + (t[1] - '0');
  const int m = (t[3] - '0') * 10 + (t[4] - '0');
  if (h == 24 && m == 0 && allow_end_of_day) return kMinutesPerDay;
  if (h > 23 || m > 59) return std::nullopt;
  return h * 60 + m;
}

std::string FormatClock(int minutes) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%02d:%02d", minutes / 60, minutes % 60);
  return buf;
}

Schedule ImplicitDefaultSchedule(const User& owner) {
  Schedule s;
  s.owner_id = owner.id;
  s.name = kDefaultScheduleName;
  s.time_zone = owner.time_zone;
  s.is_default = true;
  s.availability.push_back(WeeklyHours{{1, 2, 3, 4, 5}, 9 * 60, 17 * 60});
  return s;
}

std::vector<TimeRange> WorkingIntervals(const Schedule& schedule, time::Millis from, time::Millis to) {
  if (to <= from) return {};
  const time::Zone zone = time::Zone::Find(schedule.time_zone).value_or(time::Zone::Utc());
  std::map<int64_t, std::vector<Hours>> overrides;
  for (const DateOverride& o : schedule.overrides) {
    overrides[time::DaysFromCivil(o.date)].push_back({o.start_minute, o.end_minute});
  }
  const int64_t first = time::DaysFromCivil(zone.DateAt(from)) - kFollowDays;
  const int64_t last = time::DaysFromCivil(zone.DateAt(to - 1)) + kFollowDays;

  std::vector<TimeRange> ranges;
  std::vector<Hours> day_hours;
  for (int64_t day = first; day <= last; ++day) {
    day_hours.clear();
    if (auto it = overrides.find(day); it != overrides.end()) {
      day_hours = it->second;
    } else {
      const unsigned weekday = time::IsoWeekday(time::CivilFromDays(day));
      for (const WeeklyHours& w : schedule.availability) {
        if (std::find(w.days.begin(), w.days.end(), weekday) != w.days.end()) {
          day_hours.push_back({w.start_minute, w.end_minute});
        }
      }
    }
    const time::Millis midnight = day * time::kMillisPerDay;  // local wall clock read as UTC
    for (const Hours& h : day_hours) {
      if (h.start_minute >= h.end_minute) continue;
      const time::Millis start = zone.FromLocal(midnight + h.start_minute * time::kMillisPerMinute);
      const time::Millis end = zone.FromLocal(midnight + h.end_minute * time::kMillisPerMinute);
      if (start < end) ranges.push_back({start, end});
    }
  }
  std::sort(ranges.begin(), ranges.end(), [](const TimeRange& a, const TimeRange& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  });
  MergeSorted(ranges);
  std::erase_if(ranges, [&](const TimeRange& r) { return r.end <= from || r.start >= to; });
  return ranges;
}

Json AvailabilityJson(const std::vector<WeeklyHours>& availability) {
  Json out = Json::array();
  for (const WeeklyHours& w : availability) {
    Json days = Json::array();
    for (unsigned d : w.days) days.push_back(WeekdayName(d));
    out.push_back({{"days", std::move(days)},
                   {"startTime", FormatClock(w.start_minute)},
                   {"endTime", FormatClock(w.end_minute)}});
  }
  return out;
}

Json OverridesJson(const std::vector<DateOverride>& overrides) {
  Json out = Json::array();
  for (const DateOverride& o : overrides) {
    out.push_back({{"date", time::FormatDate(o.date)},
                   {"startTime", FormatClock(o.start_minute)},
                   {"endTime", FormatClock(o.end_minute)}});
  }
  return out;
}

Json ScheduleJson(const Schedule& s) {
  return Json{{"id", s.id ? Json(*s.id) : Json(nullptr)},
              {"ownerId", s.owner_id},
              {"name", s.name},
              {"timeZone", s.time_zone},
              {"isDefault", s.is_default},
              {"availability", AvailabilityJson(s.availability)},
              {"overrides", OverridesJson(s.overrides)}};
}

Result<Schedule> ParseScheduleCreate(const Json& body, const User& owner) {
  Schedule s = ImplicitDefaultSchedule(owner);
  s.is_default = false;
  if (Status e = Apply(body, s); !e.ok()) return e;
  return s;
}

Status ApplySchedulePatch(const Json& body, Schedule& schedule) {
  return Apply(body, schedule);
}

}  // namespace rendezvous::bookings
