// The iCalendar reader used for ICS feeds: validation and busy intervals.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

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

using Strings = std::vector<std::string>;

std::vector<std::string> Starts(const std::vector<BusyInterval>& busy) {
  std::vector<std::string> out;
  for (const BusyInterval& b : busy) out.push_back(FormatUtc(b.start));
  return out;
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
  // The daily event at 08:00 UTC is there every day.
  EXPECT_EQ(Starts(busy), (Strings{"2025-03-10T08:00:00Z", "2025-03-10T09:00:00Z", "2025-03-10T13:00:00Z",
                                   "2025-03-10T23:00:00Z", "2025-03-11T08:00:00Z", "2025-03-12T08:00:00Z",
                                   "2025-03-12T12:00:00Z"}));
  ASSERT_EQ(busy.size(), 7u);
  EXPECT_EQ(FormatUtc(busy[1].end), "2025-03-10T10:00:00Z");
  // New York switched to EDT on 2025-03-09: 09:00 local is 13:00 UTC.
  EXPECT_EQ(FormatUtc(busy[2].end), "2025-03-10T13:30:00Z");
  // All-day in the feed's X-WR-TIMEZONE (Berlin, UTC+1 in March).
  EXPECT_EQ(FormatUtc(busy[3].end), "2025-03-11T23:00:00Z");
  EXPECT_EQ(FormatUtc(busy[6].end), "2025-03-12T13:30:00Z");
}

