// Schedule routes against the real binary and MariaDB: create, list, get, patch, delete, the
// default (made with the user, stored or implicit) and its rules, another user's schedule is 404,
// validation 400s store nothing, at most 100 schedules, the scopes (PROFILE_READ /
// PROFILE_WRITE), and an event type's scheduleId (round trip, another user's schedule refused, a
// named schedule cannot be deleted).
#include "bookings_fixture.hpp"

namespace rendezvous::testing {
namespace {

const json kNineToFive = json::parse(R"([{"days": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
                                          "startTime": "09:00", "endTime": "17:00"}])");

class BookingsSchedules : public BookingsFixture {
 protected:
  // Every user is made with a stored default schedule; these tests start from users who deleted
  // it (and so have none: the implicit default and the first-schedule rule apply), except
  // UsersAreMadeWithTheImplicitDefaultStored.
  void SetUp() override {
    StartServer();
    for (const std::string& key : {owner_key_, other_key_}) {
      const json made = Get("/v2/schedules/default", key);
      ASSERT_TRUE(made["id"].is_number_integer()) << made;
      ASSERT_EQ(Call("DELETE", PathOf(made), key).status, 200);
    }
  }

  // POST /v2/schedules as `token`; returns the schedule (fails the test unless 201).
  json CreateSchedule(const std::string& token, json body = json::object()) {
    HttpResult r = Call("POST", "/v2/schedules", token, body);
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Json()["data"];
  }
  static std::string PathOf(const json& schedule) {
    return "/v2/schedules/" + std::to_string(schedule["id"].get<int64_t>());
  }
  json Get(const std::string& path, const std::string& token) {
    HttpResult r = Call("GET", path, token);
    EXPECT_EQ(r.status, 200) << path << " " << r.body;
    return r.Json()["data"];
  }
  int64_t Defaults(int64_t owner) const {
    return Count("SELECT COUNT(*) FROM schedules WHERE default_owner_id IS NOT NULL AND owner_id = " +
                 std::to_string(owner));
  }
};

