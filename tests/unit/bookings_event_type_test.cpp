// Event type validation (create and patch) and the JSON shape of DESIGN §9.
#include <gtest/gtest.h>

#include "event_type.hpp"

namespace rendezvous::bookings {
namespace {

Json Valid() {
  return Json{{"title", "Intro call"}, {"slug", "intro-call"}, {"lengthInMinutes", 30}};
}

std::string FieldOf(const Json& body) {
  Result<EventTypeFields> f = ParseEventTypeCreate(body);
  return f.ok() ? "" : f.status().field();
}

TEST(BookingsEventType, CreateDefaults) {
  Result<EventTypeFields> parsed = ParseEventTypeCreate(Valid());
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const EventTypeFields& f = *parsed;
  EXPECT_EQ(f.title, "Intro call");
  EXPECT_EQ(f.length_minutes, 30);
  EXPECT_EQ(f.description, "");
  EXPECT_EQ(f.locations, Json::array());
  EXPECT_FALSE(f.requires_confirmation);
  EXPECT_FALSE(f.slot_interval.has_value());
}

TEST(BookingsEventType, CreateRefusesBadFieldsNamingThem) {
  EXPECT_EQ(FieldOf(Json::object()), "title");
  Json j = Valid();
  j.erase("slug");
  EXPECT_EQ(FieldOf(j), "slug");
  for (int bad : {0, -5, 1441}) {
    j = Valid();
    j["lengthInMinutes"] = bad;
    EXPECT_EQ(FieldOf(j), "lengthInMinutes") << bad;
  }
  j = Valid();
  j["lengthInMinutes"] = "30";
  EXPECT_EQ(FieldOf(j), "lengthInMinutes");
  j = Valid();
  j["title"] = std::string(256, 'a');
  EXPECT_EQ(FieldOf(j), "title");
  j = Valid();
  j["title"] = "   ";
  EXPECT_EQ(FieldOf(j), "title");
  j = Valid();
  j["title"] = "bad\x01";
  EXPECT_EQ(FieldOf(j), "title");
  for (const char* slug : {"Intro", "a b", "-a", "a--b", "a-", ""}) {
    j = Valid();
    j["slug"] = slug;
    EXPECT_EQ(FieldOf(j), "slug") << slug;
  }
  j = Valid();
  j["color"] = "red";
  EXPECT_EQ(FieldOf(j), "color");
  j = Valid();
  j["ownerId"] = 7;
  EXPECT_EQ(FieldOf(j), "ownerId");
  j = Valid();
  j["slotInterval"] = 0;
  EXPECT_EQ(FieldOf(j), "slotInterval");
  j = Valid();
  j["requiresConfirmation"] = 1;
  EXPECT_EQ(FieldOf(j), "requiresConfirmation");
  j = Valid();
  j["minimumBookingNotice"] = 525601;
  EXPECT_EQ(FieldOf(j), "minimumBookingNotice");
  j = Valid();
  j["description"] = std::string(10001, 'd');
  EXPECT_EQ(FieldOf(j), "description");
}

TEST(BookingsEventType, Locations) {
  Result<Json> parsed = ParseLocations(Json::parse(R"([{"type":"integration","integration":"google-meet"},
      {"type":"address","address":" Main St 1 "},{"type":"link","link":"https://x.example/m","public":false},
      {"type":"phone","phone":"+14155550123"}])"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const Json& out = *parsed;
  EXPECT_EQ(out[0], Json::parse(R"({"type":"integration","integration":"google-meet"})"));
  EXPECT_EQ(out[1], Json::parse(R"({"type":"address","address":"Main St 1","public":true})"));
  EXPECT_EQ(out[2]["public"], false);
  EXPECT_EQ(BookingLocation(out), "integrations:google:meet");
  EXPECT_EQ(BookingLocation(Json::array({out[2]})), "https://x.example/m");
  EXPECT_FALSE(BookingLocation(Json::array()).has_value());

  auto field = [](const char* text) {
    Result<Json> o = ParseLocations(Json::parse(text));
    return o.ok() ? "" : o.status().field();
  };
  EXPECT_EQ(field(R"([{"type":"integration","integration":"zoom"}])"), "locations[0].integration");
  EXPECT_EQ(field(R"([{"type":"link","link":"ftp://x"}])"), "locations[0].link");
  EXPECT_EQ(field(R"([{"type":"phone","phone":"12345"}])"), "locations[0].phone");
  EXPECT_EQ(field(R"([{"type":"address","address":""}])"), "locations[0].address");
  EXPECT_EQ(field(R"([{"type":"teleport"}])"), "locations[0].type");
  EXPECT_EQ(field(R"([{"type":"address","address":"x","extra":1}])"), "locations[0].extra");
  EXPECT_EQ(field(R"({"type":"address"})"), "locations");
  Json many = Json::array();
  for (int i = 0; i < 11; ++i) many.push_back({{"type", "integration"}, {"integration", "google-meet"}});
  EXPECT_EQ(ParseLocations(many).status().field(), "locations");
  EXPECT_EQ(ParseLocations(many).status().message(), "locations must have at most 10 entries");
}

TEST(BookingsEventType, PatchKeepsAbsentAndResetsNull) {
  EventTypeFields f = ParseEventTypeCreate(Valid()).value();
  f.slot_interval = 15;
  f.description = "text";
  ASSERT_TRUE(ApplyEventTypePatch(
                  Json{{"lengthInMinutes", 45}, {"slotInterval", nullptr}, {"description", nullptr}}, f)
                  .ok());
  EXPECT_EQ(f.length_minutes, 45);
  EXPECT_EQ(f.title, "Intro call");
  EXPECT_FALSE(f.slot_interval.has_value());
  EXPECT_EQ(f.description, "");
  Status e = ApplyEventTypePatch(Json{{"title", nullptr}}, f);
  EXPECT_EQ(e.code(), ErrorCode::kInvalid);
  EXPECT_EQ(e.field(), "title");
  EXPECT_EQ(e.message(), "title must be a string");
  e = ApplyEventTypePatch(Json{{"id", 3}}, f);
  EXPECT_EQ(e.field(), "id");
  EXPECT_EQ(e.message(), "id is read-only");
}

TEST(BookingsEventType, JsonShape) {
  EventType et;
  et.id = 4;
  et.owner_id = 9;
  et.fields = ParseEventTypeCreate(Valid()).value();
  Json j = EventTypeJson(et);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  std::vector<std::string> want = {"afterEventBuffer",
                                   "beforeEventBuffer",
                                   "bookingLimitsCount",
                                   "description",
                                   "id",
                                   "lengthInMinutes",
                                   "locations",
                                   "minimumBookingNotice",
                                   "ownerId",
                                   "requiresConfirmation",
                                   "scheduleId",
                                   "slotInterval",
                                   "slug",
                                   "title"};
  EXPECT_EQ(keys, want);
  EXPECT_EQ(j["ownerId"], 9);
  EXPECT_TRUE(j["slotInterval"].is_null());
  EXPECT_TRUE(j["scheduleId"].is_null());
  EXPECT_TRUE(j["bookingLimitsCount"].is_null());
}

TEST(BookingsEventType, ScheduleIdIsAPositiveIdOrNull) {
  Json j = Valid();
  j["scheduleId"] = 12;
  Result<EventTypeFields> f = ParseEventTypeCreate(j);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->schedule_id, 12);
  for (Json bad : {Json(0), Json(-3), Json("12"), Json(1.5), Json::array()}) {
    j["scheduleId"] = bad;
    EXPECT_EQ(FieldOf(j), "scheduleId") << bad;
  }
  EventTypeFields fields = *f;
  ASSERT_TRUE(ApplyEventTypePatch(Json{{"scheduleId", nullptr}}, fields).ok());
  EXPECT_FALSE(fields.schedule_id.has_value());
}

}  // namespace
}  // namespace rendezvous::bookings
