// rendezvous/time.hpp: ISO 8601, DATETIME and HTTP-date text, civil dates, and IANA zones across
// DST changes.
#include <string>

#include <gtest/gtest.h>

#include "rendezvous/time.hpp"

namespace rendezvous::time {
namespace {

Millis Iso(const char* text) {
  auto t = ParseIso(text);
  EXPECT_TRUE(t) << text;
  return t.value_or(0);
}

TEST(Time, IsoAndSqlText) {
  EXPECT_EQ(Iso("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(Iso("2026-05-04T09:30:00.125Z"), Iso("2026-05-04T11:30:00.125+02:00"));
  EXPECT_EQ(Iso("2026-05-04T09:30Z"), Iso("2026-05-04T04:30:00-0500"));
  EXPECT_EQ(FormatIso(Iso("2026-05-04T09:30:00.5Z")), "2026-05-04T09:30:00.500Z");
  EXPECT_EQ(FormatIsoSeconds(Iso("2026-05-04T09:30:07.9Z")), "2026-05-04T09:30:07Z");
  EXPECT_EQ(FormatSql(Iso("2026-05-04T09:30:00Z")), "2026-05-04 09:30:00.000");
  EXPECT_EQ(ParseSql("2026-05-04 09:30:00.250"), Iso("2026-05-04T09:30:00.25Z"));
  EXPECT_EQ(ParseSql("2026-05-04 09:30:00"), Iso("2026-05-04T09:30:00Z"));
  for (const char* bad :
       {"2026-02-30T10:00:00Z", "2026-05-04T24:00:00Z", "2026-05-04T10:00:00", "2026-05-04 10:00Z",
        "1969-12-31T23:59:59Z", "2026-05-04T10:00:00+2:00", "2026-05-04T10:00:00.Z", "", "garbage"})
    EXPECT_FALSE(ParseIso(bad)) << bad;
  EXPECT_FALSE(ParseSql("2026-05-04T09:30:00"));
}

TEST(Time, CivilDates) {
  auto d = ParseDate("2024-02-29");
  ASSERT_TRUE(d);
  EXPECT_EQ(FormatDate(*d), "2024-02-29");
  EXPECT_FALSE(ParseDate("2023-02-29"));
  EXPECT_FALSE(ParseDate("2024-2-29"));
  EXPECT_EQ(DaysFromCivil({1970, 1, 1}), 0);
  EXPECT_EQ(CivilFromDays(DaysFromCivil({2026, 11, 23})), (CivilDate{2026, 11, 23}));
  EXPECT_EQ(IsoWeekday({2026, 11, 23}), 1u);  // a Monday
  EXPECT_EQ(IsoWeekday({2026, 11, 29}), 7u);
}

TEST(Time, ZonesAreLookedUpByName) {
  EXPECT_TRUE(Zone::Find("Europe/Berlin"));
  EXPECT_TRUE(Zone::Find("UTC"));
  EXPECT_FALSE(Zone::Find("Europe/Atlantis"));
  EXPECT_FALSE(Zone::Find("../../etc/passwd"));
  EXPECT_FALSE(Zone::Find(""));
  EXPECT_EQ(Zone::Find("America/New_York")->name(), "America/New_York");
  EXPECT_EQ(Zone::Utc().OffsetSeconds(Iso("2026-07-01T00:00:00Z")), 0);
}

TEST(Time, BerlinSpringForwardAndFallBack) {
  Zone berlin = *Zone::Find("Europe/Berlin");
  EXPECT_EQ(berlin.OffsetSeconds(Iso("2026-03-29T00:59:00Z")), 3600);
  EXPECT_EQ(berlin.OffsetSeconds(Iso("2026-03-29T01:00:00Z")), 7200);
  const Millis march29 = DaysFromCivil({2026, 3, 29}) * kMillisPerDay;
  // 01:30 exists once; 02:30 does not exist and reads as 03:30 CEST.
  EXPECT_EQ(berlin.FromLocal(march29 + 90 * kMillisPerMinute), Iso("2026-03-29T00:30:00Z"));
  EXPECT_EQ(berlin.FromLocal(march29 + 150 * kMillisPerMinute), Iso("2026-03-29T01:30:00Z"));
  EXPECT_EQ(berlin.FromLocal(march29 + 210 * kMillisPerMinute), Iso("2026-03-29T01:30:00Z"));
  // The day is 23 hours long.
  EXPECT_EQ(berlin.StartOfDay({2026, 3, 30}) - berlin.StartOfDay({2026, 3, 29}), 23 * 60 * kMillisPerMinute);
  // 02:30 on the fall-back day happens twice: the first (CEST) is taken.
  const Millis october25 = DaysFromCivil({2026, 10, 25}) * kMillisPerDay;
  EXPECT_EQ(berlin.FromLocal(october25 + 150 * kMillisPerMinute), Iso("2026-10-25T00:30:00Z"));
  EXPECT_EQ(berlin.StartOfDay({2026, 10, 26}) - berlin.StartOfDay({2026, 10, 25}),
            25 * 60 * kMillisPerMinute);
  EXPECT_EQ(berlin.DateAt(Iso("2026-10-24T22:30:00Z")), (CivilDate{2026, 10, 25}));
}

TEST(Time, NewYorkSpringForwardAndFallBack) {
  Zone ny = *Zone::Find("America/New_York");
  EXPECT_EQ(ny.OffsetSeconds(Iso("2026-03-08T06:59:00Z")), -5 * 3600);
  EXPECT_EQ(ny.OffsetSeconds(Iso("2026-03-08T07:00:00Z")), -4 * 3600);
  const Millis march8 = DaysFromCivil({2026, 3, 8}) * kMillisPerDay;
  EXPECT_EQ(ny.FromLocal(march8 + 150 * kMillisPerMinute),
            Iso("2026-03-08T07:30:00Z"));  // 02:30 -> 03:30 EDT
  const Millis november1 = DaysFromCivil({2026, 11, 1}) * kMillisPerDay;
  EXPECT_EQ(ny.FromLocal(november1 + 90 * kMillisPerMinute),
            Iso("2026-11-01T05:30:00Z"));  // first 01:30 (EDT)
  EXPECT_EQ(ny.ToLocal(Iso("2026-11-01T06:30:00Z")),
            november1 + 90 * kMillisPerMinute);  // second 01:30 (EST)
  EXPECT_EQ(ny.StartOfDay({2026, 11, 2}) - ny.StartOfDay({2026, 11, 1}), 25 * 60 * kMillisPerMinute);
}

TEST(Time, HttpDateFormat) {
  // RFC 9110's example: 784111777 is Sun, 06 Nov 1994 08:49:37 GMT.
  EXPECT_EQ(FormatHttpDate(784111777000), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(FormatHttpDate(784111777999), "Sun, 06 Nov 1994 08:49:37 GMT");  // the second at or before
  EXPECT_EQ(FormatHttpDate(0), "Thu, 01 Jan 1970 00:00:00 GMT");
  EXPECT_EQ(FormatHttpDate(Iso("2024-02-29T23:59:59Z")), "Thu, 29 Feb 2024 23:59:59 GMT");
  EXPECT_EQ(FormatHttpDate(Iso("9999-12-31T23:59:59Z")), "Fri, 31 Dec 9999 23:59:59 GMT");
  EXPECT_EQ(FormatMailDate(Iso("2025-07-01T12:00:00Z")), "Tue, 01 Jul 2025 12:00:00 +0000");
  // Every day of a year round-trips, each day name matching the date.
  for (Millis t = Iso("2026-01-01T13:14:15Z"); t < Iso("2027-01-01T00:00:00Z"); t += kMillisPerDay) {
    const std::string text = FormatHttpDate(t);
    EXPECT_EQ(ParseHttpDate(text), t) << text;
    const char* iso_days[] = {"", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
    EXPECT_EQ(text.substr(0, 3), iso_days[IsoWeekday(CivilFromDays(t / kMillisPerDay))]) << text;
  }
}

TEST(Time, HttpDateParseIsStrict) {
  EXPECT_EQ(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT"), Millis{784111777000});
  EXPECT_EQ(ParseHttpDate("Mon, 06 Nov 1994 08:49:37 GMT"), Millis{784111777000});  // day name not checked
  EXPECT_EQ(ParseHttpDate("Wed, 31 Dec 2025 23:59:60 GMT"), Iso("2026-01-01T00:00:00Z"));  // leap second
  for (const char* bad :
       {"", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37 +0000",
        "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 6 Nov 1994 08:49:37 GMT",
        "sun, 06 nov 1994 08:49:37 GMT", "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Noo 1994 08:49:37 GMT",
        "Sun, 31 Nov 1994 08:49:37 GMT", "Sun, 29 Feb 2023 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT", "Sun, 06 Nov 1969 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT ",
        "Sun, 0a Nov 1994 08:49:37 GMT", "Sun,  06 Nov 1994 08:49:37 GMT"}) {
    EXPECT_FALSE(ParseHttpDate(bad)) << bad;
  }
}

}  // namespace
}  // namespace rendezvous::time
