// Slots and bookings over stored schedules: a schedule in one time zone seen from another across
// the spring-forward and fall-back days of Europe/Berlin and America/New_York (found from the
// time zone database, so the test keeps working as years pass), the viewer's dates, date
// overrides (other hours, a day off), and bookings checked against the same grid.
#include "bookings_fixture.hpp"

namespace rendezvous::testing {
namespace {

using time::CivilDate;
using time::Millis;

constexpr Millis kHour = 60 * time::kMillisPerMinute;

int64_t Day(const CivilDate& d) {
  return time::DaysFromCivil(d);
}
CivilDate Plus(const CivilDate& d, int64_t days) {
  return time::CivilFromDays(Day(d) + days);
}

// The next date (at least 8 days ahead) on which `zone` moves its clocks forward (`forward`) or
// back: the offset at the end of the day differs from the one at its start.
CivilDate NextChange(const time::Zone& zone, bool forward) {
  int64_t day = time::DaysFromCivil(zone.DateAt(time::Now())) + 8;
  for (int i = 0; i < 400; ++i, ++day) {
    const Millis start = zone.StartOfDay(time::CivilFromDays(day));
    const Millis end = zone.StartOfDay(time::CivilFromDays(day + 1));
    const int before = zone.OffsetSeconds(start), after = zone.OffsetSeconds(end - 1);
    if (forward ? after > before : after < before) return time::CivilFromDays(day);
  }
  ADD_FAILURE() << "no daylight-saving change within 400 days in " << zone.name();
  return time::CivilFromDays(day);
}

class BookingsSlots : public BookingsFixture {
 protected:
  void SetUp() override { StartServer(); }

  // A schedule open every day from `from` to `to` (local "HH:MM") in `zone`; returns its id.
  int64_t EveryDay(const std::string& zone, const std::string& from, const std::string& to,
                   json overrides = json::array()) {
    json body = {{"name", "Every day"},
                 {"timeZone", zone},
                 {"availability",
                  {{{"days", {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}},
                    {"startTime", from},
                    {"endTime", to}}}},
                 {"overrides", overrides}};
    HttpResult r = Call("POST", "/v2/schedules", owner_key_, body);
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Json()["data"]["id"].get<int64_t>();
  }
  // Slots over the three days around `day` (in `viewer`): date -> starts.
  std::map<std::string, std::vector<Millis>> SlotsAround(int64_t event_type, const CivilDate& day,
                                                         const std::string& viewer) {
    HttpResult r = Call("GET",
                        "/v2/slots?eventTypeId=" + std::to_string(event_type) + "&start=" +
                            time::FormatDate(Plus(day, -1)) + "&end=" + time::FormatDate(Plus(day, 1)) +
                            "&timeZone=" + viewer,
                        "");
    EXPECT_EQ(r.status, 200) << r.body;
    const json data = r.Json()["data"];
    std::map<std::string, std::vector<Millis>> out;
    for (auto& [date, list] : data.items()) {
      for (const json& s : list) out[date].push_back(*time::ParseIso(s["start"].get<std::string>()));
    }
    return out;
  }

  // Hourly slots of a schedule open 08:00-12:00 in `host_zone`, seen from `viewer` over the
  // change day of `host_zone`: four a day, each at the same local hours, the first one on the
  // change day 23 h (spring) or 25 h (fall) after the day before's.
  void ExpectLocalHoursKept(const std::string& host_zone, const std::string& viewer, bool forward) {
    const time::Zone zone = *time::Zone::Find(host_zone);
    const CivilDate change = NextChange(zone, forward);
    const int64_t schedule = EveryDay(host_zone, "08:00", "12:00");
    const int64_t et = CreateEventType(owner_key_, "hourly-" + std::to_string(Day(change)) + (forward ? "s" : "f"),
                                       60, {{"scheduleId", schedule}})["id"];
    std::map<std::string, std::vector<Millis>> by_date = SlotsAround(et, change, viewer);
    std::vector<Millis> all;
    for (auto& [date, starts] : by_date) all.insert(all.end(), starts.begin(), starts.end());
    // The viewer's three days hold the host's change day whole (the zones are hours apart).
    const Millis day_before = zone.StartOfDay(Plus(change, -1)), change_start = zone.StartOfDay(change);
    std::vector<Millis> before, on;
    for (Millis s : all) {
      EXPECT_EQ(zone.ToLocal(s) % time::kMillisPerDay / kHour >= 8 && zone.ToLocal(s) % time::kMillisPerDay / kHour < 12,
                true)
          << time::FormatIso(s);
      EXPECT_EQ(zone.ToLocal(s) % kHour, 0) << time::FormatIso(s);
      if (s >= day_before && s < change_start) before.push_back(s);
      if (s >= change_start && s < zone.StartOfDay(Plus(change, 1))) on.push_back(s);
    }
    ASSERT_EQ(before.size(), 4u) << host_zone << " " << time::FormatDate(change);
    ASSERT_EQ(on.size(), 4u) << host_zone << " " << time::FormatDate(change);
    EXPECT_EQ(on.front() - before.front(), forward ? 23 * kHour : 25 * kHour);
    // Each start is listed under its date in the viewer's zone.
    const time::Zone view = *time::Zone::Find(viewer);
    for (auto& [date, starts] : by_date) {
      for (Millis s : starts) EXPECT_EQ(time::FormatDate(view.DateAt(s)), date);
    }
    // Bookings follow the same grid: 08:00 local on the change day books, 08:30 is off the grid.
    EXPECT_EQ(Call("POST", "/v2/bookings", "", BookingAt(et, on.front())).status, 201);
    HttpResult off = Call("POST", "/v2/bookings", "", BookingAt(et, on.front() + kHour / 2));
    EXPECT_EQ(off.status, 400) << off.body;
    EXPECT_EQ(Call("POST", "/v2/bookings", "", BookingAt(et, on.front())).status, 409);
  }

