// Event type routes with API keys against the real binary and MariaDB: create, list, get, patch,
// delete; another user's event type is 404; duplicate slugs 409; validation 400s store nothing;
// an event type with bookings cannot be deleted (409); booking limits are checked, stored, patched.
#include "bookings_fixture.hpp"

namespace rendezvous::testing {
namespace {

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
  EXPECT_TRUE(et["bookingLimitsCount"].is_null());
  EXPECT_EQ(et.size(), 14u) << et.dump();
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
  EXPECT_TRUE(cleared.Json()["data"]["bookingLimitsCount"].is_null());
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

}  // namespace
}  // namespace rendezvous::testing
