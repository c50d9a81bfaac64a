// ISO 8601 and DATETIME text forms of booking times.
#include <gtest/gtest.h>

#include "iso_time.hpp"

namespace rendezvous::bookings {
namespace {

TEST(BookingsTime, ParsesUtcAndOffsets) {
  EXPECT_EQ(ParseIsoTime("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseIsoTime("1970-01-01T00:00:01.5Z"), 1500);
  EXPECT_EQ(ParseIsoTime("2026-05-04T09:30:00.000Z"), ParseIsoTime("2026-05-04T11:30:00+02:00"));
  EXPECT_EQ(ParseIsoTime("2026-05-04T09:30Z"), ParseIsoTime("2026-05-04T04:30:00-0500"));
  EXPECT_EQ(ParseIsoTime("2024-02-29T00:00:00Z").value() - ParseIsoTime("2024-02-28T00:00:00Z").value(),
            86400000);
}

TEST(BookingsTime, RejectsMalformedAndImpossible) {
  for (const char* bad : {"", "2026-05-04", "2026-05-04T09:30:00", "2026-13-01T00:00:00Z",
                          "2025-02-29T00:00:00Z", "2026-05-04T24:00:00Z", "2026-05-04T09:60:00Z",
                          "2026-05-04 09:30:00Z", "2026-05-04T09:30:00+25:00", "1969-12-31T23:59:59Z",
                          "2026-05-04T09:30:00.Z", "2026-05-04T09:30:00Zjunk", "abcd-05-04T09:30:00Z"}) {
    EXPECT_FALSE(ParseIsoTime(bad).has_value()) << bad;
  }
}

TEST(BookingsTime, FormatsRoundTrip) {
  const Millis t = ParseIsoTime("2031-12-31T23:59:58.123Z").value();
  EXPECT_EQ(FormatIsoTime(t), "2031-12-31T23:59:58.123Z");
  EXPECT_EQ(FormatSqlTime(t), "2031-12-31 23:59:58.123");
  EXPECT_EQ(ParseSqlTime("2031-12-31 23:59:58.123"), t);
  EXPECT_EQ(ParseSqlTime("2031-12-31 23:59:58"), t - 123);
  EXPECT_FALSE(ParseSqlTime("2031-12-31T23:59:58").has_value());
  EXPECT_EQ(FormatIsoTime(0), "1970-01-01T00:00:00.000Z");
}

}  // namespace
}  // namespace rendezvous::bookings
