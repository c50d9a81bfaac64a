// The iCalendar reader used for ICS feeds: validation and busy intervals.
#include <gtest/gtest.h>

#include "ics.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::calendar {
namespace {

time::Millis At(const char* iso) {
  return *time::ParseIso(iso);
}

std::string FormatUtc(time::Millis t) {
  return time::FormatIsoSeconds(t);
}

const char* kFeed =
    "BEGIN:VCALENDAR\r\n"
    "VERSION:2.0\r\n"
    "PRODID:-//Test//EN\r\n"
    "X-WR-CALNAME:Team\r\n"
    "X-WR-TIMEZONE:Europe/Berlin\r\n"
    "BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\nBEGIN:STANDARD\r\nDTSTART:19701025T030000\r\nEND:STANDARD\r\n"
    "END:VTIMEZONE\r\n"
    "BEGIN:VEVENT\r\nUID:utc@x\r\nDTSTART:20250310T090000Z\r\nDTEND:20250310T100000Z\r\nSUMMARY:UTC one\r\n"
    "END:VEVENT\r\n"
    "BEGIN:VEVENT\r\nUID:tz@x\r\nDTSTART;TZID=America/New_York:20250310T090000\r\n"
    "DTEND;TZID=America/New_York:20250310T093000\r\nSUMMARY:a long\r\n  folded summary\r\nEND:VEVENT\r\n"
    "BEGIN:VEVENT\r\nUID:allday@x\r\nDTSTART;VALUE=DATE:20250311\r\nDTEND;VALUE=DATE:20250312\r\nEND:"
    "VEVENT\r\n"
    "BEGIN:VEVENT\r\nUID:dur@x\r\nDTSTART:20250312T120000Z\r\nDURATION:PT1H30M\r\n"
    "BEGIN:VALARM\r\nTRIGGER:-PT15M\r\nACTION:DISPLAY\r\nEND:VALARM\r\nEND:VEVENT\r\n"
    "BEGIN:VEVENT\r\nUID:free@x\r\nDTSTART:20250312T140000Z\r\nDTEND:20250312T150000Z\r\nTRANSP:"
    "TRANSPARENT\r\n"
    "END:VEVENT\r\n"
    "BEGIN:VEVENT\r\nUID:cancel@x\r\nDTSTART:20250312T160000Z\r\nDTEND:20250312T170000Z\r\nSTATUS:"
    "CANCELLED\r\n"
    "END:VEVENT\r\n"
    "BEGIN:VEVENT\r\nUID:rec@x\r\nDTSTART:20250301T080000Z\r\nDTEND:20250301T083000Z\r\nRRULE:FREQ=DAILY\r\n"
    "END:VEVENT\r\n"
    "END:VCALENDAR\r\n";

// The busy intervals of `feed` overlapping [from, to); none, and a failure, when it does not parse.
std::vector<BusyInterval> BusyTimes(std::string_view feed, const char* from, const char* to,
                                    const time::Zone& fallback_zone = time::Zone::Utc()) {
  auto cal = ParseIcs(feed, nullptr);
  if (!cal) {
    ADD_FAILURE() << "the feed does not parse";
    return {};
  }
  return IcsBusyTimes(*cal, At(from), At(to), fallback_zone);
}

TEST(CalendarIcs, ParsesEventsAndCalendarProperties) {
  std::string why;
  auto cal = ParseIcs(kFeed, &why);
  ASSERT_TRUE(cal) << why;
  EXPECT_EQ(cal->name, "Team");
  EXPECT_EQ(cal->time_zone, "Europe/Berlin");
  ASSERT_EQ(cal->events.size(), 7u);
  EXPECT_EQ(cal->events[1].summary, "a long folded summary");
  EXPECT_EQ(cal->events[1].start.tzid, "America/New_York");
  EXPECT_TRUE(cal->events[2].start.all_day);
  EXPECT_EQ(cal->events[3].duration_seconds.value_or(0), 5400);
  EXPECT_FALSE(cal->events[4].busy);
  EXPECT_FALSE(cal->events[5].busy);
  EXPECT_TRUE(cal->events[6].recurring);
}

TEST(CalendarIcs, BusyTimesResolveZonesAndSkipFreeEvents) {
  auto busy = BusyTimes(kFeed, "2025-03-10T00:00:00Z", "2025-03-13T00:00:00Z");
  ASSERT_EQ(busy.size(), 4u);
  EXPECT_EQ(FormatUtc(busy[0].start), "2025-03-10T09:00:00Z");
  EXPECT_EQ(FormatUtc(busy[0].end), "2025-03-10T10:00:00Z");
  // New York switched to EDT on 2025-03-09: 09:00 local is 13:00 UTC.
  EXPECT_EQ(FormatUtc(busy[1].start), "2025-03-10T13:00:00Z");
  EXPECT_EQ(FormatUtc(busy[1].end), "2025-03-10T13:30:00Z");
  // All-day in the feed's X-WR-TIMEZONE (Berlin, UTC+1 in March).
  EXPECT_EQ(FormatUtc(busy[2].start), "2025-03-10T23:00:00Z");
  EXPECT_EQ(FormatUtc(busy[2].end), "2025-03-11T23:00:00Z");
  EXPECT_EQ(FormatUtc(busy[3].start), "2025-03-12T12:00:00Z");
  EXPECT_EQ(FormatUtc(busy[3].end), "2025-03-12T13:30:00Z");
}

TEST(CalendarIcs, RecurrenceIsNotExpanded) {
  auto busy = BusyTimes(kFeed, "2025-03-01T00:00:00Z", "2025-03-02T00:00:00Z");
  ASSERT_EQ(busy.size(), 1u);
  EXPECT_EQ(FormatUtc(busy[0].start), "2025-03-01T08:00:00Z");
  auto later = BusyTimes(kFeed, "2025-03-05T00:00:00Z", "2025-03-06T00:00:00Z");
  EXPECT_TRUE(later.empty());
}

TEST(CalendarIcs, FloatingTimesUseTheFallbackZone) {
  const char* feed =
      "BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20250110T100000\nDTEND:20250110T110000\nEND:VEVENT\nEND:"
      "VCALENDAR\n";
  auto tokyo = time::Zone::Find("Asia/Tokyo");
  ASSERT_TRUE(tokyo);
  auto busy = BusyTimes(feed, "2025-01-01T00:00:00Z", "2025-02-01T00:00:00Z", *tokyo);
  ASSERT_EQ(busy.size(), 1u);
  EXPECT_EQ(FormatUtc(busy[0].start), "2025-01-10T01:00:00Z");
}

TEST(CalendarIcs, RejectsNonCalendars) {
  std::string why;
  EXPECT_FALSE(ParseIcs("<html><body>hello</body></html>", &why));
  EXPECT_FALSE(why.empty());
  EXPECT_FALSE(ParseIcs("", &why));
  EXPECT_FALSE(ParseIcs("{\"json\":true}", &why));
  EXPECT_FALSE(
      ParseIcs("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20250101T000000Z\nEND:VEVENT\n", &why));  // unclosed
  EXPECT_FALSE(
      ParseIcs("BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:x\nEND:VEVENT\nEND:VCALENDAR\n", &why));  // no DTSTART
  EXPECT_FALSE(ParseIcs("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:2025\nEND:VEVENT\nEND:VCALENDAR\n", &why));
  EXPECT_FALSE(ParseIcs("BEGIN:VCALENDAR\nBEGIN:VEVENT\nEND:VTODO\nEND:VCALENDAR\n", &why));
  EXPECT_TRUE(ParseIcs("BEGIN:VCALENDAR\nVERSION:2.0\nEND:VCALENDAR\n", &why))
      << why;  // empty calendar is fine
}

TEST(CalendarIcs, NamesAreCutOnCharacterBoundaries) {
  std::string name;
  for (int i = 0; i < 300; ++i) name += "\xC3\xA9";  // é, two bytes each
  const std::string feed = "BEGIN:VCALENDAR\nX-WR-CALNAME:" + name + "\nEND:VCALENDAR\n";
  auto cal = ParseIcs(feed, nullptr);
  ASSERT_TRUE(cal);
  EXPECT_EQ(cal->name.size(), 254u);
  EXPECT_EQ(cal->name, name.substr(0, 254));
}

TEST(CalendarIcs, DaylightSavingGapTakesTheOffsetBeforeIt) {
  // 02:30 does not exist in New York on 2025-03-09: read with EST, it is 07:30 UTC.
  const char* feed =
      "BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;TZID=America/New_York:20250309T023000\nDURATION:PT30M\n"
      "END:VEVENT\nEND:VCALENDAR\n";
  auto busy = BusyTimes(feed, "2025-03-09T00:00:00Z", "2025-03-10T00:00:00Z");
  ASSERT_EQ(busy.size(), 1u);
  EXPECT_EQ(FormatUtc(busy[0].start), "2025-03-09T07:30:00Z");
  EXPECT_EQ(FormatUtc(busy[0].end), "2025-03-09T08:00:00Z");
}

}  // namespace
}  // namespace rendezvous::calendar
