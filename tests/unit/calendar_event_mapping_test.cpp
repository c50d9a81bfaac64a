// Google event -> spec §2.3 calendar event (DESIGN §7 and §9 "Calendar event mapping").
#include <gtest/gtest.h>

#include "event_mapping.hpp"

namespace rendezvous::calendar {
namespace {

using nlohmann::json;

json Timed() {
  return json::parse(R"({
    "id": "evt1", "status": "confirmed", "summary": "Design review", "description": "Agenda",
    "start": {"dateTime": "2025-03-10T10:00:00+01:00", "timeZone": "Europe/Berlin"},
    "end": {"dateTime": "2025-03-10T11:30:00+01:00", "timeZone": "Europe/Berlin"},
    "organizer": {"email": "ada@example.com", "displayName": "Ada"},
    "attendees": [
      {"email": "ada@example.com", "displayName": "Ada", "organizer": true, "self": true, "responseStatus": "accepted"},
      {"email": "bob@example.com", "displayName": "Bob", "responseStatus": "tentative", "optional": true},
      {"email": "eve@example.com", "responseStatus": "declined"},
      {"email": "joe@example.com", "responseStatus": "needsAction"}
    ]
  })");
}

TEST(CalendarEventMapping, TimedEventFields) {
  json e = MapGoogleEvent(Timed(), "America/New_York");
  EXPECT_EQ(e["id"], "evt1");
  EXPECT_EQ(e["title"], "Design review");
  EXPECT_EQ(e["description"], "Agenda");
  EXPECT_EQ(e["start"], (json{{"time", "2025-03-10T09:00:00Z"}, {"timeZone", "Europe/Berlin"}}));
  EXPECT_EQ(e["end"], (json{{"time", "2025-03-10T10:30:00Z"}, {"timeZone", "Europe/Berlin"}}));
  EXPECT_EQ(e["status"], "accepted");
  EXPECT_EQ(e["source"], "google");
  EXPECT_EQ(e["calendarEventOwner"], (json{{"email", "ada@example.com"}, {"name", "Ada"}}));
  ASSERT_EQ(e["attendees"].size(), 4u);
  EXPECT_EQ(e["attendees"][0], (json{{"email", "ada@example.com"},
                                     {"name", "Ada"},
                                     {"responseStatus", "accepted"},
                                     {"self", true},
                                     {"optional", false},
                                     {"host", true}}));
  EXPECT_EQ(e["attendees"][1]["responseStatus"], "pending");
  EXPECT_EQ(e["attendees"][1]["optional"], true);
  EXPECT_EQ(e["attendees"][1]["host"], false);
  EXPECT_EQ(e["attendees"][2]["responseStatus"], "declined");
  EXPECT_EQ(e["attendees"][2]["name"], "");
  EXPECT_EQ(e["attendees"][3]["responseStatus"], "needsAction");
  ASSERT_EQ(e["hosts"].size(), 1u);
  EXPECT_EQ(e["hosts"][0],
            (json{{"email", "ada@example.com"}, {"name", "Ada"}, {"responseStatus", "accepted"}}));
  EXPECT_EQ(e["locations"], json::array());
}

TEST(CalendarEventMapping, TimedEventWithoutZoneUsesCalendarZone) {
  json g = Timed();
  g["start"].erase("timeZone");
  json e = MapGoogleEvent(g, "America/New_York");
  EXPECT_EQ(e["start"]["timeZone"], "America/New_York");
  EXPECT_EQ(e["start"]["time"], "2025-03-10T09:00:00Z");
}

TEST(CalendarEventMapping, AllDayEventStartsAtMidnightOfTheCalendarZone) {
  json g = {{"id", "d"},
            {"status", "confirmed"},
            {"start", {{"date", "2025-07-04"}}},
            {"end", {{"date", "2025-07-05"}}}};
  json e = MapGoogleEvent(g, "America/New_York");  // EDT, UTC-4
  EXPECT_EQ(e["start"], (json{{"time", "2025-07-04T04:00:00Z"}, {"timeZone", "America/New_York"}}));
  EXPECT_EQ(e["end"], (json{{"time", "2025-07-05T04:00:00Z"}, {"timeZone", "America/New_York"}}));
  json winter = MapGoogleEvent({{"start", {{"date", "2025-01-15"}}}, {"end", {{"date", "2025-01-16"}}}},
                               "Europe/Berlin");
  EXPECT_EQ(winter["start"]["time"], "2025-01-14T23:00:00Z");
  json utc = MapGoogleEvent({{"start", {{"date", "2025-01-15"}}}}, "");
  EXPECT_EQ(utc["start"], (json{{"time", "2025-01-15T00:00:00Z"}, {"timeZone", "UTC"}}));
}

TEST(CalendarEventMapping, EntryPointsBecomeLocations) {
  json g = Timed();
  g["hangoutLink"] = "https://meet.google.com/abc-defg-hij";
  g["location"] = "Room 1";
  g["conferenceData"] = json::parse(R"({"entryPoints": [
    {"entryPointType": "video", "uri": "https://meet.google.com/abc-defg-hij", "label": "meet.google.com/abc-defg-hij",
     "meetingCode": "abc-defg-hij", "passcode": "secret1"},
    {"entryPointType": "phone", "uri": "tel:+1-555-0100", "label": "+1 555-0100", "pin": "123456"},
    {"entryPointType": "sip", "uri": "sip:x@example.com", "password": "pw", "accessCode": "ac"}
  ]})");
  json e = MapGoogleEvent(g, "UTC");
  ASSERT_EQ(e["locations"].size(), 3u);
  EXPECT_EQ(e["locations"][0], (json{{"type", "video"},
                                     {"url", "https://meet.google.com/abc-defg-hij"},
                                     {"label", "meet.google.com/abc-defg-hij"},
                                     {"password", "secret1"},
                                     {"meetingCode", "abc-defg-hij"}}));
  EXPECT_EQ(e["locations"][1], (json{{"type", "phone"},
                                     {"url", "tel:+1-555-0100"},
                                     {"label", "+1 555-0100"},
                                     {"accessCode", "123456"}}));
  EXPECT_EQ(e["locations"][2],
            (json{{"type", "sip"}, {"url", "sip:x@example.com"}, {"password", "pw"}, {"accessCode", "ac"}}));
}

