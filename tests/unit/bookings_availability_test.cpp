// Free times: the slot grid over working ranges (anchored at each range's start and each local
// midnight, across daylight-saving days), the buffer rule between bookings, the minimum notice,
// the 400/409 of a start that cannot be booked, slots grouped by the viewer's dates, the slots
// query, and the periods of booking limits (the host's days, weeks from its weekStart, months and
// years, daylight-saving days included).
#include "availability.hpp"

#include <gtest/gtest.h>

#include <cctype>

#include "booking_limits.hpp"
#include "public_requests.hpp"

namespace rendezvous::bookings {
namespace {

using time::Millis;

Millis T(const char* iso) {
  return *time::ParseIso(iso);
}
time::Zone Z(const char* name) {
  return *time::Zone::Find(name);
}
// A working range from local midnight of `first` to local midnight after `last` in `zone`.
TimeRange Days(const time::Zone& zone, const char* first, const char* last) {
  const time::CivilDate end = time::CivilFromDays(time::DaysFromCivil(*time::ParseDate(last)) + 1);
  return {zone.StartOfDay(*time::ParseDate(first)), zone.StartOfDay(end)};
}
SlotRules Rules(int length, int interval = 0, int before = 0, int after = 0, int notice = 0) {
  return SlotRules{length, interval ? interval : length, before, after, notice};
}

TEST(BookingsSlotGrid, StartsEveryIntervalInsideTheRange) {
  const std::vector<TimeRange> day{{T("2027-03-01T09:00:00Z"), T("2027-03-01T17:00:00Z")}};
  std::vector<Millis> grid = SlotGrid(day, time::Zone::Utc(), T("2027-03-01T00:00:00Z"), T("2027-03-02T00:00:00Z"),
                                      Rules(30));
  ASSERT_EQ(grid.size(), 16u);
  EXPECT_EQ(grid.front(), T("2027-03-01T09:00:00Z"));
  EXPECT_EQ(grid.back(), T("2027-03-01T16:30:00Z"));
  // A 45-minute slot every 20 minutes: the last one ends by 17:00.
  grid = SlotGrid(day, time::Zone::Utc(), T("2027-03-01T00:00:00Z"), T("2027-03-02T00:00:00Z"), Rules(45, 20));
  EXPECT_EQ(grid.back(), T("2027-03-01T16:00:00Z"));
  // The query's start cuts the grid but does not move it.
  grid = SlotGrid(day, time::Zone::Utc(), T("2027-03-01T10:05:00Z"), T("2027-03-01T11:00:00Z"), Rules(30));
  EXPECT_EQ(grid, (std::vector<Millis>{T("2027-03-01T10:30:00Z")}));
}

TEST(BookingsSlotGrid, EachLocalMidnightRestartsTheGrid) {
  // Two whole days as one range; 45 minutes does not divide a day, yet the second day starts at
  // 00:00 again, and a slot may run over midnight.
  const std::vector<TimeRange> days{Days(time::Zone::Utc(), "2027-03-01", "2027-03-02")};
  std::vector<Millis> grid = SlotGrid(days, time::Zone::Utc(), days[0].start, days[0].end, Rules(60, 45));
  EXPECT_EQ(std::count(grid.begin(), grid.end(), T("2027-03-02T00:00:00Z")), 1);
  EXPECT_EQ(std::count(grid.begin(), grid.end(), T("2027-03-01T23:15:00Z")), 1);  // ends 00:15 the next day
  // The grid of a start does not depend on where a query begins.
  std::vector<Millis> late = SlotGrid(days, time::Zone::Utc(), T("2027-03-02T05:00:00Z"), days[0].end, Rules(60, 45));
  EXPECT_EQ(late.front(), T("2027-03-02T05:15:00Z"));
}

struct DstCase {
  const char* zone;
  const char* date;
  size_t hourly_slots;  // a whole day of one-hour slots
};

class BookingsDaylightSaving : public ::testing::TestWithParam<DstCase> {};

TEST_P(BookingsDaylightSaving, AWholeDayHasItsRealNumberOfHours) {
  const DstCase& c = GetParam();
  const time::Zone zone = Z(c.zone);
  const std::vector<TimeRange> day{Days(zone, c.date, c.date)};
  std::vector<Millis> grid = SlotGrid(day, zone, day[0].start, day[0].end, Rules(60));
  EXPECT_EQ(grid.size(), c.hourly_slots);
  // Seen from the zone itself every slot is on that date; the last one starts at 23:00 local.
  Json by_date = SlotsByDate(grid, zone);
  ASSERT_EQ(by_date.size(), 1u);
  EXPECT_EQ(by_date.begin().key(), c.date);
  EXPECT_EQ(zone.ToLocal(grid.back()) % time::kMillisPerDay, 23 * 60 * time::kMillisPerMinute);
}

INSTANTIATE_TEST_SUITE_P(Zones, BookingsDaylightSaving,
                         ::testing::Values(DstCase{"Europe/Berlin", "2027-03-28", 23},
                                           DstCase{"Europe/Berlin", "2027-10-31", 25},
                                           DstCase{"America/New_York", "2027-03-14", 23},
                                           DstCase{"America/New_York", "2027-11-07", 25},
                                           DstCase{"UTC", "2027-03-28", 24}),
                         [](const ::testing::TestParamInfo<DstCase>& info) {
                           std::string name = std::string(info.param.zone) + "_" + info.param.date;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(BookingsBusy, TheGapIsTheLargerOfTheTwoBuffers) {
  // A booking 10:00-10:30 with 15 minutes after it.
  const std::vector<BusyBlock> busy{{T("2027-03-01T10:00:00Z"), T("2027-03-01T10:30:00Z"), 0, 15}};
  EXPECT_TRUE(Conflicts(T("2027-03-01T10:40:00Z"), Rules(30), busy));
  EXPECT_FALSE(Conflicts(T("2027-03-01T10:45:00Z"), Rules(30), busy));
  // The new one's 20-minute before-buffer is the larger: 10:50 is the first free start.
  EXPECT_TRUE(Conflicts(T("2027-03-01T10:45:00Z"), Rules(30, 5, 20), busy));
  EXPECT_FALSE(Conflicts(T("2027-03-01T10:50:00Z"), Rules(30, 5, 20), busy));
  // Before it: a 30-minute slot ending at 10:00 fits, unless it wants 10 minutes after itself.
  EXPECT_FALSE(Conflicts(T("2027-03-01T09:30:00Z"), Rules(30), busy));
  EXPECT_TRUE(Conflicts(T("2027-03-01T09:30:00Z"), Rules(30, 5, 0, 10), busy));
  EXPECT_TRUE(Conflicts(T("2027-03-01T09:45:00Z"), Rules(30), busy));
  EXPECT_TRUE(Conflicts(T("2027-03-01T10:00:00Z"), Rules(30), busy));
}

TEST(BookingsBusy, FreeSlotsLeaveOutBusyTimeAndTheNotice) {
  const std::vector<TimeRange> day{{T("2027-03-01T09:00:00Z"), T("2027-03-01T12:00:00Z")}};
  const std::vector<BusyBlock> busy{{T("2027-03-01T10:00:00Z"), T("2027-03-01T10:30:00Z"), 0, 0},
                                    {T("2027-03-01T11:10:00Z"), T("2027-03-01T11:20:00Z"), 0, 0}};
  const Millis now = T("2027-03-01T08:00:00Z");
  std::vector<Millis> free =
      FreeSlots(day, time::Zone::Utc(), day[0].start, day[0].end, now, Rules(30), busy);
  EXPECT_EQ(free, (std::vector<Millis>{T("2027-03-01T09:00:00Z"), T("2027-03-01T09:30:00Z"),
                                       T("2027-03-01T10:30:00Z"), T("2027-03-01T11:30:00Z")}));
  // Notice of two hours from 08:00: nothing before 10:00.
  free = FreeSlots(day, time::Zone::Utc(), day[0].start, day[0].end, now, Rules(30, 0, 0, 0, 120), {});
  EXPECT_EQ(free.front(), T("2027-03-01T10:00:00Z"));
  // Many overlapping blocks (merged) still answer the same as checking each start.
  std::vector<BusyBlock> many;
  for (int i = 0; i < 50; ++i) {
    const Millis s = T("2027-03-01T09:00:00Z") + (i * 7 % 170) * time::kMillisPerMinute;
    many.push_back({s, s + 5 * time::kMillisPerMinute, i % 3, i % 4});
  }
  const SlotRules r = Rules(10, 5, 3, 2);
  free = FreeSlots(day, time::Zone::Utc(), day[0].start, day[0].end, now, r, many);
  for (Millis s : SlotGrid(day, time::Zone::Utc(), day[0].start, day[0].end, r)) {
    EXPECT_EQ(std::count(free.begin(), free.end(), s) == 1, !Conflicts(s, r, many)) << time::FormatIso(s);
  }
}

TEST(BookingsBusy, CheckBookableSaysWhy) {
  const std::vector<TimeRange> day{{T("2027-03-01T09:00:00Z"), T("2027-03-01T17:00:00Z")}};
  const std::vector<BusyBlock> busy{{T("2027-03-01T10:00:00Z"), T("2027-03-01T10:30:00Z"), 0, 0}};
  const Millis now = T("2027-03-01T08:00:00Z");
  const time::Zone utc = time::Zone::Utc();
  EXPECT_TRUE(CheckBookable(day, utc, T("2027-03-01T09:00:00Z"), now, Rules(30), busy).ok());
  Status past = CheckBookable(day, utc, T("2027-03-01T07:00:00Z"), now, Rules(30), busy);
  EXPECT_EQ(past.code(), ErrorCode::kInvalid);
  EXPECT_EQ(past.field(), "start");
  EXPECT_EQ(CheckBookable(day, utc, T("2027-03-01T09:10:00Z"), now, Rules(30), busy).field(), "start");
  EXPECT_EQ(CheckBookable(day, utc, T("2027-03-01T17:00:00Z"), now, Rules(30), busy).field(), "start");
  Status taken = CheckBookable(day, utc, T("2027-03-01T10:00:00Z"), now, Rules(30), busy);
  EXPECT_EQ(taken.code(), ErrorCode::kConflict);
  EXPECT_EQ(taken.reason(), "slot_unavailable");
  Status soon = CheckBookable(day, utc, T("2027-03-01T09:00:00Z"), now, Rules(30, 0, 0, 0, 90), busy);
  EXPECT_EQ(soon.code(), ErrorCode::kConflict);
  EXPECT_NE(soon.message().find("notice"), std::string::npos);
}

TEST(BookingsSlotsByDate, DatesAreTheViewersDates) {
  const std::vector<Millis> starts{T("2027-03-01T22:30:00Z"), T("2027-03-01T23:30:00Z")};
  Json utc = SlotsByDate(starts, time::Zone::Utc());
  EXPECT_EQ(utc["2027-03-01"].size(), 2u);
  Json berlin = SlotsByDate(starts, Z("Europe/Berlin"));
  EXPECT_EQ(berlin["2027-03-01"], Json::parse(R"([{"start":"2027-03-01T22:30:00.000Z"}])"));
  EXPECT_EQ(berlin["2027-03-02"], Json::parse(R"([{"start":"2027-03-01T23:30:00.000Z"}])"));
}

TEST(BookingsSlotsQuery, BareDatesAreWholeDaysInTheZone) {
  Result<SlotsQuery> q = ParseSlotsQuery(
      {{"eventTypeId", "7"}, {"start", "2027-03-28"}, {"end", "2027-03-28"}, {"timeZone", "Europe/Berlin"}});
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->from, T("2027-03-27T23:00:00Z"));
  EXPECT_EQ(q->to, T("2027-03-28T22:00:00Z"));  // 23 hours: the clocks went forward
  // A "+" of an offset that arrived as a space is read back.
  q = ParseSlotsQuery({{"eventTypeId", "7"}, {"start", "2027-03-28T10:00:00 02:00"}, {"end", "2027-03-29"}});
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->from, T("2027-03-28T08:00:00Z"));
  EXPECT_EQ(ParseSlotsQuery({{"eventTypeId", "7"}, {"eventTypeId", "8"}, {"start", "2027-03-28"}, {"end", "2027-03-29"}})
                .status()
                .field(),
            "eventTypeId");
}

TEST(BookingsLimits, PeriodsAreTheHostsDaysWeeksMonthsAndYears) {
  const HostCalendar berlin = HostCalendarOf("Europe/Berlin", "Sunday");
  // 2026-03-29 is a Sunday, the day Berlin moves to summer time (23 hours long).
  const Millis t = T("2026-03-29T12:00:00Z");
  EXPECT_EQ(PeriodOf(LimitPeriod::kDay, t, berlin), (TimeRange{T("2026-03-28T23:00:00Z"), T("2026-03-29T22:00:00Z")}));
  EXPECT_EQ(PeriodOf(LimitPeriod::kWeek, t, berlin), (TimeRange{T("2026-03-28T23:00:00Z"), T("2026-04-04T22:00:00Z")}));
  EXPECT_EQ(PeriodOf(LimitPeriod::kMonth, t, berlin), (TimeRange{T("2026-02-28T23:00:00Z"), T("2026-03-31T22:00:00Z")}));
  EXPECT_EQ(PeriodOf(LimitPeriod::kYear, t, berlin), (TimeRange{T("2025-12-31T23:00:00Z"), T("2026-12-31T23:00:00Z")}));
  // Weeks from Monday (and from an unknown weekStart); December's month ends at the new year.
  const HostCalendar utc = HostCalendarOf("UTC", "Monday");
  EXPECT_EQ(PeriodOf(LimitPeriod::kWeek, t, utc), (TimeRange{T("2026-03-23T00:00:00Z"), T("2026-03-30T00:00:00Z")}));
  EXPECT_EQ(PeriodOf(LimitPeriod::kWeek, t, HostCalendarOf("Nowhere/Else", "Someday")),
            PeriodOf(LimitPeriod::kWeek, t, utc));
  EXPECT_EQ(PeriodOf(LimitPeriod::kMonth, T("2026-12-31T23:59:00Z"), utc),
            (TimeRange{T("2026-12-01T00:00:00Z"), T("2027-01-01T00:00:00Z")}));
}

TEST(BookingsLimits, AFullPeriodRefusesAndDropsItsStarts) {
  const HostCalendar utc = HostCalendarOf("UTC", "Monday");
  BookingLimits limits;
  limits.day = 2;
  limits.week = 3;
  // Monday 2026-03-23: two bookings, so the day is full; one more on Tuesday fills the week.
  const std::vector<Millis> booked = {T("2026-03-23T09:00:00Z"), T("2026-03-23T10:00:00Z")};
  const Status full = CheckBookingLimits(limits, T("2026-03-23T15:00:00Z"), booked, utc);
  EXPECT_EQ(full.code(), ErrorCode::kConflict);
  EXPECT_EQ(full.reason(), "booking_limit_reached");
  EXPECT_TRUE(CheckBookingLimits(limits, T("2026-03-24T09:00:00Z"), booked, utc).ok());
  std::vector<Millis> with_tuesday = booked;
  with_tuesday.push_back(T("2026-03-24T09:00:00Z"));
  EXPECT_FALSE(CheckBookingLimits(limits, T("2026-03-25T09:00:00Z"), with_tuesday, utc).ok());
  EXPECT_TRUE(CheckBookingLimits(limits, T("2026-03-30T09:00:00Z"), with_tuesday, utc).ok());  // next week

  const std::vector<Millis> starts = {T("2026-03-23T11:00:00Z"), T("2026-03-24T11:00:00Z"), T("2026-03-25T11:00:00Z"),
                                      T("2026-03-30T11:00:00Z")};
  EXPECT_EQ(WithinBookingLimits(limits, starts, booked, utc), (std::vector<Millis>(starts.begin() + 1, starts.end())));
  EXPECT_EQ(WithinBookingLimits(limits, starts, with_tuesday, utc), (std::vector<Millis>{starts[3]}));
  EXPECT_EQ(WithinBookingLimits(BookingLimits{}, starts, with_tuesday, utc), starts);
  // What must be counted for a range: the whole periods it touches.
  EXPECT_EQ(LimitedSpan(limits, T("2026-03-25T11:00:00Z"), T("2026-03-31T00:00:00Z"), utc),
            (TimeRange{T("2026-03-23T00:00:00Z"), T("2026-04-06T00:00:00Z")}));
}

}  // namespace
}  // namespace rendezvous::bookings