TEST(CalendarIcs, DailyRuleIsExpanded) {
  auto busy = BusyTimes(kFeed, "2025-03-01T00:00:00Z", "2025-03-02T00:00:00Z");
  ASSERT_EQ(busy.size(), 1u);
  EXPECT_EQ(FormatUtc(busy[0].start), "2025-03-01T08:00:00Z");
  auto later = BusyTimes(kFeed, "2025-03-05T00:00:00Z", "2025-03-06T00:00:00Z");
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(FormatUtc(later[0].start), "2025-03-05T08:00:00Z");
  EXPECT_EQ(FormatUtc(later[0].end), "2025-03-05T08:30:00Z");
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

// A calendar around `body` (VEVENTs and VTIMEZONEs, lines ending in \n), with `header` lines
// (X-WR-TIMEZONE:...) first.
std::string Calendar(const std::string& body, const std::string& header = "") {
  return "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//Test//EN\n" + header + body + "END:VCALENDAR\n";
}

const time::Zone& Tokyo() {
  static const time::Zone zone = *time::Zone::Find("Asia/Tokyo");
  return zone;
}

TEST(CalendarIcs, WeeklyRuleStopsAtItsCount) {
  const std::string feed = Calendar(
      "BEGIN:VEVENT\nUID:w\nDTSTART;TZID=Europe/Berlin:20250303T100000\n"
      "DTEND;TZID=Europe/Berlin:20250303T110000\n"
      "RRULE:FREQ=WEEKLY;COUNT=3\nEND:VEVENT\n");
  auto busy = BusyTimes(feed, "2025-03-01T00:00:00Z", "2025-04-30T00:00:00Z");
  EXPECT_EQ(Starts(busy), (Strings{"2025-03-03T09:00:00Z", "2025-03-10T09:00:00Z", "2025-03-17T09:00:00Z"}));
  ASSERT_FALSE(busy.empty());
  EXPECT_EQ(FormatUtc(busy[0].end), "2025-03-03T10:00:00Z");
}

TEST(CalendarIcs, WeeklyRuleStopsAtItsUntilInclusive) {
  auto feed = [](const std::string& until) {
    return Calendar(
        "BEGIN:VEVENT\nUID:w\nDTSTART;TZID=Europe/Berlin:20250303T100000\nDURATION:PT1H\n"
        "RRULE:FREQ=WEEKLY;UNTIL=" +
        until + "\nEND:VEVENT\n");
  };
  EXPECT_EQ(Starts(BusyTimes(feed("20250317T090000Z"), "2025-03-01T00:00:00Z", "2025-04-30T00:00:00Z")),
            (Strings{"2025-03-03T09:00:00Z", "2025-03-10T09:00:00Z", "2025-03-17T09:00:00Z"}));
  EXPECT_EQ(Starts(BusyTimes(feed("20250317T085959Z"), "2025-03-01T00:00:00Z", "2025-04-30T00:00:00Z")),
            (Strings{"2025-03-03T09:00:00Z", "2025-03-10T09:00:00Z"}));
}

TEST(CalendarIcs, ExdateRemovesItsOccurrence) {
  const std::string feed = Calendar(
      "BEGIN:VEVENT\nUID:w\nDTSTART;TZID=Europe/Berlin:20250303T100000\nDURATION:PT1H\nRRULE:FREQ=WEEKLY\n"
      "EXDATE;TZID=Europe/Berlin:20250310T100000\nEND:VEVENT\n");
  EXPECT_EQ(Starts(BusyTimes(feed, "2025-03-01T00:00:00Z", "2025-03-20T00:00:00Z")),
            (Strings{"2025-03-03T09:00:00Z", "2025-03-17T09:00:00Z"}));
}

TEST(CalendarIcs, RdateAddsOccurrences) {
  const std::string feed = Calendar(
      "BEGIN:VEVENT\nUID:w\nDTSTART:20250303T090000Z\nDURATION:PT1H\nRRULE:FREQ=WEEKLY;COUNT=2\n"
      "RDATE:20250305T120000Z,20250306T120000Z\nRDATE;VALUE=PERIOD:20250307T120000Z/PT3H\nEND:VEVENT\n");
  auto busy = BusyTimes(feed, "2025-03-01T00:00:00Z", "2025-03-20T00:00:00Z");
  EXPECT_EQ(Starts(busy), (Strings{"2025-03-03T09:00:00Z", "2025-03-05T12:00:00Z", "2025-03-06T12:00:00Z",
                                   "2025-03-07T12:00:00Z", "2025-03-10T09:00:00Z"}));
  ASSERT_EQ(busy.size(), 5u);
  EXPECT_EQ(FormatUtc(busy[1].end), "2025-03-05T13:00:00Z");
  EXPECT_EQ(FormatUtc(busy[3].end), "2025-03-07T15:00:00Z");  // the period's own length
}

const char* kSeries =
    "BEGIN:VEVENT\nUID:series@x\nDTSTART;TZID=Europe/Berlin:20250303T100000\n"
    "DTEND;TZID=Europe/Berlin:20250303T110000\n"
    "RRULE:FREQ=WEEKLY\nEND:VEVENT\n";

TEST(CalendarIcs, RecurrenceIdMovesItsOccurrence) {
  const std::string feed = Calendar(
      std::string(kSeries) +
      "BEGIN:VEVENT\nUID:series@x\nRECURRENCE-ID;TZID=Europe/Berlin:20250310T100000\n"
      "DTSTART;TZID=Europe/Berlin:20250311T150000\nDTEND;TZID=Europe/Berlin:20250311T160000\nEND:VEVENT\n");
  EXPECT_EQ(Starts(BusyTimes(feed, "2025-03-01T00:00:00Z", "2025-03-20T00:00:00Z")),
            (Strings{"2025-03-03T09:00:00Z", "2025-03-11T14:00:00Z", "2025-03-17T09:00:00Z"}));
}

TEST(CalendarIcs, CancelledRecurrenceIdRemovesItsOccurrence) {
  const std::string feed = Calendar(
      std::string(kSeries) +
      "BEGIN:VEVENT\nUID:series@x\nRECURRENCE-ID:20250310T090000Z\nSTATUS:CANCELLED\n"
      "DTSTART;TZID=Europe/Berlin:20250310T100000\nDTEND;TZID=Europe/Berlin:20250310T110000\nEND:VEVENT\n");
  EXPECT_EQ(Starts(BusyTimes(feed, "2025-03-01T00:00:00Z", "2025-03-20T00:00:00Z")),
            (Strings{"2025-03-03T09:00:00Z", "2025-03-17T09:00:00Z"}));
}

TEST(CalendarIcs, BerlinOccurrencesKeepTheirWallClockAcrossDst) {
  const std::string weekly = Calendar(
      "BEGIN:VEVENT\nUID:w\nDTSTART;TZID=Europe/Berlin:20250317T100000\nDURATION:PT1H\nRRULE:FREQ=WEEKLY\n"
      "END:VEVENT\n");
  // Summer time from 2025-03-30 to 2025-10-26.
  EXPECT_EQ(Starts(BusyTimes(weekly, "2025-03-16T00:00:00Z", "2025-04-08T00:00:00Z")),
            (Strings{"2025-03-17T09:00:00Z", "2025-03-24T09:00:00Z", "2025-03-31T08:00:00Z",
                     "2025-04-07T08:00:00Z"}));
  EXPECT_EQ(Starts(BusyTimes(weekly, "2025-10-13T00:00:00Z", "2025-11-04T00:00:00Z")),
            (Strings{"2025-10-13T08:00:00Z", "2025-10-20T08:00:00Z", "2025-10-27T09:00:00Z",
                     "2025-11-03T09:00:00Z"}));
  // 02:30 on the change days: missing in spring (read with the offset before), twice in autumn
  // (the first one).
  const std::string night = Calendar(
      "BEGIN:VEVENT\nUID:n\nDTSTART;TZID=Europe/Berlin:20250323T023000\nDURATION:PT15M\nRRULE:FREQ=WEEKLY\n"
      "END:VEVENT\n");
  EXPECT_EQ(Starts(BusyTimes(night, "2025-03-22T00:00:00Z", "2025-04-07T00:00:00Z")),
            (Strings{"2025-03-23T01:30:00Z", "2025-03-30T01:30:00Z", "2025-04-06T00:30:00Z"}));
  EXPECT_EQ(Starts(BusyTimes(night, "2025-10-18T00:00:00Z", "2025-11-03T00:00:00Z")),
            (Strings{"2025-10-19T00:30:00Z", "2025-10-26T00:30:00Z", "2025-11-02T01:30:00Z"}));
}

TEST(CalendarIcs, NewYorkOccurrencesKeepTheirWallClockAcrossDst) {
  const std::string weekly = Calendar(
      "BEGIN:VEVENT\nUID:w\nDTSTART;TZID=America/New_York:20250306T090000\n"
      "DURATION:PT30M\nRRULE:FREQ=WEEKLY\n"
      "END:VEVENT\n");
  // Daylight time from 2025-03-09 to 2025-11-02.
  EXPECT_EQ(Starts(BusyTimes(weekly, "2025-03-01T00:00:00Z", "2025-03-14T00:00:00Z")),
            (Strings{"2025-03-06T14:00:00Z", "2025-03-13T13:00:00Z"}));
  EXPECT_EQ(Starts(BusyTimes(weekly, "2025-10-28T00:00:00Z", "2025-11-07T00:00:00Z")),
            (Strings{"2025-10-30T13:00:00Z", "2025-11-06T14:00:00Z"}));
  const std::string daily = Calendar(
      "BEGIN:VEVENT\nUID:d\nDTSTART;TZID=America/New_York:20251101T013000\n"
      "DURATION:PT15M\nRRULE:FREQ=DAILY;COUNT=3\n"
      "END:VEVENT\n");
  EXPECT_EQ(Starts(BusyTimes(daily, "2025-10-31T00:00:00Z", "2025-11-05T00:00:00Z")),
            (Strings{"2025-11-01T05:30:00Z", "2025-11-02T05:30:00Z", "2025-11-03T06:30:00Z"}));
}

TEST(CalendarIcs, AllDayEventsCoverWholeDaysInTheFeedZone) {
  const std::string feed = Calendar(
      "BEGIN:VEVENT\nUID:one\nDTSTART;VALUE=DATE:20250311\nEND:VEVENT\n"
      "BEGIN:VEVENT\nUID:trip\nDTSTART;VALUE=DATE:20250328\nDTEND;VALUE=DATE:20250401\nEND:VEVENT\n",
      "X-WR-TIMEZONE:Europe/Berlin\n");
  auto busy = BusyTimes(feed, "2025-03-01T00:00:00Z", "2025-04-30T00:00:00Z");
  ASSERT_EQ(busy.size(), 2u);
  EXPECT_EQ(FormatUtc(busy[0].start), "2025-03-10T23:00:00Z");
  EXPECT_EQ(FormatUtc(busy[0].end), "2025-03-11T23:00:00Z");
  // Four days, summer time from the third: 95 hours.
  EXPECT_EQ(FormatUtc(busy[1].start), "2025-03-27T23:00:00Z");
  EXPECT_EQ(FormatUtc(busy[1].end), "2025-03-31T22:00:00Z");

  // Without X-WR-TIMEZONE the caller's zone is used; a recurring all-day event likewise.
  const std::string weekly = Calendar(
      "BEGIN:VEVENT\nUID:w\nDTSTART;VALUE=DATE:20250303\nDTEND;VALUE=DATE:20250305\nRRULE:FREQ=WEEKLY;COUNT="
      "2\n"
      "END:VEVENT\n");
  auto tokyo = BusyTimes(weekly, "2025-03-01T00:00:00Z", "2025-03-31T00:00:00Z", Tokyo());
  ASSERT_EQ(tokyo.size(), 2u);
  EXPECT_EQ(FormatUtc(tokyo[0].start), "2025-03-02T15:00:00Z");
  EXPECT_EQ(FormatUtc(tokyo[0].end), "2025-03-04T15:00:00Z");
  EXPECT_EQ(FormatUtc(tokyo[1].start), "2025-03-09T15:00:00Z");
  EXPECT_EQ(FormatUtc(tokyo[1].end), "2025-03-11T15:00:00Z");
}

// As Outlook publishes: Windows zone names, each with its VTIMEZONE.
const char* kOutlookFeed =
    "BEGIN:VCALENDAR\r\nPRODID:-//Microsoft Corporation//Outlook 16.0 MIMEDIR//EN\r\nVERSION:2.0\r\n"
    "METHOD:PUBLISH\r\nX-WR-CALNAME:Calendar\r\n"
    "BEGIN:VTIMEZONE\r\nTZID:W. Europe Standard Time\r\n"
    "BEGIN:STANDARD\r\nDTSTART:16011028T030000\r\nRRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10\r\n"
    "TZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nEND:STANDARD\r\n"
    "BEGIN:DAYLIGHT\r\nDTSTART:16010325T020000\r\nRRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3\r\n"
    "TZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nEND:DAYLIGHT\r\nEND:VTIMEZONE\r\n"
    "BEGIN:VTIMEZONE\r\nTZID:Pacific Standard Time\r\n"
    "BEGIN:STANDARD\r\nDTSTART:16011104T020000\r\nRRULE:FREQ=YEARLY;BYDAY=1SU;BYMONTH=11\r\n"
    "TZOFFSETFROM:-0700\r\nTZOFFSETTO:-0800\r\nEND:STANDARD\r\n"
    "BEGIN:DAYLIGHT\r\nDTSTART:16010311T020000\r\nRRULE:FREQ=YEARLY;BYDAY=2SU;BYMONTH=3\r\n"
    "TZOFFSETFROM:-0800\r\nTZOFFSETTO:-0700\r\nEND:DAYLIGHT\r\nEND:VTIMEZONE\r\n"
    "BEGIN:VEVENT\r\nUID:040000008200E00074C5B7101A82E008\r\nSUMMARY:Jour fixe\r\n"
    "DTSTART;TZID=W. Europe Standard Time:20250324T100000\r\n"
    "DTEND;TZID=W. Europe Standard Time:20250324T110000\r\n"
    "RRULE:FREQ=WEEKLY;BYDAY=MO\r\nX-MICROSOFT-CDO-BUSYSTATUS:BUSY\r\nEND:VEVENT\r\n"
    "BEGIN:VEVENT\r\nUID:pst\r\nDTSTART;TZID=\"Pacific Standard Time\":20250310T090000\r\n"
    "DTEND;TZID=\"Pacific Standard Time\":20250310T100000\r\nEND:VEVENT\r\n"
    "BEGIN:VEVENT\r\nUID:unknown\r\nDTSTART;TZID=Mars Standard Time:20250312T090000\r\n"
    "DTEND;TZID=Mars Standard Time:20250312T100000\r\nEND:VEVENT\r\n"
    "END:VCALENDAR\r\n";

TEST(CalendarIcs, OutlookZonesAreReadFromTheFeedsVtimezone) {
  std::string why;
  auto cal = ParseIcs(kOutlookFeed, &why);
  ASSERT_TRUE(cal) << why;
  EXPECT_EQ(cal->vtimezones.size(), 2u);
  EXPECT_EQ(cal->vtimezones.count("W. Europe Standard Time"), 1u);
  auto busy = IcsBusyTimes(*cal, At("2025-03-01T00:00:00Z"), At("2025-04-01T00:00:00Z"), time::Zone::Utc());
  EXPECT_EQ(Starts(busy), (Strings{"2025-03-10T16:00:00Z",     // Pacific daylight time (UTC-7)
                                   "2025-03-12T09:00:00Z",     // no VTIMEZONE: the fallback zone
                                   "2025-03-24T09:00:00Z",     // W. Europe, winter
                                   "2025-03-31T08:00:00Z"}));  // W. Europe, summer
}

TEST(CalendarIcs, FloatingOccurrencesUseTheFeedZone) {
  const std::string weekly = Calendar(
      "BEGIN:VEVENT\nUID:f\nDTSTART:20250324T100000\nDURATION:PT1H\nRRULE:FREQ=WEEKLY;COUNT=2\nEND:VEVENT\n");
  EXPECT_EQ(Starts(BusyTimes(weekly, "2025-03-01T00:00:00Z", "2025-04-30T00:00:00Z", Tokyo())),
            (Strings{"2025-03-24T01:00:00Z", "2025-03-31T01:00:00Z"}));
  const std::string berlin = Calendar(
      "BEGIN:VEVENT\nUID:f\nDTSTART:20250324T100000\nDURATION:PT1H\nRRULE:FREQ=WEEKLY;COUNT=2\nEND:VEVENT\n",
      "X-WR-TIMEZONE:Europe/Berlin\n");
  EXPECT_EQ(Starts(BusyTimes(berlin, "2025-03-01T00:00:00Z", "2025-04-30T00:00:00Z", Tokyo())),
            (Strings{"2025-03-24T09:00:00Z", "2025-03-31T08:00:00Z"}));
}

TEST(CalendarIcs, RulesWithLimitsAndOldStartsExpandInStep) {
  // Weekdays only: BYDAY limits a daily rule.
  const std::string weekdays = Calendar(
      "BEGIN:VEVENT\nUID:d\nDTSTART:20250303T080000Z\nDURATION:PT1H\nRRULE:FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR\n"
      "END:VEVENT\n");
  EXPECT_EQ(Starts(BusyTimes(weekdays, "2025-03-07T00:00:00Z", "2025-03-11T00:00:00Z")),
            (Strings{"2025-03-07T08:00:00Z", "2025-03-10T08:00:00Z"}));
  // Every five hours since 2020: the skip ahead keeps the rule's step.
  const std::string hourly = Calendar(
      "BEGIN:VEVENT\nUID:h\nDTSTART:20200101T000000Z\nDURATION:PT1H\nRRULE:FREQ=HOURLY;INTERVAL=5\nEND:"
      "VEVENT\n");
  // 2025-03-01T00:00Z is 45,264 hours after the start, a multiple of 5 plus 4.
  EXPECT_EQ(Starts(BusyTimes(hourly, "2025-03-01T00:00:00Z", "2025-03-01T12:00:00Z")),
            (Strings{"2025-03-01T01:00:00Z", "2025-03-01T06:00:00Z", "2025-03-01T11:00:00Z"}));
  // The second Tuesday of every other month since 2019.
  const std::string monthly = Calendar(
      "BEGIN:VEVENT\nUID:m\nDTSTART;TZID=Europe/Berlin:20190108T100000\nDURATION:PT1H\n"
      "RRULE:FREQ=MONTHLY;INTERVAL=2;BYDAY=2TU\nEND:VEVENT\n");
  EXPECT_EQ(Starts(BusyTimes(monthly, "2025-01-01T00:00:00Z", "2025-06-30T00:00:00Z")),
            (Strings{"2025-01-14T09:00:00Z", "2025-03-11T09:00:00Z", "2025-05-13T08:00:00Z"}));
}

TEST(CalendarIcs, EndlessSecondlyRuleFrom1970IsBounded) {
  const std::string feed = Calendar(
      "BEGIN:VEVENT\nUID:s\nDTSTART:19700101T000000Z\nDURATION:PT1H\nRRULE:FREQ=SECONDLY\nEND:VEVENT\n");
  auto cal = ParseIcs(feed, nullptr);
  ASSERT_TRUE(cal);
  IcsExpansionReport report;
  auto busy =
      IcsBusyTimes(*cal, At("2025-03-01T00:00:00Z"), At("2025-03-02T00:00:00Z"), time::Zone::Utc(), &report);
  EXPECT_EQ(busy.size(), kMaxIcsOccurrencesPerEvent);
  EXPECT_TRUE(report.capped);
  EXPECT_LE(report.steps, kMaxIcsStepsPerEvent);
  ASSERT_FALSE(busy.empty());
  EXPECT_GT(busy.front().end, At("2025-03-01T00:00:00Z"));  // occurrences near the window, not from 1970

  // Six of them: the per-call cap holds.
  std::string six;
  for (int i = 0; i < 6; ++i)
    six += "BEGIN:VEVENT\nUID:s" + std::to_string(i) +
           "\nDTSTART:19700101T000000Z\nDURATION:PT1H\nRRULE:FREQ=SECONDLY\nEND:VEVENT\n";
  auto many = ParseIcs(Calendar(six), nullptr);
  ASSERT_TRUE(many);
  busy =
      IcsBusyTimes(*many, At("2025-03-01T00:00:00Z"), At("2025-03-02T00:00:00Z"), time::Zone::Utc(), &report);
  EXPECT_EQ(busy.size(), kMaxIcsOccurrences);
  EXPECT_LE(report.steps, kMaxIcsSteps);
}

TEST(CalendarIcs, RulesThatNeverMatchSpendABoundedWork) {
  // Never on a 30 February: each candidate second is a counted step until the event's cap.
  const std::string never = Calendar(
      "BEGIN:VEVENT\nUID:n\nDTSTART:19700101T000000Z\nDURATION:PT1H\nRRULE:FREQ=SECONDLY;BYMONTH=2;"
      "BYMONTHDAY=30\n"
      "END:VEVENT\n");
  auto cal = ParseIcs(never, nullptr);
  ASSERT_TRUE(cal);
  IcsExpansionReport report;
  EXPECT_TRUE(
      IcsBusyTimes(*cal, At("2025-03-01T00:00:00Z"), At("2025-03-02T00:00:00Z"), time::Zone::Utc(), &report)
          .empty());
  EXPECT_EQ(report.steps, kMaxIcsStepsPerEvent);
  EXPECT_TRUE(report.capped);

  // A count walked from a far start runs out of steps before the window: nothing is found there.
  const std::string counted = Calendar(
      "BEGIN:VEVENT\nUID:c\nDTSTART:19700101T090000Z\nDURATION:PT1H\nRRULE:FREQ=DAILY;COUNT=1000000\nEND:"
      "VEVENT\n");
  cal = ParseIcs(counted, nullptr);
  ASSERT_TRUE(cal);
  EXPECT_TRUE(
      IcsBusyTimes(*cal, At("2025-03-01T00:00:00Z"), At("2025-03-02T00:00:00Z"), time::Zone::Utc(), &report)
          .empty());
  EXPECT_TRUE(report.capped);

  // An ordinal weekday needs a month or a year: a daily rule with one is not expanded.
  const std::string ordinal = Calendar(
      "BEGIN:VEVENT\nUID:o\nDTSTART:20250303T090000Z\nDURATION:PT1H\nRRULE:FREQ=DAILY;BYDAY=1MO\nEND:"
      "VEVENT\n");
  cal = ParseIcs(ordinal, nullptr);
  ASSERT_TRUE(cal);
  auto busy =
      IcsBusyTimes(*cal, At("2025-03-01T00:00:00Z"), At("2025-05-01T00:00:00Z"), time::Zone::Utc(), &report);
  EXPECT_EQ(Starts(busy), (Strings{"2025-03-03T09:00:00Z"}));
  EXPECT_EQ(report.not_expanded, 1u);
}

TEST(CalendarIcs, RejectsMalformedRecurrenceAndStructure) {
  std::string why;
  auto event = [](const std::string& lines) {
    return Calendar("BEGIN:VEVENT\nUID:x\nDTSTART:20250303T090000Z\n" + lines + "END:VEVENT\n");
  };
  EXPECT_FALSE(ParseIcs(event("RRULE:FREQ=SOMETIMES\n"), &why));
  EXPECT_NE(why.find("RRULE"), std::string::npos) << why;
  EXPECT_FALSE(ParseIcs(event("EXDATE:someday\n"), &why));
  EXPECT_NE(why.find("EXDATE"), std::string::npos) << why;
  EXPECT_FALSE(ParseIcs(event("RDATE:tomorrow\n"), &why));
  EXPECT_FALSE(ParseIcs(event("RECURRENCE-ID:someday\n"), &why));
  EXPECT_FALSE(ParseIcs(event("DTEND:20250230T100000Z\n"), &why));  // 30 February
  EXPECT_FALSE(ParseIcs(event("DURATION:-PT1H\n"), &why));
  EXPECT_FALSE(ParseIcs(event("a line without a colon\n"), &why));
  EXPECT_FALSE(ParseIcs(Calendar("END:VEVENT\n"), &why));
  EXPECT_FALSE(ParseIcs(Calendar("") + "BEGIN:VCALENDAR\nEND:VCALENDAR\n", &why));  // two calendars
  std::string deep;
  for (int i = 0; i < 20; ++i) deep += "BEGIN:X-A\n";
  for (int i = 0; i < 20; ++i) deep += "END:X-A\n";
  EXPECT_FALSE(ParseIcs(Calendar(deep), &why));
  EXPECT_EQ(why, "components nested too deep");
  // What is not ours to read is ignored: an unknown property, a malformed value elsewhere.
  EXPECT_TRUE(ParseIcs(event("X-UNKNOWN;FOO=bar:baz\nGEO:not-a-place\n"), &why)) << why;
}

// A feed is read piece by piece (the calendar's own properties, then each component): what a
// whole-feed read saw is still seen wherever it stands.
TEST(CalendarIcs, PiecesReadAsTheWholeFeed) {
  const std::string feed =
      "BEGIN:VCALENDAR\r\nVERSION:2.0\r\n"
      "BEGIN:VEVENT\r\nUID:one@x\r\nDTSTART:20250303T090000Z\r\nDTEND:20250303T100000Z\r\n"
      "SUMMARY:A long title folded\r\n  onto the next line\r\n"
      "BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\n"
      "BEGIN:VTODO\r\nUID:todo@x\r\nSUMMARY:not an event\r\nEND:VTODO\r\n"
      "X-WR-CALNAME:Named \r\n at the end\r\n"
      "BEGIN:VEVENT\r\nUID:two@x\r\nDTSTART;TZID=Europe/Berlin:20250304T090000\r\nDURATION:PT30M\r\n"
      "END:VEVENT\r\nX-WR-TIMEZONE:Europe/Berlin\r\nEND:VCALENDAR";  // no line end after the last line
  std::string why;
  auto cal = ParseIcs(feed, &why);
  ASSERT_TRUE(cal) << why;
  EXPECT_EQ(cal->name, "Named at the end");
  EXPECT_EQ(cal->time_zone, "Europe/Berlin");
  ASSERT_EQ(cal->events.size(), 2u);
  EXPECT_EQ(cal->events[0].summary, "A long title folded onto the next line");
  EXPECT_EQ(cal->events[1].uid, "two@x");
  EXPECT_EQ(cal->events[1].duration_seconds, 1800);
  EXPECT_EQ(cal->events[1].start.tzid, "Europe/Berlin");
  // A malformed line fails the feed in any piece: the calendar's own properties, another
  // component, a nested one.
  for (const std::string& bad :
       {std::string("a line without a colon\r\n"),
        std::string("BEGIN:VTODO\r\nUID:t\r\nno colon here\r\nEND:VTODO\r\n"),
        std::string("BEGIN:VEVENT\r\nUID:a\r\nDTSTART:20250303T090000Z\r\nBEGIN:VALARM\r\n"
                    "broken line\r\nEND:VALARM\r\nEND:VEVENT\r\n")}) {
    EXPECT_FALSE(ParseIcs("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n" + bad + "END:VCALENDAR\r\n", &why)) << bad;
    EXPECT_EQ(why, "malformed iCalendar line") << bad;
  }
}

TEST(CalendarIcs, ConcurrentCallsAgree) {
  auto cal = ParseIcs(kOutlookFeed, nullptr);
  ASSERT_TRUE(cal);
  const auto expected =
      Starts(IcsBusyTimes(*cal, At("2025-01-01T00:00:00Z"), At("2025-04-01T00:00:00Z"), Tokyo()));
  ASSERT_FALSE(expected.empty());
  std::vector<int> agree(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        auto parsed = ParseIcs(kOutlookFeed, nullptr);
        if (parsed && Starts(IcsBusyTimes(*parsed, At("2025-01-01T00:00:00Z"), At("2025-04-01T00:00:00Z"),
                                          Tokyo())) == expected)
          ++agree[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(agree, (std::vector<int>{10, 10, 10, 10}));
}

// A feed kept compact answers exactly as the parsed feed: fixed intervals for the events that do
// not depend on the asked zone, the rest (all-day, floating, recurring, overridden) expanded.
TEST(CalendarIcs, CompactFeedsAnswerAsTheParsedFeed) {
  const std::string feed = std::string(kFeed, std::strlen(kFeed) - std::strlen("END:VCALENDAR\r\n")) +
                           "BEGIN:VEVENT\r\nUID:float@x\r\nDTSTART:20250312T180000\r\nDTEND:20250312T190000\r\n"
                           "END:VEVENT\r\n"
                           "BEGIN:VEVENT\r\nUID:moved@x\r\nDTSTART:20250313T080000Z\r\nDTEND:20250313T090000Z\r\n"
                           "END:VEVENT\r\n"
                           "BEGIN:VEVENT\r\nUID:moved@x\r\nRECURRENCE-ID:20250313T080000Z\r\n"
                           "DTSTART:20250313T110000Z\r\nDTEND:20250313T120000Z\r\nEND:VEVENT\r\n"
                           "BEGIN:VEVENT\r\nUID:rec@x\r\nRECURRENCE-ID:20250311T080000Z\r\nSTATUS:CANCELLED\r\n"
                           "DTSTART:20250311T080000Z\r\nDTEND:20250311T083000Z\r\nEND:VEVENT\r\n"
                           "BEGIN:VEVENT\r\nUID:long@x\r\nDTSTART:20250301T000000Z\r\nDTEND:20250320T000000Z\r\n"
                           "END:VEVENT\r\n"
                           "BEGIN:VEVENT\r\nUID:empty@x\r\nDTSTART:20250312T200000Z\r\nEND:VEVENT\r\n"
                           "END:VCALENDAR\r\n";
  auto cal = ParseIcs(feed, nullptr);
  ASSERT_TRUE(cal);
  const CompactIcs compact = CompactIcsCalendar(*cal);
  EXPECT_GE(compact.fixed.size(), 3u);  // utc, tz, dur, long ...
  EXPECT_LT(compact.rest.events.size(), cal->events.size());
  const auto berlin = time::Zone::Find("Europe/Berlin");
  const auto tokyo = time::Zone::Find("Asia/Tokyo");
  for (const time::Zone& zone : {time::Zone::Utc(), *berlin, *tokyo}) {
    for (auto [from, to] : {std::pair{"2025-03-09T00:00:00Z", "2025-03-16T00:00:00Z"},
                            std::pair{"2025-03-12T12:30:00Z", "2025-03-12T19:00:00Z"},
                            std::pair{"2025-03-19T23:00:00Z", "2025-03-21T00:00:00Z"},
                            std::pair{"2025-02-01T00:00:00Z", "2025-02-02T00:00:00Z"}}) {
      const auto full = IcsBusyTimes(*cal, At(from), At(to), zone);
      const auto kept = IcsBusyTimes(compact, At(from), At(to), zone);
      ASSERT_EQ(kept.size(), full.size()) << from;
      for (size_t i = 0; i < full.size(); ++i) {
        EXPECT_EQ(kept[i].start, full[i].start) << from << " " << i;
        EXPECT_EQ(kept[i].end, full[i].end) << from << " " << i;
      }
    }
  }
}

}  // namespace
}  // namespace rendezvous::calendar