  static json BookingAt(int64_t event_type, Millis start) {
    return {{"start", time::FormatIso(start)},
            {"eventTypeId", event_type},
            {"attendee", {{"name", "Vic Viewer"}, {"email", "vic@example.com"}, {"timeZone", "Asia/Tokyo"}}}};
  }
};

TEST_F(BookingsSlots, BerlinScheduleSeenFromNewYorkSpringForward) {
  ExpectLocalHoursKept("Europe/Berlin", "America/New_York", true);
}
TEST_F(BookingsSlots, BerlinScheduleSeenFromNewYorkFallBack) {
  ExpectLocalHoursKept("Europe/Berlin", "America/New_York", false);
}
TEST_F(BookingsSlots, NewYorkScheduleSeenFromBerlinSpringForward) {
  ExpectLocalHoursKept("America/New_York", "Europe/Berlin", true);
}
TEST_F(BookingsSlots, NewYorkScheduleSeenFromBerlinFallBack) {
  ExpectLocalHoursKept("America/New_York", "Europe/Berlin", false);
}

TEST_F(BookingsSlots, EveningHoursInNewYorkAreTheNextDayInTokyo) {
  const int64_t schedule = EveryDay("America/New_York", "20:00", "22:00");
  const int64_t et = CreateEventType(owner_key_, "evening", 60, {{"scheduleId", schedule}})["id"];
  const time::Zone ny = *time::Zone::Find("America/New_York");
  const CivilDate day = Plus(ny.DateAt(time::Now()), 10);
  std::map<std::string, std::vector<Millis>> tokyo = SlotsAround(et, day, "Asia/Tokyo");
  const Millis first = ny.StartOfDay(day) + 20 * kHour;  // no change that evening: 20:00 local
  // 20:00 in New York is the next morning in Tokyo.
  ASSERT_EQ(tokyo.count(time::FormatDate(Plus(day, 1))), 1u);
  const std::vector<Millis>& next = tokyo[time::FormatDate(Plus(day, 1))];
  EXPECT_NE(std::find(next.begin(), next.end(), first), next.end()) << time::FormatIso(first);
  EXPECT_EQ(next.size(), 2u);
}

TEST_F(BookingsSlots, OverridesReplaceADaysHours) {
  const CivilDate base = Plus(time::Zone::Utc().DateAt(time::Now()), 10);
  const CivilDate other = Plus(base, 1), off = Plus(base, 2);
  const int64_t schedule = EveryDay("UTC", "09:00", "17:00",
                                    {{{"date", time::FormatDate(other)}, {"startTime", "13:00"}, {"endTime", "14:00"}},
                                     {{"date", time::FormatDate(off)}, {"startTime", "00:00"}, {"endTime", "00:00"}}});
  const int64_t et = CreateEventType(owner_key_, "overridden", 30, {{"scheduleId", schedule}})["id"];
  HttpResult r = Call("GET",
                      "/v2/slots?eventTypeId=" + std::to_string(et) + "&start=" + time::FormatDate(base) +
                          "&end=" + time::FormatDate(off),
                      "");
  ASSERT_EQ(r.status, 200) << r.body;
  const json data = r.Json()["data"];
  EXPECT_EQ(data[time::FormatDate(base)].size(), 16u);
  EXPECT_EQ(data[time::FormatDate(other)],
            json::parse(R"([{"start":")" + time::FormatDate(other) + R"(T13:00:00.000Z"},{"start":")" +
                        time::FormatDate(other) + R"(T13:30:00.000Z"}])"));
  EXPECT_FALSE(data.contains(time::FormatDate(off)));
  const Millis other_start = time::Zone::Utc().StartOfDay(other);
  EXPECT_EQ(Call("POST", "/v2/bookings", "", BookingAt(et, other_start + 9 * kHour)).status, 400);
  EXPECT_EQ(Call("POST", "/v2/bookings", "", BookingAt(et, other_start + 13 * kHour)).status, 201);
  EXPECT_EQ(Call("POST", "/v2/bookings", "", BookingAt(et, time::Zone::Utc().StartOfDay(off) + 9 * kHour)).status,
            400);
}

