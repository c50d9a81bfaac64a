// Event type routes with API keys against the real binary and MariaDB: create, list, get, patch,
// delete; another user's event type is 404; duplicate slugs 409; validation 400s store nothing;
// an event type with bookings cannot be deleted (409); booking limits are checked, stored, patched;
// Cal.com's settings round-trip, are bounded, and priced, instant and recurring event types are
// refused with DESIGN §10's codes; every answer carries the fields Cal.com's document requires.
// (The migration of event types from before the settings: bookings_services_db_test.)
#include <functional>
#include <set>

#include "bookings_fixture.hpp"

namespace rendezvous::testing {
namespace {

// Cal.com's EventTypeOutput_2024_06_14 (../shared/peers/calcom-api-v2.openapi.json): its required
// fields and their types, as `jq` reads them there. `forwardParamsSuccessRedirect`,
// `successRedirectUrl` (typed `object` there) and `slotInterval` are read as its
// TeamEventTypeOutput_2024_06_14 types them (docs/calcom-compatibility.md).
struct CalcomField {
  const char* name;
  std::function<bool(const json&)> type;
  bool nullable;
};
bool IsStringArray(const json& v) {
  if (!v.is_array()) return false;
  for (const json& item : v) {
    if (!item.is_string()) return false;
  }
  return true;
}
const std::vector<CalcomField>& CalcomRequired() {
  static const std::vector<CalcomField> kFields = {
      {"id", &json::is_number, false},
      {"lengthInMinutes", &json::is_number, false},
      {"title", &json::is_string, false},
      {"slug", &json::is_string, false},
      {"description", &json::is_string, false},
      {"locations", &json::is_array, false},
      {"disableGuests", &json::is_boolean, false},
      {"recurrence", &json::is_object, true},
      {"metadata", &json::is_object, false},
      {"price", &json::is_number, false},
      {"currency", &json::is_string, false},
      {"lockTimeZoneToggleOnBookingPage", &json::is_boolean, false},
      {"forwardParamsSuccessRedirect", &json::is_boolean, true},
      {"successRedirectUrl", &json::is_string, true},
      {"isInstantEvent", &json::is_boolean, false},
      {"scheduleId", &json::is_number, true},
      {"ownerId", &json::is_number, false},
      {"users", IsStringArray, false},
      // Also required there: `bookingFields` (booking questions), not served yet.
  };
  return kFields;
}
// Optional there, typed when present.
const std::vector<CalcomField>& CalcomOptional() {
  static const std::vector<CalcomField> kFields = {
      {"minimumBookingNotice", &json::is_number, false}, {"beforeEventBuffer", &json::is_number, false},
      {"afterEventBuffer", &json::is_number, false},     {"slotInterval", &json::is_number, true},
      {"bookingLimitsCount", &json::is_object, false},
  };
  return kFields;
}

// Every Cal.com field of `et` present with its type; `where` names the answer.
void ExpectCalcomShape(const json& et, const std::string& where) {
  ASSERT_TRUE(et.is_object()) << where << ": " << et.dump();
  for (const CalcomField& f : CalcomRequired()) {
    ASSERT_TRUE(et.contains(f.name)) << where << " lacks " << f.name << ": " << et.dump();
    const json& v = et[f.name];
    EXPECT_TRUE(f.type(v) || (f.nullable && v.is_null())) << where << ": " << f.name << " = " << v.dump();
  }
  for (const CalcomField& f : CalcomOptional()) {
    if (!et.contains(f.name)) continue;
    const json& v = et[f.name];
    EXPECT_TRUE(f.type(v) || (f.nullable && v.is_null())) << where << ": " << f.name << " = " << v.dump();
  }
}

json Settings() {
  return {{"disableGuests", true},
          {"lockTimeZoneToggleOnBookingPage", true},
          {"forwardParamsSuccessRedirect", false},
          {"successRedirectUrl", "https://example.com/thanks?from=rendezvous"},
          {"metadata",
           {{"team", "sales"},
            {"tags", {"a", "b"}},
            {"nested", {{"n", 1.5}, {"ok", true}}},
            {"label", "Caf\u00e9 \u2615 \U0001F389"}}},
          {"price", 0},
          {"currency", "eur"},
          {"isInstantEvent", false},
          {"recurrence", nullptr}};
}

class BookingsEventTypes : public BookingsFixture {
 protected:
  void SetUp() override { StartServer(); }
};

TEST_F(BookingsEventTypes, CreateListGetPatchDelete) {
  json body = {{"title", "Intro call"},
               {"slug", "intro-call"},
               {"lengthInMinutes", 30},
               {"description", "Say hello"},
               {"locations", json::parse(R"([{"type":"integration","integration":"google-meet"}])")},
               {"requiresConfirmation", true},
               {"minimumBookingNotice", 60},
               {"beforeEventBuffer", 5},
               {"afterEventBuffer", 10},
               {"slotInterval", 15}};
  HttpResult created = Call("POST", "/v2/event-types", owner_key_, body);
  ASSERT_EQ(created.status, 201) << created.body;
  json et = created.Json()["data"];
  EXPECT_EQ(created.Json()["status"], "success");
  EXPECT_GT(et["id"].get<int64_t>(), 0);
  EXPECT_EQ(et["ownerId"], owner_);
  for (auto it = body.begin(); it != body.end(); ++it) EXPECT_EQ(et[it.key()], it.value()) << it.key();
  EXPECT_TRUE(et["scheduleId"].is_null());
  EXPECT_EQ(et["bookingLimitsCount"], json::object());
  EXPECT_EQ(et.size(), 25u) << et.dump();
  const std::string path = "/v2/event-types/" + std::to_string(et["id"].get<int64_t>());

  CreateEventType(owner_key_, "second");
  CreateEventType(other_key_, "intro-call");  // the same slug is fine for another user

  HttpResult list = Call("GET", "/v2/event-types", owner_key_);
  ASSERT_EQ(list.status, 200) << list.body;
  ASSERT_EQ(list.Json()["data"].size(), 2u) << list.body;
  EXPECT_EQ(list.Json()["data"][0], et);
  EXPECT_EQ(list.Json()["data"][1]["slug"], "second");

  HttpResult got = Call("GET", path, owner_key_);
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(got.Json()["data"], et);

  HttpResult patched =
      Call("PATCH", path, owner_key_, json{{"lengthInMinutes", 45}, {"slotInterval", nullptr}});
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(patched.Json()["data"]["lengthInMinutes"], 45);
  EXPECT_TRUE(patched.Json()["data"]["slotInterval"].is_null());
  EXPECT_EQ(patched.Json()["data"]["title"], "Intro call");
  EXPECT_EQ(Call("GET", path, owner_key_).Json()["data"], patched.Json()["data"]);

  HttpResult deleted = Call("DELETE", path, owner_key_);
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(deleted.Json()["data"]["id"], et["id"]);
  EXPECT_EQ(Call("GET", path, owner_key_).status, 404);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM event_types WHERE owner_id = " + std::to_string(owner_)), 1);
}

TEST_F(BookingsEventTypes, AnotherUsersEventTypeIsNotFound) {
  json et = CreateEventType(owner_key_, "mine");
  const std::string path = "/v2/event-types/" + std::to_string(et["id"].get<int64_t>());
  for (const char* method : {"GET", "PATCH", "DELETE"}) {
    HttpResult r = Call(method, path, other_key_, std::string(method) == "PATCH" ? R"({"title":"x"})" : "");
    EXPECT_EQ(r.status, 404) << method << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["code"], "not_found");
  }
  EXPECT_EQ(Call("GET", "/v2/event-types", other_key_).Json()["data"], json::array());
  EXPECT_EQ(Call("GET", "/v2/event-types/999999", owner_key_).status, 404);
  EXPECT_EQ(Call("GET", "/v2/event-types/abc", owner_key_).status, 404);
  EXPECT_EQ(
      db_.QueryValue("SELECT title FROM event_types WHERE id = " + std::to_string(et["id"].get<int64_t>())),
      "Intro mine");
  EXPECT_EQ(Call("GET", "/v2/event-types", "").status, 401);
}

TEST_F(BookingsEventTypes, DuplicateSlugIsConflict) {
  CreateEventType(owner_key_, "taken");
  json other = CreateEventType(owner_key_, "free");
  HttpResult dup = Call("POST", "/v2/event-types", owner_key_,
                        json{{"title", "T"}, {"slug", "taken"}, {"lengthInMinutes", 15}});
  EXPECT_EQ(dup.status, 409) << dup.body;
  HttpResult patch = Call("PATCH", "/v2/event-types/" + std::to_string(other["id"].get<int64_t>()),
                          owner_key_, json{{"slug", "taken"}});
  EXPECT_EQ(patch.status, 409) << patch.body;
  EXPECT_EQ(Count("SELECT COUNT(*) FROM event_types"), 2);
  EXPECT_EQ(
      db_.QueryValue("SELECT slug FROM event_types WHERE id = " + std::to_string(other["id"].get<int64_t>())),
      "free");
}

TEST_F(BookingsEventTypes, ValidationNamesTheFieldAndStoresNothing) {
  const json good = {{"title", "T"}, {"slug", "ok"}, {"lengthInMinutes", 30}};
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"j({"slug":"ok","lengthInMinutes":30})j", "title"},
      {R"j({"title":"T","lengthInMinutes":30})j", "slug"},
      {R"j({"title":"T","slug":"ok"})j", "lengthInMinutes"},
      {R"j({"title":"T","slug":"ok","lengthInMinutes":0})j", "lengthInMinutes"},
      {R"j({"title":"T","slug":"ok","lengthInMinutes":1441})j", "lengthInMinutes"},
      {R"j({"title":"T","slug":"Not A Slug","lengthInMinutes":30})j", "slug"},
      {R"j({"title":"T","slug":"ok","lengthInMinutes":30,"locations":[{"type":"integration","integration":"skype"}]})j",
       "locations[0].integration"},
      {R"j({"title":"T","slug":"ok","lengthInMinutes":30,"locations":[{"type":"link","link":"javascript:alert(1)"}]})j",
       "locations[0].link"},
      {R"j({"title":"T","slug":"ok","lengthInMinutes":30,"slotInterval":-1})j", "slotInterval"},
      {R"j({"title":"T","slug":"ok","lengthInMinutes":30,"ownerId":5})j", "ownerId"},
      {R"j({"title":"T","slug":"ok","lengthInMinutes":30,"unknownField":1})j", "unknownField"},
      {json{{"title", std::string(256, 't')}, {"slug", "ok"}, {"lengthInMinutes", 30}}.dump(), "title"},
      {json{{"title", "T"}, {"slug", "ok"}, {"lengthInMinutes", 30}, {"description", std::string(10001, 'd')}}
           .dump(),
       "description"},
  };
  for (const auto& [body, field] : cases) {
    HttpResult r = Call("POST", "/v2/event-types", owner_key_, body);
    EXPECT_EQ(r.status, 400) << body << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["code"], "validation_error") << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], field) << r.body;
  }
  EXPECT_EQ(Call("POST", "/v2/event-types", owner_key_, std::string("{not json")).status, 400);
  HttpResult wrong_type = http_.Request("POST", server_->api() + "/v2/event-types", good.dump(),
                                        {"Authorization: Bearer " + owner_key_, "Content-Type: text/plain"});
  EXPECT_EQ(wrong_type.status, 415);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM event_types"), 0);

  json et = CreateEventType(owner_key_, "valid");
  const std::string path = "/v2/event-types/" + std::to_string(et["id"].get<int64_t>());
  HttpResult bad_patch = Call("PATCH", path, owner_key_, json{{"title", "New"}, {"lengthInMinutes", 5000}});
  EXPECT_EQ(bad_patch.status, 400);
  EXPECT_EQ(bad_patch.Json()["error"]["details"]["field"], "lengthInMinutes");
  EXPECT_EQ(Call("GET", path, owner_key_).Json()["data"], et);
}