TEST(CalendarEventMapping, HangoutLinkAndPlainLocationWithoutEntryPoints) {
  json g = Timed();
  g["hangoutLink"] = "https://meet.google.com/xyz";
  json e = MapGoogleEvent(g, "UTC");
  ASSERT_EQ(e["locations"].size(), 1u);
  EXPECT_EQ(e["locations"][0], (json{{"type", "video"}, {"url", "https://meet.google.com/xyz"}}));
  g.erase("hangoutLink");
  g["location"] = "1 Main St, Springfield";
  e = MapGoogleEvent(g, "UTC");
  ASSERT_EQ(e["locations"].size(), 1u);
  EXPECT_EQ(e["locations"][0], (json{{"type", "address"}, {"label", "1 Main St, Springfield"}}));
}

// DESIGN §9: a location field without a value is left out, never "" or null; Google's empty
// strings and values of other types count as no value.
TEST(CalendarEventMapping, LocationFieldsWithoutValueAreOmitted) {
  json g = Timed();
  g["conferenceData"] = json::parse(R"({"entryPoints": [
    {"entryPointType": "video", "uri": "https://meet.example/x", "label": "", "passcode": null,
     "meetingCode": 42, "accessCode": ""},
    {"entryPointType": "more"},
    {}
  ]})");
  json e = MapGoogleEvent(g, "UTC");
  ASSERT_EQ(e["locations"].size(), 3u);
  EXPECT_EQ(e["locations"][0], (json{{"type", "video"}, {"url", "https://meet.example/x"}}));
  EXPECT_EQ(e["locations"][1], (json{{"type", "more"}}));
  EXPECT_EQ(e["locations"][2], (json{{"type", "video"}}));
  for (const json& loc : e["locations"]) {
    for (const auto& [key, value] : loc.items()) {
      EXPECT_TRUE(value.is_string()) << key;
      EXPECT_FALSE(value.get<std::string>().empty()) << key;
    }
  }
  // An empty plain location and hangout link give no location at all.
  json plain = Timed();
  plain["location"] = "";
  plain["hangoutLink"] = "";
  EXPECT_EQ(MapGoogleEvent(plain, "UTC")["locations"], json::array());
}

TEST(CalendarEventMapping, Statuses) {
  EXPECT_EQ(MapEventStatus("confirmed"), "accepted");
  EXPECT_EQ(MapEventStatus("tentative"), "pending");
  EXPECT_EQ(MapEventStatus("cancelled"), "cancelled");
  EXPECT_EQ(MapResponseStatus("accepted"), "accepted");
  EXPECT_EQ(MapResponseStatus("tentative"), "pending");
  EXPECT_EQ(MapResponseStatus("declined"), "declined");
  EXPECT_EQ(MapResponseStatus("needsAction"), "needsAction");
  json g = Timed();
  g["status"] = "cancelled";
  EXPECT_EQ(MapGoogleEvent(g, "UTC")["status"], "cancelled");
  g["status"] = "tentative";
  EXPECT_EQ(MapGoogleEvent(g, "UTC")["status"], "pending");
}

TEST(CalendarEventMapping, MissingFieldsAndWrongTypesDoNotThrow) {
  json e = MapGoogleEvent(json::object(), "UTC");
  EXPECT_EQ(e["title"], "");
  EXPECT_EQ(e["attendees"], json::array());
  EXPECT_EQ(e["hosts"], json::array());
  EXPECT_EQ(e["calendarEventOwner"], (json{{"email", ""}, {"name", ""}}));
  EXPECT_EQ(e["start"]["time"], "");
  json weird = {{"summary", 5},
                {"attendees", "x"},
                {"organizer", 3},
                {"conferenceData", {{"entryPoints", 1}}},
                {"start", {{"dateTime", "not a time"}}}};
  EXPECT_NO_THROW(MapGoogleEvent(weird, "UTC"));
}

}  // namespace
}  // namespace rendezvous::calendar