// Three disjoint two-week windows with 7,000 bookings each (21,000 in all; at night, outside the
// working hours): asked in turn, each is read once and then served from memory. A booking written
// straight into the table (no change of the host's version: not the way the server writes) shows
// which answers come from memory; a booking made through this instance updates the kept times; a change from
// elsewhere (the version moved) makes the next answer read the table again.
TEST_F(BookingsSlots, SeveralBusyWindowsStayInMemoryAndFollowThisInstancesBookings) {
  static constexpr const char* kInsertBooking =
      "INSERT INTO bookings (uid, event_type_id, host_id, title, description, status, start_at, end_at,"
      " duration, location, metadata, created_at, updated_at)";
  const int64_t et = CreateEventType(owner_key_, "seen", 60)["id"];
  const int64_t filler = CreateEventType(owner_key_, "filler", 5)["id"];
  const std::vector<std::string> mondays = {Monday(2), Monday(6), Monday(10)};
  for (size_t w = 0; w < mondays.size(); ++w) {
    // 14 nights, 7,000 five-minute bookings between 00:00 and 08:00.
    const std::string start =
        "TIMESTAMP('" + mondays[w] + "') + INTERVAL (seq % 14) DAY + INTERVAL (seq DIV 14) * 50 SECOND";
    db_.Exec(kInsertBooking + std::string(" SELECT CONCAT('night-") + std::to_string(w) + "-', seq), " +
             std::to_string(filler) + ", " + std::to_string(owner_) + ", 'Night', '', 'accepted', " + start +
             ", " + start + " + INTERVAL 5 MINUTE, 5, NULL, '{}', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)" +
             " FROM seq_1_to_7000");
  }
  auto offered = [&](const std::string& monday, const std::string& at) {
    const Millis day = *time::ParseIso(monday + "T00:00:00Z");
    const std::string end = time::FormatDate(time::Zone::Utc().DateAt(day + 11 * time::kMillisPerDay));
    HttpResult r =
        Call("GET", "/v2/slots?eventTypeId=" + std::to_string(et) + "&start=" + monday + "&end=" + end, "");
    EXPECT_EQ(r.status, 200) << r.body;
    const Millis start = *time::ParseIso(at);
    const json day_slots = r.Json()["data"][at.substr(0, 10)];
    for (const json& s : day_slots) {
      if (time::ParseIso(s["start"].get<std::string>()) == start) return true;
    }
    return false;
  };
  auto tuesday = [](const std::string& monday, const std::string& clock) {
    const Millis day = *time::ParseIso(monday + "T00:00:00Z") + time::kMillisPerDay;
    return time::FormatDate(time::Zone::Utc().DateAt(day)) + "T" + clock + ":00Z";
  };
  for (const std::string& m : mondays) EXPECT_TRUE(offered(m, tuesday(m, "10:00"))) << m;
  for (size_t w = 0; w < mondays.size(); ++w) {
    const std::string at = tuesday(mondays[w], "10:00");
    const std::string day = at.substr(0, 10);
    db_.Exec(kInsertBooking + std::string(" VALUES ('aside-") + std::to_string(w) + "', " +
             std::to_string(et) + ", " + std::to_string(owner_) + ", 'Aside', '', 'accepted', '" + day +
             " 10:00:00', '" + day + " 11:00:00', 60, NULL, '{}', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))");
  }
  for (int round = 0; round < 2; ++round) {
    for (const std::string& m : mondays) EXPECT_TRUE(offered(m, tuesday(m, "10:00"))) << "from memory: " << m;
  }
  // A booking through this instance: gone from the list at once, the rest still from memory.
  const std::string booked = tuesday(mondays[0], "13:00");
  ASSERT_EQ(Call("POST", "/v2/bookings", "", BookingAt(et, *time::ParseIso(booked))).status, 201);
  EXPECT_FALSE(offered(mondays[0], booked));
  EXPECT_TRUE(offered(mondays[0], tuesday(mondays[0], "10:00")));
  EXPECT_TRUE(offered(mondays[2], tuesday(mondays[2], "10:00")));
  // A change made elsewhere moves the host's version: the table is read again.
  db_.Exec("UPDATE booking_host_locks SET changes = changes + 1 WHERE host_id = " + std::to_string(owner_));
  for (const std::string& m : mondays) EXPECT_FALSE(offered(m, tuesday(m, "10:00"))) << m;
  EXPECT_FALSE(offered(mondays[0], booked));
}

}  // namespace
}  // namespace rendezvous::testing