TEST_F(BookingsEventTypes, BookingLimitsAreCheckedStoredAndPatched) {
  const std::vector<std::pair<json, std::string>> bad = {
      {json{{"day", 0}}, "bookingLimitsCount.day"},
      {json{{"week", 1001}}, "bookingLimitsCount.week"},
      {json{{"month", "5"}}, "bookingLimitsCount.month"},
      {json{{"year", 2.5}}, "bookingLimitsCount.year"},
      {json{{"hour", 1}}, "bookingLimitsCount.hour"},
      {json::array({1}), "bookingLimitsCount"},
      {json(3), "bookingLimitsCount"},
  };
  for (const auto& [limits, field] : bad) {
    HttpResult r = Call("POST", "/v2/event-types", owner_key_,
                        json{{"title", "T"}, {"slug", "limited"}, {"lengthInMinutes", 30}, {"bookingLimitsCount", limits}});
    EXPECT_EQ(r.status, 400) << limits.dump() << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], field) << r.body;
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM event_types"), 0);

  const json limits = {{"day", 1}, {"week", 5}, {"month", 20}, {"year", 1000}};
  json et = CreateEventType(owner_key_, "limited", 30, {{"bookingLimitsCount", limits}});
  EXPECT_EQ(et["bookingLimitsCount"], limits);
  const std::string path = "/v2/event-types/" + std::to_string(et["id"].get<int64_t>());
  EXPECT_EQ(Call("GET", path, owner_key_).Json()["data"]["bookingLimitsCount"], limits);
  // A PATCH replaces the limits whole; a bad one changes nothing; null (or {}) clears them.
  HttpResult patched = Call("PATCH", path, owner_key_, json{{"bookingLimitsCount", {{"week", 3}}}});
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(patched.Json()["data"]["bookingLimitsCount"], json({{"week", 3}}));
  EXPECT_EQ(Call("PATCH", path, owner_key_, json{{"bookingLimitsCount", {{"week", 0}}}}).status, 400);
  EXPECT_EQ(Call("GET", path, owner_key_).Json()["data"]["bookingLimitsCount"], json({{"week", 3}}));
  EXPECT_EQ(Call("PATCH", path, owner_key_, json{{"title", "Renamed"}}).Json()["data"]["bookingLimitsCount"],
            json({{"week", 3}}));
  HttpResult cleared = Call("PATCH", path, owner_key_, json{{"bookingLimitsCount", nullptr}});
  ASSERT_EQ(cleared.status, 200) << cleared.body;
  EXPECT_EQ(cleared.Json()["data"]["bookingLimitsCount"], json::object());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM event_types WHERE limit_week IS NOT NULL"), 0);
}