// A user is made with a default schedule of the implicit default's hours, in the user's time zone,
// stored with the user (DESIGN §9, §10): /default and /v2/me name it, and it is the only one.
TEST_F(BookingsSchedules, UsersAreMadeWithTheImplicitDefaultStored) {
  CliResult made = server_->Cli({"admin", "user", "create", "--email", "tokyo@example.com", "--name", "Taro",
                                 "--password", "a long password 123", "--time-zone", "Asia/Tokyo"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const int64_t user = made.Json()["id"].get<int64_t>();
  const std::string key = server_->CreateApiKey(user);
  const json stored = Get("/v2/schedules/default", key);
  ASSERT_TRUE(stored["id"].is_number_integer()) << stored;
  EXPECT_EQ(stored, json({{"id", stored["id"]},
                          {"ownerId", user},
                          {"name", "Working hours"},
                          {"timeZone", "Asia/Tokyo"},
                          {"isDefault", true},
                          {"availability", kNineToFive},
                          {"overrides", json::array()}}));
  EXPECT_EQ(Get("/v2/schedules", key), json::array({stored}));
  EXPECT_EQ(Get("/v2/me", key)["defaultScheduleId"], stored["id"]);
  EXPECT_EQ(Defaults(user), 1);
  // A later schedule is not the default unless asked for.
  EXPECT_FALSE(CreateSchedule(key, {{"name", "Later"}})["isDefault"].get<bool>());
  EXPECT_EQ(Get("/v2/schedules/default", key), stored);
  // A creation that fails (the e-mail is taken) stores no schedule either.
  const int64_t schedules = Count("SELECT COUNT(*) FROM schedules");
  CliResult taken = server_->Cli({"admin", "user", "create", "--email", "tokyo@example.com", "--name",
                                  "Taro 2", "--password", "a long password 123"});
  EXPECT_NE(taken.exit_code, 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM schedules"), schedules);
}

TEST_F(BookingsSchedules, CreateListGetPatchDelete) {
  const json body = json::parse(R"({"name": "Summer hours", "timeZone": "Europe/Berlin",
    "availability": [{"days": ["Monday", "Wednesday"], "startTime": "08:30", "endTime": "12:00"},
                     {"days": ["Saturday"], "startTime": "18:00", "endTime": "24:00"}],
    "overrides": [{"date": "2026-12-24", "startTime": "00:00", "endTime": "00:00"},
                  {"date": "2026-12-27", "startTime": "10:00", "endTime": "11:00"}]})");
  HttpResult created = Call("POST", "/v2/schedules", owner_key_, body);
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(created.Json()["status"], "success");
  json first = created.Json()["data"];
  EXPECT_GT(first["id"].get<int64_t>(), 0);
  EXPECT_EQ(first["ownerId"], owner_);
  EXPECT_TRUE(first["isDefault"].get<bool>()) << "a user's first schedule is the default";
  for (auto it = body.begin(); it != body.end(); ++it) EXPECT_EQ(first[it.key()], it.value()) << it.key();
  EXPECT_EQ(first.size(), 7u) << first.dump();

  // Defaults: the name, the user's time zone (UTC), weekdays 09:00-17:00, no overrides.
  json second = CreateSchedule(owner_key_);
  EXPECT_EQ(second["name"], "Working hours");
  EXPECT_EQ(second["timeZone"], "UTC");
  EXPECT_EQ(second["availability"], kNineToFive);
  EXPECT_EQ(second["overrides"], json::array());
  EXPECT_FALSE(second["isDefault"].get<bool>());
  CreateSchedule(other_key_, {{"name", "Other's"}});

  json list = Get("/v2/schedules", owner_key_);
  ASSERT_EQ(list.size(), 2u) << list.dump();
  EXPECT_EQ(list[0], first);
  EXPECT_EQ(list[1], second);
  EXPECT_EQ(Get(PathOf(first), owner_key_), first);

  HttpResult patched =
      Call("PATCH", PathOf(first), owner_key_, json{{"name", "Winter hours"}, {"overrides", json::array()}});
  ASSERT_EQ(patched.status, 200) << patched.body;
  json p = patched.Json()["data"];
  EXPECT_EQ(p["name"], "Winter hours");
  EXPECT_EQ(p["overrides"], json::array());
  EXPECT_EQ(p["availability"], first["availability"]);
  EXPECT_EQ(p["timeZone"], "Europe/Berlin");
  EXPECT_TRUE(p["isDefault"].get<bool>());
  EXPECT_EQ(Get(PathOf(first), owner_key_), p);

  HttpResult deleted = Call("DELETE", PathOf(second), owner_key_);
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(deleted.Json()["data"], second);
  EXPECT_EQ(Call("GET", PathOf(second), owner_key_).status, 404);
  EXPECT_EQ(Call("DELETE", PathOf(second), owner_key_).status, 404);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM schedules WHERE owner_id = " + std::to_string(owner_)), 1);
}

TEST_F(BookingsSchedules, TheDefaultIsImplicitUntilOneIsStored) {
  json implicit = Get("/v2/schedules/default", owner_key_);
  EXPECT_EQ(implicit, json({{"id", nullptr},
                            {"ownerId", owner_},
                            {"name", "Working hours"},
                            {"timeZone", "UTC"},
                            {"isDefault", true},
                            {"availability", kNineToFive},
                            {"overrides", json::array()}}));
  EXPECT_EQ(Get("/v2/schedules", owner_key_), json::array());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM schedules"), 0);

  // The implicit default is in the user's own time zone.
  CliResult berlin =
      server_->Cli({"admin", "user", "create", "--email", "berlin@example.com", "--name", "Bea", "--password",
                    "a long password 123", "--time-zone", "Europe/Berlin"});
  ASSERT_EQ(berlin.exit_code, 0) << berlin.err;
  const std::string berlin_key = server_->CreateApiKey(berlin.Json()["id"].get<int64_t>());
  EXPECT_EQ(Get("/v2/schedules/default", berlin_key)["timeZone"], "Europe/Berlin");
  EXPECT_EQ(CreateSchedule(berlin_key)["timeZone"], "Europe/Berlin");

  json stored = CreateSchedule(owner_key_, {{"name", "Mine"}});
  EXPECT_EQ(Get("/v2/schedules/default", owner_key_), stored);
  EXPECT_EQ(Get("/v2/schedules/default", other_key_)["id"], nullptr);

  // /default is not an id: other methods on it are 404.
  EXPECT_EQ(Call("PATCH", "/v2/schedules/default", owner_key_, R"({"name":"x"})").status, 404);
  EXPECT_EQ(Call("DELETE", "/v2/schedules/default", owner_key_).status, 404);
  EXPECT_EQ(Get("/v2/schedules/default", owner_key_), stored);
}

TEST_F(BookingsSchedules, DefaultRules) {
  json a = CreateSchedule(owner_key_, {{"name", "A"}, {"isDefault", false}});
  EXPECT_TRUE(a["isDefault"].get<bool>()) << "the first schedule is the default whatever the body says";
  json b = CreateSchedule(owner_key_, {{"name", "B"}, {"isDefault", true}});
  EXPECT_TRUE(b["isDefault"].get<bool>());
  EXPECT_FALSE(Get(PathOf(a), owner_key_)["isDefault"].get<bool>());
  EXPECT_EQ(Get("/v2/schedules/default", owner_key_)["id"], b["id"]);
  EXPECT_EQ(Defaults(owner_), 1);

  // The default cannot be turned off; another one is made the default instead.
  HttpResult off = Call("PATCH", PathOf(b), owner_key_, json{{"isDefault", false}, {"name", "B2"}});
  EXPECT_EQ(off.status, 400) << off.body;
  EXPECT_EQ(off.Json()["error"]["code"], "validation_error");
  EXPECT_EQ(off.Json()["error"]["details"]["field"], "isDefault");
  EXPECT_EQ(Get(PathOf(b), owner_key_)["name"], "B");
  EXPECT_TRUE(Get(PathOf(b), owner_key_)["isDefault"].get<bool>());

  // false on a schedule that is not the default changes nothing.
  HttpResult still = Call("PATCH", PathOf(a), owner_key_, json{{"isDefault", false}});
  ASSERT_EQ(still.status, 200) << still.body;
  EXPECT_FALSE(still.Json()["data"]["isDefault"].get<bool>());

  HttpResult on = Call("PATCH", PathOf(a), owner_key_, json{{"isDefault", true}});
  ASSERT_EQ(on.status, 200) << on.body;
  EXPECT_TRUE(on.Json()["data"]["isDefault"].get<bool>());
  EXPECT_FALSE(Get(PathOf(b), owner_key_)["isDefault"].get<bool>());
  EXPECT_EQ(Get("/v2/schedules/default", owner_key_)["id"], a["id"]);
  EXPECT_EQ(Defaults(owner_), 1);

  // A later schedule created without isDefault does not take the default.
  json c = CreateSchedule(owner_key_, {{"name", "C"}});
  EXPECT_FALSE(c["isDefault"].get<bool>());

  // Deleting the default makes the oldest remaining one the default.
  HttpResult gone = Call("DELETE", PathOf(a), owner_key_);
  ASSERT_EQ(gone.status, 200) << gone.body;
  EXPECT_TRUE(gone.Json()["data"]["isDefault"].get<bool>());
  EXPECT_EQ(Get("/v2/schedules/default", owner_key_)["id"], b["id"]);
  EXPECT_TRUE(Get(PathOf(b), owner_key_)["isDefault"].get<bool>());
  EXPECT_FALSE(Get(PathOf(c), owner_key_)["isDefault"].get<bool>());
  EXPECT_EQ(Defaults(owner_), 1);

  ASSERT_EQ(Call("DELETE", PathOf(b), owner_key_).status, 200);
  EXPECT_EQ(Get("/v2/schedules/default", owner_key_)["id"], c["id"]);
  ASSERT_EQ(Call("DELETE", PathOf(c), owner_key_).status, 200);
  EXPECT_EQ(Get("/v2/schedules/default", owner_key_)["id"], nullptr);
  EXPECT_EQ(Defaults(owner_), 0);
  // Starting over, the first schedule is the default again.
  EXPECT_TRUE(CreateSchedule(owner_key_)["isDefault"].get<bool>());
}

TEST_F(BookingsSchedules, AnotherUsersScheduleIsNotFound) {
  json mine = CreateSchedule(owner_key_, {{"name", "Mine"}});
  for (const char* method : {"GET", "PATCH", "DELETE"}) {
    HttpResult r =
        Call(method, PathOf(mine), other_key_, std::string(method) == "PATCH" ? R"({"name":"x"})" : "");
    EXPECT_EQ(r.status, 404) << method << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["code"], "not_found");
  }
  // A PATCH that would make it the other user's default changes nothing either.
  EXPECT_EQ(Call("PATCH", PathOf(mine), other_key_, R"({"isDefault":true})").status, 404);
  EXPECT_EQ(Get("/v2/schedules", other_key_), json::array());
  EXPECT_EQ(Get("/v2/schedules/default", other_key_)["id"], nullptr);
  EXPECT_EQ(Get(PathOf(mine), owner_key_), mine);
  for (const char* path :
       {"/v2/schedules/999999", "/v2/schedules/abc", "/v2/schedules/0", "/v2/schedules/-1"}) {
    EXPECT_EQ(Call("GET", path, owner_key_).status, 404) << path;
  }
  EXPECT_EQ(Call("GET", "/v2/schedules", "").status, 401);
  EXPECT_EQ(Call("GET", "/v2/schedules/default", "rdv_not-a-real-key").status, 401);
}

TEST_F(BookingsSchedules, ValidationNamesTheFieldAndStoresNothing) {
  auto hours = [](const char* start, const char* end) {
    return json{{"availability", {{{"days", {"Monday"}}, {"startTime", start}, {"endTime", end}}}}};
  };
  auto override_on = [](const char* date, const char* start, const char* end) {
    return json{{"overrides", {{{"date", date}, {"startTime", start}, {"endTime", end}}}}};
  };
  json many = {{"availability", json::array()}};
  for (int i = 0; i < 51; ++i) many["availability"].push_back(hours("09:00", "10:00")["availability"][0]);
  json dates = {{"overrides", json::array()}};
  for (int i = 0; i < 367; ++i) {
    dates["overrides"].push_back({{"date", time::FormatDate(time::CivilFromDays(20600 + i))},
                                  {"startTime", "09:00"},
                                  {"endTime", "10:00"}});
  }
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"name": ""})", "name"},
      {json{{"name", std::string(256, 'n')}}.dump(), "name"},
      {R"({"name": "a\u0001b"})", "name"},
      {R"({"timeZone": "Mars/Olympus_Mons"})", "timeZone"},
      {R"({"timeZone": "+02:00"})", "timeZone"},
      {R"({"isDefault": 1})", "isDefault"},
      {R"({"id": 5})", "id"},
      {R"({"ownerId": 5})", "ownerId"},
      {R"({"workingHours": []})", "workingHours"},
      {R"({"availability": [{"days": ["Mon"], "startTime": "09:00", "endTime": "17:00"}]})",
       "availability[0].days[0]"},
      {R"({"availability": [{"days": ["Friday", "Friday"], "startTime": "09:00", "endTime": "17:00"}]})",
       "availability[0].days[1]"},
      {R"({"availability": [{"days": ["Friday"], "startTime": "09:00", "endTime": "17:00"},
                            {"days": ["Friday"], "startTime": "25:00", "endTime": "26:00"}]})",
       "availability[1].startTime"},
      {hours("9:00", "17:00").dump(), "availability[0].startTime"},
      {hours("24:00", "24:00").dump(), "availability[0].startTime"},
      {hours("09:00", "17:60").dump(), "availability[0].endTime"},
      {hours("17:00", "09:00").dump(), "availability[0].endTime"},
      {hours("09:00", "09:00").dump(), "availability[0].endTime"},
      {R"({"availability": [{"days": ["Monday"], "startTime": "09:00", "endTime": "17:00", "tz": "UTC"}]})",
       "availability[0].tz"},
      {many.dump(), "availability"},
      {override_on("2026-02-29", "09:00", "10:00").dump(), "overrides[0].date"},
      {override_on("26-02-01", "09:00", "10:00").dump(), "overrides[0].date"},
      {override_on("2026-02-01", "10:00", "09:00").dump(), "overrides[0].endTime"},
      {override_on("2026-02-01", "10:00", "24:01").dump(), "overrides[0].endTime"},
      {R"({"overrides": [{"date": "2026-02-01", "startTime": "09:00", "endTime": "10:00"},
                         {"date": "2026-02-01", "startTime": "00:00", "endTime": "00:00"}]})",
       "overrides[1].date"},
      {dates.dump(), "overrides"},
  };
  for (const auto& [body, field] : cases) {
    HttpResult r = Call("POST", "/v2/schedules", owner_key_, body);
    EXPECT_EQ(r.status, 400) << body.substr(0, 200) << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["code"], "validation_error") << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], field) << r.body;
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM schedules"), 0);

  // The largest allowed lists are stored.
  many["availability"].erase(50);
  dates["overrides"].erase(366);
  json big =
      CreateSchedule(owner_key_, {{"availability", many["availability"]}, {"overrides", dates["overrides"]}});
  EXPECT_EQ(big["availability"].size(), 50u);
  EXPECT_EQ(big["overrides"].size(), 366u);
  EXPECT_EQ(Get(PathOf(big), owner_key_), big);

  // PATCH checks the same and changes nothing on a bad body.
  json s = CreateSchedule(owner_key_, {{"name", "Keep"}});
  for (const auto& [body, field] : cases) {
    HttpResult r = Call("PATCH", PathOf(s), owner_key_, body);
    EXPECT_EQ(r.status, 400) << body.substr(0, 200) << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], field) << r.body;
  }
  EXPECT_EQ(Get(PathOf(s), owner_key_), s);
  for (const char* body : {"{", "[]", "\"x\""}) {
    EXPECT_EQ(Call("POST", "/v2/schedules", owner_key_, body).status, 400) << body;
    EXPECT_EQ(Call("PATCH", PathOf(s), owner_key_, body).status, 400) << body;
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM schedules"), 2);
}

