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
  Json j = EventTypeJson(et, "ann");
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  std::vector<std::string> want = {"afterEventBuffer",
                                   "beforeEventBuffer",
                                   "bookingFields",
                                   "bookingLimitsCount",
                                   "currency",
                                   "description",
                                   "disableGuests",
                                   "forwardParamsSuccessRedirect",
                                   "id",
                                   "isInstantEvent",
                                   "lengthInMinutes",
                                   "locations",
                                   "lockTimeZoneToggleOnBookingPage",
                                   "metadata",
                                   "minimumBookingNotice",
                                   "ownerId",
                                   "price",
                                   "recurrence",
                                   "requiresConfirmation",
                                   "scheduleId",
                                   "slotInterval",
                                   "slug",
                                   "successRedirectUrl",
                                   "title",
                                   "users"};
  EXPECT_EQ(keys, want);
  EXPECT_EQ(j["ownerId"], 9);
  EXPECT_TRUE(j["slotInterval"].is_null());
  EXPECT_TRUE(j["scheduleId"].is_null());
  EXPECT_EQ(j["bookingLimitsCount"], Json::object());
  EXPECT_EQ(j["disableGuests"], false);
  EXPECT_EQ(j["lockTimeZoneToggleOnBookingPage"], false);
  EXPECT_EQ(j["forwardParamsSuccessRedirect"], true);
  EXPECT_TRUE(j["successRedirectUrl"].is_null());
  EXPECT_EQ(j["metadata"], Json::object());
  EXPECT_EQ(j["price"], 0);
  EXPECT_EQ(j["currency"], "usd");
  EXPECT_EQ(j["isInstantEvent"], false);
  EXPECT_TRUE(j["recurrence"].is_null());
  EXPECT_EQ(j["users"], Json::array({"ann"}));
}

TEST(BookingsEventType, CalcomSettingsAreReadAndBounded) {
  Json j = Valid();
  j.update(Json{{"disableGuests", true},
                {"lockTimeZoneToggleOnBookingPage", true},
                {"forwardParamsSuccessRedirect", false},
                {"successRedirectUrl", "https://example.com/thanks?x=1"},
                {"metadata", {{"team", "sales"}, {"n", 3}}},
                {"price", 0},
                {"currency", "EUR"},
                {"isInstantEvent", false},
                {"recurrence", nullptr}});
  Result<EventTypeFields> f = ParseEventTypeCreate(j);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_TRUE(f->disable_guests);
  EXPECT_TRUE(f->lock_time_zone_toggle);
  EXPECT_FALSE(f->forward_params_success_redirect);
  EXPECT_EQ(f->success_redirect_url, "https://example.com/thanks?x=1");
  EXPECT_EQ(f->metadata, Json({{"team", "sales"}, {"n", 3}}));
  EXPECT_EQ(f->currency, "eur");

  Json metadata = Json::object();
  for (size_t i = 0; i < kMaxEventTypeMetadataKeys; ++i) metadata["k" + std::to_string(i)] = i;
  j = Valid();
  j["metadata"] = metadata;
  EXPECT_EQ(FieldOf(j), "");
  metadata["one-more"] = 1;
  j["metadata"] = metadata;
  EXPECT_EQ(FieldOf(j), "metadata");
  // {"v":"..."} is 8 bytes besides the string.
  j["metadata"] = Json{{"v", std::string(kMaxEventTypeMetadataBytes - 8, 'x')}};
  EXPECT_EQ(FieldOf(j), "");
  j["metadata"] = Json{{"v", std::string(kMaxEventTypeMetadataBytes - 7, 'x')}};
  EXPECT_EQ(FieldOf(j), "metadata");
  for (const Json& bad : {Json::array(), Json("x"), Json(1)}) {
    j["metadata"] = bad;
    EXPECT_EQ(FieldOf(j), "metadata") << bad;
  }
  j = Valid();
  for (const Json& bad : {Json("ftp://example.com"), Json("example.com"), Json("https://"), Json(5),
                          Json("https://example.com/" + std::string(kMaxRedirectUrlChars, 'a'))}) {
    j["successRedirectUrl"] = bad;
    EXPECT_EQ(FieldOf(j), "successRedirectUrl") << bad;
  }
  j = Valid();
  for (const Json& bad : {Json("us"), Json("usdx"), Json("u$d"), Json(1)}) {
    j["currency"] = bad;
    EXPECT_EQ(FieldOf(j), "currency") << bad;
  }
  for (const char* field :
       {"disableGuests", "lockTimeZoneToggleOnBookingPage", "forwardParamsSuccessRedirect"}) {
    j = Valid();
    j[field] = "true";
    EXPECT_EQ(FieldOf(j), field);
  }
}