TEST_F(BookingsEventTypes, EventTypeWithBookingsCannotBeDeleted) {
  json et = CreateEventType(owner_key_, "booked");
  const int64_t id = et["id"].get<int64_t>();
  Import(owner_, id, In(60 * 24));
  HttpResult r = Call("DELETE", "/v2/event-types/" + std::to_string(id), owner_key_);
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.Json()["error"]["message"].get<std::string>().find("bookings"), std::string::npos);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM event_types WHERE id = " + std::to_string(id)), 1);
  EXPECT_EQ(Call("GET", "/v2/event-types/" + std::to_string(id), owner_key_).status, 200);
}

TEST_F(BookingsEventTypes, CalcomSettingsRoundTrip) {
  const json settings = Settings();
  json created = CreateEventType(owner_key_, "settings", 30, settings);
  ASSERT_TRUE(created.is_object());
  for (auto it = settings.begin(); it != settings.end(); ++it) {
    EXPECT_EQ(created[it.key()], it.value()) << it.key();
  }
  EXPECT_EQ(created["users"], json::array({"owner"}));  // the username derived from owner@example.com
  const std::string path = "/v2/event-types/" + std::to_string(created["id"].get<int64_t>());
  EXPECT_EQ(Call("GET", path, owner_key_).Json()["data"], created);
  EXPECT_EQ(Call("GET", "/v2/event-types", owner_key_).Json()["data"][0], created);

  // Each field alone, then read back: only it changes.
  json expected = created;
  const std::vector<std::pair<std::string, json>> changes = {
      {"disableGuests", false},
      {"lockTimeZoneToggleOnBookingPage", false},
      {"forwardParamsSuccessRedirect", true},
      {"successRedirectUrl", "http://example.org/after"},
      {"metadata", {{"only", "this"}}},
      {"currency", "gbp"},
      {"price", 0},
      {"isInstantEvent", false},
      {"recurrence", nullptr},
  };
  for (const auto& [field, value] : changes) {
    HttpResult r = Call("PATCH", path, owner_key_, json{{field, value}});
    ASSERT_EQ(r.status, 200) << field << " " << r.body;
    expected[field] = value;
    EXPECT_EQ(r.Json()["data"], expected) << field;
    EXPECT_EQ(Call("GET", path, owner_key_).Json()["data"], expected) << field;
  }
  // Cal.com's spellings: an upper-case currency, an empty redirect, {"disabled": true}.
  HttpResult spelled = Call("PATCH", path, owner_key_,
                            json{{"currency", "CHF"},
                                 {"successRedirectUrl", ""},
                                 {"recurrence", {{"disabled", true}}},
                                 {"bookingLimitsCount", {{"disabled", true}}}});
  ASSERT_EQ(spelled.status, 200) << spelled.body;
  EXPECT_EQ(spelled.Json()["data"]["currency"], "chf");
  EXPECT_TRUE(spelled.Json()["data"]["successRedirectUrl"].is_null());
  EXPECT_TRUE(spelled.Json()["data"]["recurrence"].is_null());
  EXPECT_EQ(spelled.Json()["data"]["bookingLimitsCount"], json::object());
  // null gives back the defaults.
  HttpResult reset = Call(
      "PATCH", path, owner_key_,
      json{
          {"metadata", nullptr}, {"forwardParamsSuccessRedirect", nullptr}, {"successRedirectUrl", nullptr}});
  ASSERT_EQ(reset.status, 200) << reset.body;
  EXPECT_EQ(reset.Json()["data"]["metadata"], json::object());
  EXPECT_EQ(reset.Json()["data"]["forwardParamsSuccessRedirect"], true);
  EXPECT_TRUE(reset.Json()["data"]["successRedirectUrl"].is_null());

  // Stored, not only echoed.
  const std::string id = std::to_string(created["id"].get<int64_t>());
  EXPECT_EQ(
      db_.QueryValue("SELECT CONCAT_WS(',', disable_guests, lock_time_zone_toggle, "
                     "forward_params_success_redirect, currency, IFNULL(metadata, 'none')) FROM event_types "
                     "WHERE id = " +
                     id),
      "0,0,1,chf,none");
  ASSERT_EQ(Call("PATCH", path, owner_key_, json{{"metadata", {{"k", "v"}}}, {"disableGuests", true}}).status,
            200);
  EXPECT_EQ(
      db_.QueryValue("SELECT CONCAT_WS(',', disable_guests, metadata) FROM event_types WHERE id = " + id),
      R"(1,{"k":"v"})");
  // A change of another member keeps the settings.
  HttpResult renamed = Call("PATCH", path, owner_key_, json{{"title", "Renamed"}});
  EXPECT_EQ(renamed.Json()["data"]["metadata"], json({{"k", "v"}}));
  EXPECT_EQ(renamed.Json()["data"]["disableGuests"], true);
}