TEST_F(BookingsSchedules, AtMostOneHundredPerUser) {
  for (int i = 0; i < 100; ++i) {
    HttpResult r = Call("POST", "/v2/schedules", owner_key_, json{{"name", "S" + std::to_string(i)}});
    ASSERT_EQ(r.status, 201) << i << " " << r.body;
  }
  HttpResult over = Call("POST", "/v2/schedules", owner_key_, "{}");
  EXPECT_EQ(over.status, 409) << over.body;
  EXPECT_EQ(over.Json()["error"]["code"], "conflict");
  json list = Get("/v2/schedules", owner_key_);
  ASSERT_EQ(list.size(), 100u);
  EXPECT_EQ(list[0]["name"], "S0");
  EXPECT_EQ(list[99]["name"], "S99");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM schedules WHERE owner_id = " + std::to_string(owner_)), 100);
  EXPECT_EQ(Call("POST", "/v2/schedules", other_key_, "{}").status, 201);
}

TEST_F(BookingsSchedules, EventTypeScheduleId) {
  json s = CreateSchedule(owner_key_, {{"name", "Mornings"}});
  json theirs = CreateSchedule(other_key_, {{"name", "Theirs"}});
  const int64_t sid = s["id"];

  json et = CreateEventType(owner_key_, "with-schedule", 30, {{"scheduleId", sid}});
  EXPECT_EQ(et["scheduleId"], sid);
  const std::string et_path = "/v2/event-types/" + std::to_string(et["id"].get<int64_t>());
  EXPECT_EQ(Get(et_path, owner_key_)["scheduleId"], sid);
  EXPECT_EQ(db_.QueryValue("SELECT schedule_id FROM event_types WHERE id = " +
                           std::to_string(et["id"].get<int64_t>())),
            std::to_string(sid));
  json plain = CreateEventType(owner_key_, "plain");
  EXPECT_TRUE(plain["scheduleId"].is_null());

  // Another user's schedule, or one that does not exist, is refused and nothing is stored.
  for (const json& bad : {theirs["id"], json(999999)}) {
    HttpResult r =
        Call("POST", "/v2/event-types", owner_key_,
             json{{"title", "T"}, {"slug", "refused"}, {"lengthInMinutes", 30}, {"scheduleId", bad}});
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(r.Json()["error"]["code"], "validation_error");
    EXPECT_EQ(r.Json()["error"]["details"]["field"], "scheduleId") << r.body;
    HttpResult p = Call("PATCH", et_path, owner_key_, json{{"scheduleId", bad}, {"title", "Changed"}});
    EXPECT_EQ(p.status, 400) << p.body;
    EXPECT_EQ(p.Json()["error"]["details"]["field"], "scheduleId") << p.body;
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM event_types WHERE slug = 'refused'"), 0);
  EXPECT_EQ(Get(et_path, owner_key_)["title"], et["title"]);
  EXPECT_EQ(Get(et_path, owner_key_)["scheduleId"], sid);
  HttpResult wrong_type = Call("PATCH", et_path, owner_key_, json{{"scheduleId", "1"}});
  EXPECT_EQ(wrong_type.status, 400);
  EXPECT_EQ(wrong_type.Json()["error"]["details"]["field"], "scheduleId");

  // A schedule that event types name cannot be deleted.
  HttpResult refused = Call("DELETE", PathOf(s), owner_key_);
  EXPECT_EQ(refused.status, 409) << refused.body;
  EXPECT_EQ(refused.Json()["error"]["code"], "conflict");
  EXPECT_NE(refused.Json()["error"]["message"].get<std::string>().find("event type"), std::string::npos)
      << refused.body;
  EXPECT_EQ(Get(PathOf(s), owner_key_), s);

  // Other changes keep the schedule; null goes back to the owner's default.
  HttpResult renamed = Call("PATCH", et_path, owner_key_, json{{"title", "Renamed"}});
  ASSERT_EQ(renamed.status, 200) << renamed.body;
  EXPECT_EQ(renamed.Json()["data"]["scheduleId"], sid);
  HttpResult cleared = Call("PATCH", et_path, owner_key_, json{{"scheduleId", nullptr}});
  ASSERT_EQ(cleared.status, 200) << cleared.body;
  EXPECT_TRUE(cleared.Json()["data"]["scheduleId"].is_null());
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM event_types WHERE schedule_id IS NOT NULL"), "0");
  HttpResult again = Call("PATCH", et_path, owner_key_, json{{"scheduleId", sid}});
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.Json()["data"]["scheduleId"], sid);
  ASSERT_EQ(Call("PATCH", et_path, owner_key_, json{{"scheduleId", nullptr}}).status, 200);
  HttpResult deleted = Call("DELETE", PathOf(s), owner_key_);
  EXPECT_EQ(deleted.status, 200) << deleted.body;
  // The other user's schedule was never touched.
  EXPECT_EQ(Get(PathOf(theirs), other_key_), theirs);
}

