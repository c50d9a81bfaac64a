// Schedules: the implicit default, working intervals over daylight-saving days, overrides and
// merging across midnight, the JSON shape of DESIGN §9 and the checks of POST and PATCH bodies.
#include <gtest/gtest.h>

#include "schedule.hpp"

namespace rendezvous::bookings {
namespace {

time::Millis At(const char* iso) {
  std::optional<time::Millis> t = time::ParseIso(iso);
  EXPECT_TRUE(t.has_value()) << iso;
  return t.value_or(0);
}

TimeRange Range(const char* start, const char* end) {
  return {At(start), At(end)};
}

std::string Show(const std::vector<TimeRange>& ranges) {
  std::string out;
  for (const TimeRange& r : ranges)
    out += "[" + time::FormatIso(r.start) + ", " + time::FormatIso(r.end) + ") ";
  return out;
}

Schedule Every(const std::string& zone, int start_minute, int end_minute) {
  Schedule s;
  s.name = "test";
  s.time_zone = zone;
  s.availability.push_back({{1, 2, 3, 4, 5, 6, 7}, start_minute, end_minute});
  return s;
}

// The working intervals of `schedule` over one local date of its zone.
std::vector<TimeRange> OnDate(const Schedule& schedule, const char* date) {
  const time::Zone zone = *time::Zone::Find(schedule.time_zone);
  const time::CivilDate d = *time::ParseDate(date);
  const time::Millis from = zone.StartOfDay(d);
  const time::Millis to = zone.StartOfDay(time::CivilFromDays(time::DaysFromCivil(d) + 1));
  return WorkingIntervals(schedule, from, to);
}

TEST(BookingsSchedule, ImplicitDefaultIsWeekdaysNineToFiveInTheOwnersZone) {
  User owner;
  owner.id = 42;
  owner.time_zone = "Europe/Berlin";
  Schedule s = ImplicitDefaultSchedule(owner);
  EXPECT_FALSE(s.id.has_value());
  EXPECT_EQ(s.owner_id, 42);
  EXPECT_EQ(s.name, "Working hours");
  EXPECT_EQ(s.time_zone, "Europe/Berlin");
  EXPECT_TRUE(s.is_default);
  ASSERT_EQ(s.availability.size(), 1u);
  EXPECT_EQ(s.availability[0].days, (std::vector<unsigned>{1, 2, 3, 4, 5}));
  EXPECT_EQ(s.availability[0].start_minute, 540);
  EXPECT_EQ(s.availability[0].end_minute, 1020);
  EXPECT_TRUE(s.overrides.empty());

  EXPECT_EQ(ScheduleJson(s), Json::parse(R"({"id": null, "ownerId": 42, "name": "Working hours",
    "timeZone": "Europe/Berlin", "isDefault": true,
    "availability": [{"days": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
                      "startTime": "09:00", "endTime": "17:00"}], "overrides": []})"));

  // 2026-11-23 is a Monday: five working days in the week, 09:00-17:00 CET = 08:00-16:00 UTC.
  std::vector<TimeRange> week = WorkingIntervals(s, At("2026-11-23T00:00:00Z"), At("2026-11-30T00:00:00Z"));
  ASSERT_EQ(week.size(), 5u) << Show(week);
  EXPECT_EQ(week[0], Range("2026-11-23T08:00:00Z", "2026-11-23T16:00:00Z"));
  EXPECT_EQ(week[4], Range("2026-11-27T08:00:00Z", "2026-11-27T16:00:00Z"));
}

TEST(BookingsSchedule, BerlinSpringForward) {
  // 2026-03-29: 02:00 CET becomes 03:00 CEST.
  EXPECT_EQ(OnDate(Every("Europe/Berlin", 540, 1020), "2026-03-28"),
            (std::vector<TimeRange>{Range("2026-03-28T08:00:00Z", "2026-03-28T16:00:00Z")}));
  EXPECT_EQ(OnDate(Every("Europe/Berlin", 540, 1020), "2026-03-29"),
            (std::vector<TimeRange>{Range("2026-03-29T07:00:00Z", "2026-03-29T15:00:00Z")}));
  // Around the clock: one merged range through the week before and after, the day itself 23 hours.
  Schedule all_day = Every("Europe/Berlin", 0, 1440);
  all_day.overrides.push_back({*time::ParseDate("2026-03-28"), 0, 0});
  all_day.overrides.push_back({*time::ParseDate("2026-03-30"), 0, 0});
  EXPECT_EQ(OnDate(all_day, "2026-03-29"),
            (std::vector<TimeRange>{Range("2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z")}));
}

TEST(BookingsSchedule, BerlinFallBack) {
  // 2026-10-25: 03:00 CEST becomes 02:00 CET.
  EXPECT_EQ(OnDate(Every("Europe/Berlin", 540, 1020), "2026-10-24"),
            (std::vector<TimeRange>{Range("2026-10-24T07:00:00Z", "2026-10-24T15:00:00Z")}));
  EXPECT_EQ(OnDate(Every("Europe/Berlin", 540, 1020), "2026-10-25"),
            (std::vector<TimeRange>{Range("2026-10-25T08:00:00Z", "2026-10-25T16:00:00Z")}));
  Schedule all_day = Every("Europe/Berlin", 0, 1440);
  all_day.overrides.push_back({*time::ParseDate("2026-10-24"), 0, 0});
  all_day.overrides.push_back({*time::ParseDate("2026-10-26"), 0, 0});
  EXPECT_EQ(OnDate(all_day, "2026-10-25"),
            (std::vector<TimeRange>{Range("2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z")}));  // 25 hours
}

TEST(BookingsSchedule, NewYorkSpringForward) {
  // 2026-03-08: 02:00 EST becomes 03:00 EDT.
  EXPECT_EQ(OnDate(Every("America/New_York", 540, 1020), "2026-03-07"),
            (std::vector<TimeRange>{Range("2026-03-07T14:00:00Z", "2026-03-07T22:00:00Z")}));
  EXPECT_EQ(OnDate(Every("America/New_York", 540, 1020), "2026-03-08"),
            (std::vector<TimeRange>{Range("2026-03-08T13:00:00Z", "2026-03-08T21:00:00Z")}));
  Schedule all_day = Every("America/New_York", 0, 1440);
  all_day.overrides.push_back({*time::ParseDate("2026-03-07"), 0, 0});
  all_day.overrides.push_back({*time::ParseDate("2026-03-09"), 0, 0});
  EXPECT_EQ(OnDate(all_day, "2026-03-08"),
            (std::vector<TimeRange>{Range("2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z")}));  // 23 hours
}

TEST(BookingsSchedule, NewYorkFallBack) {
  // 2026-11-01: 02:00 EDT becomes 01:00 EST.
  EXPECT_EQ(OnDate(Every("America/New_York", 540, 1020), "2026-10-31"),
            (std::vector<TimeRange>{Range("2026-10-31T13:00:00Z", "2026-10-31T21:00:00Z")}));
  EXPECT_EQ(OnDate(Every("America/New_York", 540, 1020), "2026-11-01"),
            (std::vector<TimeRange>{Range("2026-11-01T14:00:00Z", "2026-11-01T22:00:00Z")}));
  Schedule all_day = Every("America/New_York", 0, 1440);
  all_day.overrides.push_back({*time::ParseDate("2026-10-31"), 0, 0});
  all_day.overrides.push_back({*time::ParseDate("2026-11-02"), 0, 0});
  EXPECT_EQ(OnDate(all_day, "2026-11-01"),
            (std::vector<TimeRange>{Range("2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z")}));  // 25 hours
}

TEST(BookingsSchedule, AroundTheClockMergesAcrossMidnightAndDaylightSaving) {
  // Saturday to Monday around the Berlin spring-forward Sunday: one range of 24 + 23 + 24 hours.
  Schedule s;
  s.time_zone = "Europe/Berlin";
  s.availability.push_back({{6, 7}, 0, 1440});
  s.availability.push_back({{1}, 0, 720});
  std::vector<TimeRange> r = WorkingIntervals(s, At("2026-03-29T12:00:00Z"), At("2026-03-29T13:00:00Z"));
  EXPECT_EQ(r, (std::vector<TimeRange>{Range("2026-03-27T23:00:00Z", "2026-03-30T10:00:00Z")})) << Show(r);
  EXPECT_EQ(r[0].end - r[0].start, (24 + 23 + 12) * 60 * time::kMillisPerMinute);
}

TEST(BookingsSchedule, LateAndEarlyHoursMergeAcrossMidnight) {
  // 18:00-24:00 and 00:00-02:00 every day in UTC: one range from 18:00 to 02:00 the next day.
  Schedule s;
  s.time_zone = "UTC";
  s.availability.push_back({{1, 2, 3, 4, 5, 6, 7}, 1080, 1440});
  s.availability.push_back({{1, 2, 3, 4, 5, 6, 7}, 0, 120});
  std::vector<TimeRange> r = WorkingIntervals(s, At("2026-06-10T00:00:00Z"), At("2026-06-12T00:00:00Z"));
  EXPECT_EQ(r, (std::vector<TimeRange>{Range("2026-06-09T18:00:00Z", "2026-06-10T02:00:00Z"),
                                       Range("2026-06-10T18:00:00Z", "2026-06-11T02:00:00Z"),
                                       Range("2026-06-11T18:00:00Z", "2026-06-12T02:00:00Z")}))
      << Show(r);
}

TEST(BookingsSchedule, RangesAreWholeNotClipped) {
  Schedule s = Every("UTC", 540, 1020);
  std::vector<TimeRange> r = WorkingIntervals(s, At("2026-06-10T12:00:00Z"), At("2026-06-10T12:30:00Z"));
  EXPECT_EQ(r, (std::vector<TimeRange>{Range("2026-06-10T09:00:00Z", "2026-06-10T17:00:00Z")}));
  // A range touching [from, to) only at an end does not overlap it.
  EXPECT_TRUE(WorkingIntervals(s, At("2026-06-10T17:00:00Z"), At("2026-06-11T09:00:00Z")).empty());
  EXPECT_TRUE(WorkingIntervals(s, At("2026-06-10T12:00:00Z"), At("2026-06-10T12:00:00Z")).empty());
}

TEST(BookingsSchedule, OverlappingWeeklyEntriesMerge) {
  Schedule s;
  s.time_zone = "UTC";
  s.availability.push_back({{3}, 540, 720});
  s.availability.push_back({{3}, 660, 1020});
  s.availability.push_back({{3}, 1080, 1140});
  EXPECT_EQ(OnDate(s, "2026-06-10"),
            (std::vector<TimeRange>{Range("2026-06-10T09:00:00Z", "2026-06-10T17:00:00Z"),
                                    Range("2026-06-10T18:00:00Z", "2026-06-10T19:00:00Z")}));
}

TEST(BookingsSchedule, OverridesReplaceTheHoursOfTheirDate) {
  Schedule s = Every("America/New_York", 540, 1020);
  s.overrides.push_back({*time::ParseDate("2026-06-10"), 780, 840});  // other hours: 13:00-14:00
  s.overrides.push_back({*time::ParseDate("2026-06-11"), 600, 600});  // not available
  s.overrides.push_back({*time::ParseDate("2026-06-13"), 0, 1440});   // the whole day
  std::vector<TimeRange> r = WorkingIntervals(s, At("2026-06-10T04:00:00Z"), At("2026-06-14T04:00:00Z"));
  EXPECT_EQ(r, (std::vector<TimeRange>{Range("2026-06-10T17:00:00Z", "2026-06-10T18:00:00Z"),
                                       Range("2026-06-12T13:00:00Z", "2026-06-12T21:00:00Z"),
                                       Range("2026-06-13T04:00:00Z", "2026-06-14T04:00:00Z")}))
      << Show(r);
  // An override on a day without weekly hours makes it a working day.
  Schedule weekdays = s;
  weekdays.availability[0].days = {1, 2, 3, 4, 5};
  weekdays.overrides = {{*time::ParseDate("2026-06-14"), 600, 660}};  // a Sunday
  EXPECT_EQ(OnDate(weekdays, "2026-06-14"),
            (std::vector<TimeRange>{Range("2026-06-14T14:00:00Z", "2026-06-14T15:00:00Z")}));
}

TEST(BookingsSchedule, AnUnknownZoneIsReadAsUtc) {
  Schedule s = Every("Not/AZone", 540, 1020);
  EXPECT_EQ(WorkingIntervals(s, At("2026-06-10T00:00:00Z"), At("2026-06-11T00:00:00Z")),
            (std::vector<TimeRange>{Range("2026-06-10T09:00:00Z", "2026-06-10T17:00:00Z")}));
}

TEST(BookingsSchedule, JsonShowsEveryMember) {
  Schedule s;
  s.id = 7;
  s.owner_id = 3;
  s.name = "Late";
  s.time_zone = "UTC";
  s.availability.push_back({{6, 7}, 0, 1440});
  s.overrides.push_back({*time::ParseDate("2026-12-24"), 0, 0});
  s.overrides.push_back({*time::ParseDate("2026-12-31"), 605, 1439});
  EXPECT_EQ(ScheduleJson(s), Json::parse(R"({"id": 7, "ownerId": 3, "name": "Late", "timeZone": "UTC",
    "isDefault": false, "availability": [{"days": ["Saturday", "Sunday"], "startTime": "00:00", "endTime": "24:00"}],
    "overrides": [{"date": "2026-12-24", "startTime": "00:00", "endTime": "00:00"},
                  {"date": "2026-12-31", "startTime": "10:05", "endTime": "23:59"}]})"));
}

TEST(BookingsSchedule, ClockAndWeekdayText) {
  EXPECT_EQ(ParseClock("00:00", false), 0);
  EXPECT_EQ(ParseClock("23:59", false), 1439);
  EXPECT_EQ(ParseClock("24:00", true), 1440);
  for (const char* bad : {"24:00", "24:01", "9:00", "09:60", "0900", "09:00:00", "ab:cd", ""}) {
    EXPECT_FALSE(ParseClock(bad, false).has_value()) << bad;
  }
  EXPECT_FALSE(ParseClock("24:01", true).has_value());
  EXPECT_EQ(FormatClock(1440), "24:00");
  EXPECT_EQ(ParseWeekday("Sunday"), 7u);
  EXPECT_FALSE(ParseWeekday("monday").has_value());
  EXPECT_STREQ(WeekdayName(1), "Monday");
}

User Owner() {
  User u;
  u.id = 3;
  u.time_zone = "America/New_York";
  return u;
}

std::string FieldOf(const char* body) {
  Result<Schedule> s = ParseScheduleCreate(Json::parse(body), Owner());
  return s.ok() ? "" : s.status().field();
}

TEST(BookingsSchedule, CreateDefaults) {
  Result<Schedule> s = ParseScheduleCreate(Json::object(), Owner());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->name, "Working hours");
  EXPECT_EQ(s->time_zone, "America/New_York");
  EXPECT_FALSE(s->is_default);
  EXPECT_FALSE(s->id.has_value());
  EXPECT_EQ(s->owner_id, 3);
  EXPECT_EQ(AvailabilityJson(s->availability),
            ScheduleJson(ImplicitDefaultSchedule(Owner()))["availability"]);
  EXPECT_TRUE(s->overrides.empty());