TEST(BookingsEventType, PricedInstantAndRecurringAreRefusedWithTheirReasons) {
  auto reason = [](const char* field, const Json& value) {
    Json j = Valid();
    j[field] = value;
    Result<EventTypeFields> f = ParseEventTypeCreate(j);
    return f.ok() ? std::string("accepted") : f.status().field() + " " + f.status().reason();
  };
  EXPECT_EQ(reason("price", 1), "price payments_not_supported");
  EXPECT_EQ(reason("price", 0.5), "price payments_not_supported");
  EXPECT_EQ(reason("price", -1), "price ");
  EXPECT_EQ(reason("price", "0"), "price ");
  EXPECT_EQ(reason("price", 0.0), "accepted");
  EXPECT_EQ(reason("isInstantEvent", true), "isInstantEvent instant_not_supported");
  EXPECT_EQ(reason("isInstantEvent", 1), "isInstantEvent ");
  const Json weekly = {{"interval", 1}, {"occurrences", 4}, {"frequency", "weekly"}};
  EXPECT_EQ(reason("recurrence", weekly), "recurrence recurrence_not_supported");
  EXPECT_EQ(reason("recurrence", Json{{"disabled", false}}), "recurrence recurrence_not_supported");
  EXPECT_EQ(reason("recurrence", Json{{"disabled", true}}), "accepted");
  EXPECT_EQ(reason("recurrence", nullptr), "accepted");
}

TEST(BookingsEventType, BookingLimitsTakeCalcomsDisabled) {
  EventTypeFields f = ParseEventTypeCreate(Valid()).value();
  ASSERT_TRUE(ApplyEventTypePatch(Json{{"bookingLimitsCount", {{"day", 2}, {"disabled", false}}}}, f).ok());
  EXPECT_EQ(f.booking_limits.day, 2);
  ASSERT_TRUE(ApplyEventTypePatch(Json{{"bookingLimitsCount", {{"disabled", true}}}}, f).ok());
  EXPECT_FALSE(f.booking_limits.any());
  EXPECT_EQ(ApplyEventTypePatch(Json{{"bookingLimitsCount", {{"disabled", true}, {"day", 1}}}}, f).field(),
            "bookingLimitsCount.disabled");
  EXPECT_EQ(ApplyEventTypePatch(Json{{"bookingLimitsCount", {{"disabled", "yes"}}}}, f).field(),
            "bookingLimitsCount.disabled");
}

TEST(BookingsEventType, PatchNullResetsCalcomSettingsToTheirDefaults) {
  Json j = Valid();
  j.update(Json{{"forwardParamsSuccessRedirect", false},
                {"successRedirectUrl", "http://example.com/done"},
                {"metadata", {{"a", 1}}}});
  EventTypeFields f = ParseEventTypeCreate(j).value();
  ASSERT_TRUE(ApplyEventTypePatch(Json{{"forwardParamsSuccessRedirect", nullptr},
                                       {"successRedirectUrl", nullptr},
                                       {"metadata", nullptr}},
                                  f)
                  .ok());
  EXPECT_TRUE(f.forward_params_success_redirect);
  EXPECT_FALSE(f.success_redirect_url.has_value());
  EXPECT_EQ(f.metadata, Json::object());
  ASSERT_TRUE(ApplyEventTypePatch(Json{{"successRedirectUrl", "https://example.com/x"}}, f).ok());
  ASSERT_TRUE(ApplyEventTypePatch(Json{{"successRedirectUrl", ""}}, f).ok());
  EXPECT_FALSE(f.success_redirect_url.has_value());
  for (const char* field :
       {"disableGuests", "lockTimeZoneToggleOnBookingPage", "currency", "price", "isInstantEvent"}) {
    EXPECT_EQ(ApplyEventTypePatch(Json{{field, nullptr}}, f).field(), field) << field;
  }
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