TEST_F(BookingsEventTypes, PricedInstantAndRecurringAreRefusedWithTheirCodes) {
  json et = CreateEventType(owner_key_, "plain");
  const std::string path = "/v2/event-types/" + std::to_string(et["id"].get<int64_t>());
  const std::vector<std::tuple<std::string, json, std::string>> refused = {
      {"price", 1, "payments_not_supported"},
      {"price", 49.99, "payments_not_supported"},
      {"isInstantEvent", true, "instant_not_supported"},
      {"recurrence",
       {{"interval", 1}, {"occurrences", 4}, {"frequency", "weekly"}},
       "recurrence_not_supported"},
      {"recurrence", {{"disabled", false}}, "recurrence_not_supported"},
  };
  for (const auto& [field, value, code] : refused) {
    json body = {{"title", "T"}, {"slug", "refused"}, {"lengthInMinutes", 30}, {field, value}};
    for (const auto& [method, target] :
         {std::pair{"POST", std::string("/v2/event-types")}, std::pair{"PATCH", path}}) {
      HttpResult r = Call(method, target, owner_key_, body);
      EXPECT_EQ(r.status, 400) << method << " " << body.dump() << " " << r.body;
      const json answer = r.Json();
      EXPECT_EQ(answer["status"], "error") << r.body;
      EXPECT_EQ(answer["error"]["code"], code) << r.body;
      EXPECT_EQ(answer["error"]["details"]["field"], field) << r.body;
      EXPECT_TRUE(answer["error"]["message"].is_string()) << r.body;
    }
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM event_types"), 1);
  EXPECT_EQ(Call("GET", path, owner_key_).Json()["data"], et);
}

TEST_F(BookingsEventTypes, SettingsBoundsHoldAndStoreNothing) {
  json keys = json::object();
  for (int i = 0; i <= 50; ++i) keys["key" + std::to_string(i)] = i;
  json fifty = keys;
  fifty.erase("key50");
  const std::vector<std::pair<json, std::string>> bad = {
      {{{"metadata", keys}}, "metadata"},
      {{{"metadata", {{"v", std::string(16 * 1024, 'x')}}}}, "metadata"},
      {{{"metadata", json::array({1})}}, "metadata"},
      {{{"metadata", "text"}}, "metadata"},
      {{{"successRedirectUrl", "javascript:alert(1)"}}, "successRedirectUrl"},
      {{{"successRedirectUrl", "https://example.com/" + std::string(2048, 'a')}}, "successRedirectUrl"},
      {{{"successRedirectUrl", "https://exa mple.com/"}}, "successRedirectUrl"},
      {{{"successRedirectUrl", 7}}, "successRedirectUrl"},
      {{{"currency", "euro"}}, "currency"},
      {{{"currency", "e1r"}}, "currency"},
      {{{"price", -1}}, "price"},
      {{{"price", "0"}}, "price"},
      {{{"isInstantEvent", "false"}}, "isInstantEvent"},
      {{{"disableGuests", nullptr}}, "disableGuests"},
      {{{"lockTimeZoneToggleOnBookingPage", 1}}, "lockTimeZoneToggleOnBookingPage"},
      {{{"forwardParamsSuccessRedirect", "yes"}}, "forwardParamsSuccessRedirect"},
      {{{"bookingLimitsCount", {{"disabled", true}, {"day", 2}}}}, "bookingLimitsCount.disabled"},
  };
  for (const auto& [extra, field] : bad) {
    json body = {{"title", "T"}, {"slug", "bounded"}, {"lengthInMinutes", 30}};
    body.update(extra);
    HttpResult r = Call("POST", "/v2/event-types", owner_key_, body);
    EXPECT_EQ(r.status, 400) << extra.dump().substr(0, 200) << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["code"], "validation_error") << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], field) << r.body;
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM event_types"), 0);

  // At the bounds: 50 keys; 16 KiB of JSON exactly ({"v":"..."} is 8 bytes besides the string);
  // a 2048-character URL.
  const std::string url = "https://example.com/" + std::string(2048 - 20, 'a');
  json at_bounds =
      CreateEventType(owner_key_, "at-bounds", 30, {{"metadata", fifty}, {"successRedirectUrl", url}});
  EXPECT_EQ(at_bounds["metadata"], fifty);
  EXPECT_EQ(at_bounds["successRedirectUrl"], url);
  const std::string path = "/v2/event-types/" + std::to_string(at_bounds["id"].get<int64_t>());
  const json big = {{"v", std::string(16 * 1024 - 8, 'x')}};
  HttpResult full = Call("PATCH", path, owner_key_, json{{"metadata", big}});
  ASSERT_EQ(full.status, 200) << full.body.substr(0, 300);
  EXPECT_EQ(Call("GET", path, owner_key_).Json()["data"]["metadata"], big);
  // A refused PATCH leaves the stored metadata as it was.
  HttpResult over = Call("PATCH", path, owner_key_, json{{"title", "New"}, {"metadata", keys}});
  EXPECT_EQ(over.status, 400);
  const json now = Call("GET", path, owner_key_).Json()["data"];
  EXPECT_EQ(now["metadata"], big);
  EXPECT_EQ(now["title"], "Intro at-bounds");
}

