// Busy times of a host's connected calendars keep slots and bookings away (the calendar plugin's
// busy-time source): a Google busy period and an ICS feed event remove the slots they cover and
// make a booking there 409; a Google failure is answered instead of offering times that may be
// taken. A recurring ICS event blocks each of its occurrences, except the dates it excludes.
#include <algorithm>

#include "calendar_fixture.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::testing {
namespace {

class BookingsCalendarBusy : public CalendarTest {
 protected:
  HttpResult Book(int64_t event_type, const std::string& start) {
    return Send("POST", "/v2/bookings",
                {{"start", start},
                 {"eventTypeId", event_type},
                 {"attendee", {{"name", "Ann"}, {"email", "ann@example.com"}, {"timeZone", "UTC"}}}},
                "");
  }
  json SlotsOn(int64_t event_type, const std::string& date) {
    HttpResult r = Get("/v2/slots?eventTypeId=" + std::to_string(event_type) + "&start=" + date + "&end=" + date, "");
    EXPECT_EQ(r.status, 200) << r.body;
    return r.Json()["data"].value(date, json::array());
  }
};

TEST_F(BookingsCalendarBusy, GoogleAndIcsBusyTimesAreNotOffered) {
  int64_t day = time::DaysFromCivil(time::Zone::Utc().DateAt(time::Now())) + 7;
  while (time::IsoWeekday(time::CivilFromDays(day)) != 2) ++day;  // a Tuesday
  const std::string date = time::FormatDate(time::CivilFromDays(day));
  HttpResult et = Send("POST", "/v2/event-types", {{"title", "Call"}, {"slug", "call"}, {"lengthInMinutes", 60}}, key_);
  ASSERT_EQ(et.status, 201) << et.body;
  const int64_t id = et.Json()["data"]["id"];
  ASSERT_EQ(SlotsOn(id, date).size(), 8u);  // 09:00 .. 16:00

  AddStandardCalendars();
  ASSERT_EQ(ConnectAndSave().status, 200);
  google_.AddBusy("ada@example.com", date + "T10:30:00Z", date + "T11:15:00Z");
  google_.SetIcs("club.ics", "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:1\r\n"
                             "DTSTART:" + date.substr(0, 4) + date.substr(5, 2) + date.substr(8, 2) +
                             "T140000Z\r\nDTEND:" + date.substr(0, 4) + date.substr(5, 2) + date.substr(8, 2) +
                             "T143000Z\r\nSUMMARY:Climbing\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n");
  ASSERT_EQ(Send("POST", "/v2/calendars/ics-feed/save", {{"urls", {google_.IcsUrl("club.ics")}}}, key_).status, 201);

  json slots = SlotsOn(id, date);
  std::vector<std::string> starts;
  for (const json& s : slots) starts.push_back(s["start"]);
  EXPECT_EQ(starts, (std::vector<std::string>{date + "T09:00:00.000Z", date + "T12:00:00.000Z",
                                              date + "T13:00:00.000Z", date + "T15:00:00.000Z",
                                              date + "T16:00:00.000Z"}));
  HttpResult busy = Book(id, date + "T10:00:00Z");
  EXPECT_EQ(busy.status, 409) << busy.body;
  EXPECT_EQ(Book(id, date + "T14:00:00Z").status, 409);
  EXPECT_EQ(Book(id, date + "T12:00:00Z").status, 201);

  // Google failing: an error, never a list that may hold taken times; nothing is booked.
  google_.SetFailStatus(500);
  HttpResult failed = Get("/v2/slots?eventTypeId=" + std::to_string(id) + "&start=" + date + "&end=" + date, "");
  EXPECT_EQ(failed.status, 502) << failed.body;
  EXPECT_EQ(Book(id, date + "T15:00:00Z").status, 502);
  google_.SetFailStatus(0);
  EXPECT_EQ(Book(id, date + "T15:00:00Z").status, 201);
}

TEST_F(BookingsCalendarBusy, RecurringIcsEventBlocksEachOccurrenceButItsExdate) {
  int64_t first = time::DaysFromCivil(time::Zone::Utc().DateAt(time::Now())) + 7;
  while (time::IsoWeekday(time::CivilFromDays(first)) != 2) ++first;  // a Tuesday
  auto date = [&](int week) { return time::FormatDate(time::CivilFromDays(first + 7 * week)); };
  auto compact = [](const std::string& d) { return d.substr(0, 4) + d.substr(5, 2) + d.substr(8, 2); };
  HttpResult et = Send("POST", "/v2/event-types", {{"title", "Call"}, {"slug", "call"}, {"lengthInMinutes", 60}}, key_);
  ASSERT_EQ(et.status, 201) << et.body;
  const int64_t id = et.Json()["data"]["id"];

  // Every Tuesday at 14:00 UTC from the first week, except the second week.
  google_.SetIcs("weekly.ics", "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:weekly\r\n"
                               "DTSTART:" + compact(date(0)) + "T140000Z\r\nDTEND:" + compact(date(0)) +
                               "T143000Z\r\nRRULE:FREQ=WEEKLY;BYDAY=TU\r\nEXDATE:" + compact(date(1)) +
                               "T140000Z\r\nSUMMARY:Standup\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n");
  ASSERT_EQ(Send("POST", "/v2/calendars/ics-feed/save", {{"urls", {google_.IcsUrl("weekly.ics")}}}, key_).status, 201);

  for (int week = 0; week < 4; ++week) {
    const std::string d = date(week);
    std::vector<std::string> starts;
    for (const json& s : SlotsOn(id, d)) starts.push_back(s["start"]);
    const bool offered = std::find(starts.begin(), starts.end(), d + "T14:00:00.000Z") != starts.end();
    EXPECT_EQ(offered, week == 1) << d;
    EXPECT_EQ(starts.size(), week == 1 ? 8u : 7u) << d;  // 09:00 .. 16:00, less the 14:00 one
  }
  EXPECT_EQ(Book(id, date(2) + "T14:00:00Z").status, 409);
  EXPECT_EQ(Book(id, date(1) + "T14:00:00Z").status, 201);
}

}  // namespace
}  // namespace rendezvous::testing