TEST_F(BookingsSchedules, ScopesReadAndWrite) {
  const std::vector<std::string> client = {"PROFILE_READ", "PROFILE_WRITE", "EVENT_TYPE_READ"};
  const std::string read =
      GrantOAuthToken(*server_, db_, owner_, owner_, client, {"PROFILE_READ"}).access_token;
  const std::string write =
      GrantOAuthToken(*server_, db_, owner_, owner_, client, {"PROFILE_WRITE"}).access_token;
  const std::string neither =
      GrantOAuthToken(*server_, db_, owner_, owner_, client, {"EVENT_TYPE_READ"}).access_token;
  ASSERT_FALSE(read.empty());
  ASSERT_FALSE(write.empty());
  ASSERT_FALSE(neither.empty());
  const std::string path = PathOf(CreateSchedule(owner_key_, {{"name", "Keep"}}));
  const std::string spare = PathOf(CreateSchedule(owner_key_, {{"name", "Spare"}}));

  struct Case {
    std::string method, path, body, scope;
    int success;
  };
  const std::vector<Case> cases = {
      {"GET", "/v2/schedules", "", "PROFILE_READ", 200},
      {"GET", "/v2/schedules/default", "", "PROFILE_READ", 200},
      {"GET", path, "", "PROFILE_READ", 200},
      {"POST", "/v2/schedules", R"({"name":"New"})", "PROFILE_WRITE", 201},
      {"PATCH", path, R"({"name":"Renamed"})", "PROFILE_WRITE", 200},
      {"DELETE", spare, "", "PROFILE_WRITE", 200},
  };
  for (const Case& c : cases) {
    const std::string& wrong = c.scope == "PROFILE_READ" ? write : read;
    for (const std::string& token : {wrong, neither}) {
      HttpResult denied = Call(c.method, c.path, token, c.body);
      EXPECT_EQ(denied.status, 403) << c.method << " " << c.path << " " << denied.body;
      EXPECT_EQ(denied.Json()["error"]["code"], "insufficient_scope") << denied.body;
      EXPECT_NE(denied.body.find(c.scope), std::string::npos) << denied.body;
    }
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM schedules"), 2) << "refused calls change nothing";
  EXPECT_EQ(Get(path, owner_key_)["name"], "Keep");
  for (const Case& c : cases) {
    HttpResult ok = Call(c.method, c.path, c.scope == "PROFILE_READ" ? read : write, c.body);
    EXPECT_EQ(ok.status, c.success) << c.method << " " << c.path << " " << ok.body;
  }
  EXPECT_EQ(Get(path, owner_key_)["name"], "Renamed");
  EXPECT_EQ(Call("GET", spare, owner_key_).status, 404);

  // A legacy client's unscoped token passes; a managed user's token acts as that user with its
  // client's scopes (its own schedules: none yet).
  const std::string legacy = GrantOAuthToken(*server_, db_, owner_, owner_, {}, {}).access_token;
  EXPECT_EQ(Call("POST", "/v2/schedules", legacy, "{}").status, 201);
  OAuthGrant app = GrantOAuthToken(*server_, db_, owner_, owner_, client, {"PROFILE_READ"});
  CliResult managed = server_->Cli({"admin", "managed-user", "create", "--client-id", app.client_id,
                                    "--email", "managed@example.com", "--name", "Managed"});
  ASSERT_EQ(managed.exit_code, 0) << managed.err;
  HttpResult own = Call("GET", "/v2/schedules", managed.Json()["access_token"].get<std::string>());
  EXPECT_EQ(own.status, 200) << own.body;
  EXPECT_EQ(own.body.find("Renamed"), std::string::npos) << own.body;
}

}  // namespace
}  // namespace rendezvous::testing