  Result<Schedule> full = ParseScheduleCreate(Json::parse(R"({"name": " Late ", "timeZone": "Europe/Berlin",
    "isDefault": true, "availability": [{"days": ["Sunday"], "startTime": "18:00", "endTime": "24:00"}],
    "overrides": [{"date": "2026-12-24", "startTime": "10:00", "endTime": "10:00"}]})"),
                                              Owner());
  ASSERT_TRUE(full.ok()) << full.status().message();
  EXPECT_EQ(full->name, "Late");
  EXPECT_EQ(full->time_zone, "Europe/Berlin");
  EXPECT_TRUE(full->is_default);
  ASSERT_EQ(full->availability.size(), 1u);
  EXPECT_EQ(full->availability[0].days, std::vector<unsigned>{7});
  EXPECT_EQ(full->availability[0].end_minute, 1440);
  ASSERT_EQ(full->overrides.size(), 1u);
  EXPECT_EQ(full->overrides[0].start_minute, full->overrides[0].end_minute);
}

TEST(BookingsSchedule, CreateRefusesBadMembersNamingThem) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"name": ""})", "name"},
      {R"({"name": "   "})", "name"},
      {R"({"name": 5})", "name"},
      {Json{{"name", std::string(256, 'n')}}.dump(), "name"},
      {R"({"timeZone": "Mars/Olympus"})", "timeZone"},
      {R"({"timeZone": null})", "timeZone"},
      {R"({"isDefault": "yes"})", "isDefault"},
      {R"({"id": 4})", "id"},
      {R"({"ownerId": 4})", "ownerId"},
      {R"({"colour": "red"})", "colour"},
      {R"({"availability": {}})", "availability"},
      {R"({"availability": [5]})", "availability[0]"},
      {R"({"availability": [{"startTime": "09:00", "endTime": "17:00"}]})", "availability[0].days"},
      {R"({"availability": [{"days": [], "startTime": "09:00", "endTime": "17:00"}]})",
       "availability[0].days"},
      {R"({"availability": [{"days": ["Monday", "Funday"], "startTime": "09:00", "endTime": "17:00"}]})",
       "availability[0].days[1]"},
      {R"({"availability": [{"days": ["Monday", "Monday"], "startTime": "09:00", "endTime": "17:00"}]})",
       "availability[0].days[1]"},
      {R"({"availability": [{"days": ["Monday"], "startTime": "09:00", "endTime": "17:00"},
                            {"days": ["Monday"], "startTime": "9:00", "endTime": "17:00"}]})",
       "availability[1].startTime"},
      {R"({"availability": [{"days": ["Monday"], "startTime": "24:00", "endTime": "24:00"}]})",
       "availability[0].startTime"},
      {R"({"availability": [{"days": ["Monday"], "startTime": "09:00", "endTime": "24:30"}]})",
       "availability[0].endTime"},
      {R"({"availability": [{"days": ["Monday"], "startTime": "09:00"}]})", "availability[0].endTime"},
      {R"({"availability": [{"days": ["Monday"], "startTime": "17:00", "endTime": "09:00"}]})",
       "availability[0].endTime"},
      {R"({"availability": [{"days": ["Monday"], "startTime": "09:00", "endTime": "09:00"}]})",
       "availability[0].endTime"},
      {R"({"availability": [{"days": ["Monday"], "startTime": "09:00", "endTime": "10:00", "x": 1}]})",
       "availability[0].x"},
      {R"({"overrides": [{"date": "2026-02-30", "startTime": "09:00", "endTime": "10:00"}]})",
       "overrides[0].date"},
      {R"({"overrides": [{"startTime": "09:00", "endTime": "10:00"}]})", "overrides[0].date"},
      {R"({"overrides": [{"date": "2026-02-03", "startTime": "09:00", "endTime": "10:00"},
                         {"date": "2026-02-03", "startTime": "11:00", "endTime": "12:00"}]})",
       "overrides[1].date"},
      {R"({"overrides": [{"date": "2026-02-03", "startTime": "10:00", "endTime": "09:59"}]})",
       "overrides[0].endTime"},
      {R"({"overrides": [{"date": "2026-02-03", "startTime": "10:00", "endTime": "10:00", "y": 2}]})",
       "overrides[0].y"},
  };
  for (const auto& [body, field] : cases) EXPECT_EQ(FieldOf(body.c_str()), field) << body;

  Json many = {{"availability", Json::array()}};
  for (int i = 0; i < 51; ++i) {
    many["availability"].push_back({{"days", {"Monday"}}, {"startTime", "09:00"}, {"endTime", "10:00"}});
  }
  EXPECT_EQ(FieldOf(many.dump().c_str()), "availability");
  many["availability"].erase(50);
  EXPECT_EQ(FieldOf(many.dump().c_str()), "");
  Json dates = {{"overrides", Json::array()}};
  for (int i = 0; i < 367; ++i) {
    dates["overrides"].push_back({{"date", time::FormatDate(time::CivilFromDays(20000 + i))},
                                  {"startTime", "09:00"},
                                  {"endTime", "10:00"}});
  }
  EXPECT_EQ(FieldOf(dates.dump().c_str()), "overrides");
  dates["overrides"].erase(366);
  EXPECT_EQ(FieldOf(dates.dump().c_str()), "");
  EXPECT_EQ(ParseScheduleCreate(Json::array(), Owner()).status().field(), "body");
}

TEST(BookingsSchedule, PatchKeepsWhatIsAbsent) {
  Schedule s = *ParseScheduleCreate(Json::parse(R"({"name": "A", "overrides": [
      {"date": "2026-12-24", "startTime": "00:00", "endTime": "00:00"}]})"),
                                    Owner());
  ASSERT_TRUE(ApplySchedulePatch(Json::parse(R"({"timeZone": "UTC"})"), s).ok());
  EXPECT_EQ(s.name, "A");
  EXPECT_EQ(s.time_zone, "UTC");
  EXPECT_EQ(s.overrides.size(), 1u);
  EXPECT_FALSE(s.is_default);
  ASSERT_TRUE(ApplySchedulePatch(Json::parse(R"({"overrides": [], "isDefault": true})"), s).ok());
  EXPECT_TRUE(s.overrides.empty());
  EXPECT_TRUE(s.is_default);
  EXPECT_EQ(ApplySchedulePatch(Json::parse(R"({"availability": null})"), s).field(), "availability");
}

}  // namespace
}  // namespace rendezvous::bookings