TEST_F(BookingsEventTypes, AnswersCarryCalcomsRequiredFields) {
  json created_answer;
  {
    HttpResult r = Call("POST", "/v2/event-types", owner_key_,
                        json{{"title", "Plain"}, {"slug", "plain"}, {"lengthInMinutes", 30}});
    ASSERT_EQ(r.status, 201) << r.body;
    created_answer = r.Json();
  }
  EXPECT_EQ(created_answer["status"], "success");
  ExpectCalcomShape(created_answer["data"], "create (defaults)");
  EXPECT_EQ(created_answer["data"]["disableGuests"], false);
  EXPECT_EQ(created_answer["data"]["lockTimeZoneToggleOnBookingPage"], false);
  EXPECT_EQ(created_answer["data"]["forwardParamsSuccessRedirect"], true);
  EXPECT_TRUE(created_answer["data"]["successRedirectUrl"].is_null());
  EXPECT_EQ(created_answer["data"]["metadata"], json::object());
  EXPECT_EQ(created_answer["data"]["price"], 0);
  EXPECT_EQ(created_answer["data"]["currency"], "usd");
  EXPECT_EQ(created_answer["data"]["isInstantEvent"], false);
  EXPECT_TRUE(created_answer["data"]["recurrence"].is_null());

  json full = CreateEventType(
      owner_key_, "full", 45,
      {{"slotInterval", 15}, {"bookingLimitsCount", {{"week", 3}}}, {"metadata", {{"a", 1}}}});
  ExpectCalcomShape(full, "create (settings)");
  const std::string path = "/v2/event-types/" + std::to_string(full["id"].get<int64_t>());
  HttpResult got = Call("GET", path, owner_key_);
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(got.Json()["status"], "success");
  ExpectCalcomShape(got.Json()["data"], "get");
  HttpResult patched = Call("PATCH", path, owner_key_, json{{"successRedirectUrl", "https://example.com/x"}});
  ASSERT_EQ(patched.status, 200) << patched.body;
  ExpectCalcomShape(patched.Json()["data"], "patch");
  HttpResult list = Call("GET", "/v2/event-types", owner_key_);
  ASSERT_EQ(list.status, 200);
  ASSERT_TRUE(list.Json()["data"].is_array());
  ASSERT_EQ(list.Json()["data"].size(), 2u);
  const json listed = list.Json()["data"];
  for (const json& et : listed) ExpectCalcomShape(et, "list");
}

}  // namespace
}  // namespace rendezvous::testing
