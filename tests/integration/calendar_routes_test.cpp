// The §5.3 calendar routes (calendars, busy times, ICS feeds, destination calendar) and the
// §4.5 event lookup, against the real server and a fake Google / ICS host on loopback.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "calendar_fixture.hpp"
#include "loopback_http_server.hpp"

namespace rendezvous::testing {
namespace {

const char* kIcs =
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Test//EN\r\nX-WR-CALNAME:Climbing club\r\n"
    "BEGIN:VEVENT\r\nUID:a@x\r\nDTSTART:20250501T060000Z\r\nDTEND:20250501T070000Z\r\nEND:VEVENT\r\n"
    "BEGIN:VEVENT\r\nUID:b@x\r\nDTSTART;TZID=Europe/Berlin:20250501T180000\r\nDTEND;TZID=Europe/"
    "Berlin:20250501T190000\r\n"
    "END:VEVENT\r\n"
    "BEGIN:VEVENT\r\nUID:c@x\r\nDTSTART;VALUE=DATE:20250502\r\nEND:VEVENT\r\n"
    "BEGIN:VEVENT\r\nUID:d@x\r\nDTSTART:20250601T060000Z\r\nDTEND:20250601T070000Z\r\nEND:VEVENT\r\n"
    "END:VCALENDAR\r\n";

json GoogleEvent(const std::string& id, const std::string& title) {
  return {{"id", id},
          {"status", "confirmed"},
          {"summary", title},
          {"description", "Notes"},
          {"start", {{"dateTime", "2025-05-01T12:00:00+02:00"}, {"timeZone", "Europe/Berlin"}}},
          {"end", {{"dateTime", "2025-05-01T12:30:00+02:00"}, {"timeZone", "Europe/Berlin"}}},
          {"hangoutLink", "https://meet.google.com/abc-defg-hij"},
          {"organizer", {{"email", "ada@example.com"}, {"displayName", "Ada"}}},
          {"attendees",
           {{{"email", "ada@example.com"},
             {"displayName", "Ada"},
             {"organizer", true},
             {"self", true},
             {"responseStatus", "accepted"}},
            {{"email", "bob@example.com"}, {"displayName", "Bob"}, {"responseStatus", "tentative"}}}}};
}

TEST_F(CalendarTest, BusyTimesFromGoogleAndIcsFeeds) {
  AddStandardCalendars();
  google_.AddBusy("ada@example.com", "2025-05-01T08:00:00Z", "2025-05-01T09:00:00Z");
  google_.AddBusy("team@group.calendar.google.com", "2025-05-01T10:00:00+02:00", "2025-05-01T11:00:00+02:00");
  google_.SetIcs("club.ics", kIcs);
  ASSERT_EQ(ConnectAndSave().status, 200);
  HttpResult saved =
      Send("POST", "/v2/calendars/ics-feed/save", {{"urls", {google_.IcsUrl("club.ics")}}}, key_);
  ASSERT_EQ(saved.status, 201) << saved.body;
  ASSERT_EQ(saved.Json()["data"]["calendars"].size(), 1u) << saved.body;
  EXPECT_EQ(saved.Json()["data"]["type"], "ics-feed_calendar");
  EXPECT_EQ(saved.Json()["data"]["calendars"][0]["integration"], "ics_feed");
  EXPECT_EQ(saved.Json()["data"]["calendars"][0]["name"], "Climbing club");
  EXPECT_EQ(saved.Json()["data"]["calendars"][0]["readOnly"], true);
  EXPECT_EQ(saved.Json()["data"]["calendars"][0]["credentialId"], saved.Json()["data"]["id"]);

  HttpResult r = Get("/v2/calendars/busy-times?dateFrom=2025-05-01&dateTo=2025-05-02&timeZone=UTC", key_);
  ASSERT_EQ(r.status, 200) << r.body;
  json busy = r.Json()["data"];
  ASSERT_EQ(busy.size(), 5u) << r.body;
  EXPECT_EQ(busy[0], (json{{"start", "2025-05-01T06:00:00Z"},
                           {"end", "2025-05-01T07:00:00Z"},
                           {"source", "ics_feed"},
                           {"credentialId", saved.Json()["data"]["id"]}}));
  EXPECT_EQ(busy[1]["start"], "2025-05-01T08:00:00Z");
  EXPECT_EQ(busy[1]["source"], "google_calendar");
  EXPECT_EQ(busy[1]["externalId"], "ada@example.com");
  EXPECT_EQ(busy[2]["start"], "2025-05-01T08:00:00Z");  // 10:00+02:00
  EXPECT_EQ(busy[2]["externalId"], "team@group.calendar.google.com");
  EXPECT_EQ(busy[3]["start"], "2025-05-01T16:00:00Z");  // 18:00 Berlin (CEST)
  EXPECT_EQ(busy[4], (json{{"start", "2025-05-02T00:00:00Z"},
                           {"end", "2025-05-03T00:00:00Z"},
                           {"source", "ics_feed"},
                           {"credentialId", busy[0]["credentialId"]}}));

  // freeBusy asked Google for every connected calendar over the requested range.
  auto fb = google_.RequestsTo("/calendar/v3/freeBusy");
  ASSERT_EQ(fb.size(), 1u);
  json q = json::parse(fb[0].body);
  EXPECT_EQ(q["timeMin"], "2025-05-01T00:00:00Z");
  EXPECT_EQ(q["timeMax"], "2025-05-03T00:00:00Z");
  EXPECT_EQ(q["items"].size(), 3u);

  // The listing shows the feed beside the Google calendars.
  json cals = Get("/v2/calendars", key_).Json()["data"]["calendars"];
  ASSERT_EQ(cals.size(), 4u);
  EXPECT_EQ(cals[3]["externalId"], google_.IcsUrl("club.ics"));
  // The feed URL is stored encrypted.
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_ics_feeds WHERE url_enc LIKE '%club.ics%'"), "0");

  // A feed that stops being a calendar, among sources that still answer: their busy times, and
  // the feed named as failed.
  google_.SetIcs("club.ics", "<html>gone</html>", "text/html");
  HttpResult broken = Get("/v2/calendars/busy-times?dateFrom=2025-05-01&dateTo=2025-05-02", key_);
  ASSERT_EQ(broken.status, 200) << broken.body;
  EXPECT_EQ(broken.Json()["data"].size(), 2u) << broken.body;  // Google's two
  ASSERT_EQ(broken.Json()["failedSources"].size(), 1u) << broken.body;
  const json failed = broken.Json()["failedSources"][0];
  EXPECT_EQ(failed["source"], "ics_feed");
  EXPECT_EQ(failed["credentialId"], busy[0]["credentialId"]);
  EXPECT_EQ(failed["code"], "bad_gateway");
  EXPECT_NE(failed["message"].get<std::string>().find("could not be read"), std::string::npos) << failed;
  // Nothing answering: the first failure is the answer.
  google_.FailNextApiCalls(500, 3);
  HttpResult none = Get("/v2/calendars/busy-times?dateFrom=2025-05-01&dateTo=2025-05-02", key_);
  EXPECT_EQ(none.status, 502) << none.body;
  EXPECT_NE(none.Json()["error"]["message"].get<std::string>().find("free/busy"), std::string::npos) << none.body;
  HttpResult metrics = http_.Get(Api("/metrics"));
  EXPECT_NE(metrics.body.find("calendar_ics_fetches_total{outcome=\"ok\"} 2"), std::string::npos);
  EXPECT_NE(metrics.body.find("calendar_google_requests_total{endpoint=\"free_busy\",outcome=\"ok\"} 2"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("calendar_google_requests_total{endpoint=\"free_busy\",outcome=\"server_error\"} 3"),
            std::string::npos);
}

TEST_F(CalendarTest, BusyTimesValidatesTheRange) {
  struct Case {
    std::string query, field;
  };
  for (const Case& c :
       std::vector<Case>{{"dateTo=2025-05-02", "dateFrom"},
                         {"dateFrom=2025-05-01", "dateTo"},
                         {"dateFrom=yesterday&dateTo=2025-05-02", "dateFrom"},
                         {"dateFrom=2025-05-03&dateTo=2025-05-01", "dateTo"},
                         {"dateFrom=2025-01-01&dateTo=2025-06-01", "dateTo"},
                         {"dateFrom=2025-05-01&dateTo=2025-05-02&timeZone=Mars/Olympus", "timeZone"}}) {
    HttpResult r = Get("/v2/calendars/busy-times?" + c.query, key_);
    EXPECT_EQ(r.status, 400) << c.query << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], c.field) << c.query;
  }
  // No calendars at all: an empty list; ISO timestamps are accepted too.
  HttpResult empty =
      Get("/v2/calendars/busy-times?dateFrom=2025-05-01T00:00:00Z&dateTo=2025-05-01T12:00:00%2B02:00", key_);
  ASSERT_EQ(empty.status, 200) << empty.body;
  EXPECT_EQ(empty.Json()["data"], json::array());
  // An unencoded '+' (decoded as a space) in an offset is understood.
  EXPECT_EQ(
      Get("/v2/calendars/busy-times?dateFrom=2025-05-01T00:00:00Z&dateTo=2025-05-01T12:00:00+02:00", key_)
          .status,
      200);
  // The range limit holds for timestamps too.
  EXPECT_EQ(
      Get("/v2/calendars/busy-times?dateFrom=2025-01-01T00:00:00Z&dateTo=2025-04-05T00:00:00Z", key_).status,
      400);
}

TEST_F(CalendarTest, IcsFeedSaveValidatesUrlsAndBodies) {
  google_.SetIcs("ok.ics", kIcs);
  google_.SetIcs("page.html", "<html><body>Not a calendar</body></html>", "text/html");
  google_.SetIcs("big.ics", std::string("BEGIN:VCALENDAR\r\n") + std::string(3 << 20, 'X'));
  struct Case {
    json body;
    std::string field;
  };
  std::vector<std::string> eleven(11, google_.IcsUrl("ok.ics"));
  const std::vector<Case> cases = {
      {json::object(), "urls"},
      {{{"urls", json::array()}}, "urls"},
      {{{"urls", "https://example.com/a.ics"}}, "urls"},
      {{{"urls", eleven}}, "urls"},
      {{{"urls", {42}}}, "urls[0]"},
      {{{"urls", {"ftp://example.com/a.ics"}}}, "urls[0]"},
      {{{"urls", {"not a url"}}}, "urls[0]"},
      {{{"urls", {"http://example.com/a.ics"}}}, "urls[0]"},  // http only to loopback
      {{{"urls", {"https://user:pw@example.com/a.ics"}}}, "urls[0]"},
      {{{"urls", {google_.IcsUrl("ok.ics"), google_.IcsUrl("page.html")}}}, "urls[1]"},
      {{{"urls", {google_.IcsUrl("missing.ics")}}}, "urls[0]"},
      {{{"urls", {google_.IcsUrl("big.ics")}}}, "urls[0]"},
      {{{"urls", {google_.IcsUrl("ok.ics")}}, {"readOnly", "yes"}}, "readOnly"},
  };
  for (const Case& c : cases) {
    HttpResult r = Send("POST", "/v2/calendars/ics-feed/save", c.body, key_);
    EXPECT_EQ(r.status, 400) << c.body.dump() << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], c.field) << c.body.dump() << " " << r.body;
  }
  // Nothing half-stored: the good URL of the mixed request was not saved.
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_ics_feeds"), "0");
  HttpResult wrong_type = http_.Request("POST", Api("/v2/calendars/ics-feed/save"), "urls=x",
                                        {"Authorization: Bearer " + key_, "Content-Type: text/plain"});
  EXPECT_EQ(wrong_type.status, 415);
  // Saving the same URL twice keeps one feed.
  ASSERT_EQ(Send("POST", "/v2/calendars/ics-feed/save", {{"urls", {google_.IcsUrl("ok.ics")}}}, key_).status,
            201);
  ASSERT_EQ(Send("POST", "/v2/calendars/ics-feed/save",
                 {{"urls", {google_.IcsUrl("ok.ics")}}, {"readOnly", false}}, key_)
                .status,
            201);
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_ics_feeds"), "1");
  EXPECT_EQ(db_.QueryValue("SELECT read_only FROM calendar_ics_feeds"), "0");
}

// Cal.com's schema types: "string", "number" (any JSON number), "integer", "boolean", "object",
// "array"; a trailing '?' also allows null.
bool HasType(const json& v, std::string type) {
  if (!type.empty() && type.back() == '?') {
    if (v.is_null()) return true;
    type.pop_back();
  }
  if (type == "string") return v.is_string();
  if (type == "number") return v.is_number();
  if (type == "integer") return v.is_number_integer();
  if (type == "boolean") return v.is_boolean();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  return false;
}

using Fields = std::vector<std::pair<std::string, std::string>>;

// Every field of `required` present with its type, every field of `optional` of its type if
// present (Cal.com's document allows additional properties everywhere).
void ExpectFields(const json& object, const Fields& required, const Fields& optional,
                  const std::string& where) {
  ASSERT_TRUE(object.is_object()) << where << ": " << object.dump();
  for (const auto& [name, type] : required) {
    ASSERT_TRUE(object.contains(name)) << where << " lacks " << name << ": " << object.dump();
    EXPECT_TRUE(HasType(object[name], type))
        << where << "." << name << " is not " << type << ": " << object.dump();
  }
  for (const auto& [name, type] : optional) {
    if (!object.contains(name)) continue;
    EXPECT_TRUE(HasType(object[name], type))
        << where << "." << name << " is not " << type << ": " << object.dump();
  }
}

// Cal.com's calendar (Primary requires `primary` too, nullable).
const Fields kCalendarRequired = {
    {"externalId", "string"}, {"readOnly", "boolean"}, {"isSelected", "boolean"}, {"credentialId", "number"}};
const Fields kCalendarOptional = {
    {"integration", "string"}, {"name", "string"}, {"primary", "boolean?"}, {"email", "string"}};
// Cal.com's credential: what ics-feed/save and {calendar}/disconnect answer.
const Fields kCredential = {{"id", "number"},       {"type", "string"},   {"userId", "integer?"},
                            {"teamId", "integer?"}, {"appId", "string?"}, {"invalid", "boolean?"}};

TEST_F(CalendarTest, AnswersCarryCalComsRequiredFields) {
  AddStandardCalendars();
  google_.SetIcs("club.ics", kIcs);
  ASSERT_EQ(ConnectAndSave().status, 200);

  // POST /v2/calendars/ics-feed/save: the credential.
  HttpResult saved =
      Send("POST", "/v2/calendars/ics-feed/save", {{"urls", {google_.IcsUrl("club.ics")}}}, key_);
  ASSERT_EQ(saved.status, 201) << saved.body;
  EXPECT_EQ(saved.Json()["status"], "success");
  ExpectFields(saved.Json()["data"], kCredential, {}, "ics-feed/save");
  EXPECT_EQ(saved.Json()["data"]["userId"], user_);
  EXPECT_EQ(saved.Json()["data"]["invalid"], false);
  EXPECT_EQ(saved.Json()["data"]["appId"], "ics-feed");

  // GET /v2/calendars: {connectedCalendars, destinationCalendar}.
  HttpResult list = Get("/v2/calendars", key_);
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(list.Json()["status"], "success");
  const json data = list.Json()["data"];
  ASSERT_TRUE(data["connectedCalendars"].is_array()) << list.body;
  ASSERT_EQ(data["connectedCalendars"].size(), 2u) << list.body;  // Google, then the feed
  for (const json& connected : data["connectedCalendars"]) {
    ExpectFields(connected, {{"integration", "object"}, {"credentialId", "number"}},
                 {{"primary", "object"}, {"calendars", "array"}}, "connectedCalendar");
    ExpectFields(connected["integration"],
                 {{"name", "string"},
                  {"description", "string"},
                  {"type", "string"},
                  {"variant", "string"},
                  {"categories", "array"},
                  {"logo", "string"},
                  {"publisher", "string"},
                  {"slug", "string"},
                  {"url", "string"},
                  {"email", "string"},
                  {"locationOption", "object?"}},
                 {{"appData", "object?"},
                  {"dirName", "string"},
                  {"installed", "boolean"},
                  {"title", "string"},
                  {"category", "string"}},
                 "integration");
    for (const json& category : connected["integration"]["categories"]) EXPECT_TRUE(category.is_string());
    if (connected.contains("primary")) {
      Fields primary_required = kCalendarRequired;
      primary_required.emplace_back("primary", "boolean?");
      ExpectFields(connected["primary"], primary_required, kCalendarOptional, "primary");
    }
    for (const json& c : connected.value("calendars", json::array()))
      ExpectFields(c, kCalendarRequired, kCalendarOptional, "calendar");
  }
  const json& google = data["connectedCalendars"][0];
  EXPECT_EQ(google["integration"]["type"], "google_calendar");
  EXPECT_EQ(google["calendars"].size(), 3u);
  EXPECT_EQ(google["primary"]["externalId"], "ada@example.com");
  const json& feed = data["connectedCalendars"][1];
  EXPECT_EQ(feed["integration"]["type"], "ics-feed_calendar");
  EXPECT_EQ(feed["credentialId"], saved.Json()["data"]["id"]);
  EXPECT_EQ(feed["calendars"][0]["externalId"], google_.IcsUrl("club.ics"));
  EXPECT_EQ(feed["calendars"][0]["integration"], "ics-feed_calendar");
  EXPECT_EQ(data["calendars"][3]["integration"], "ics_feed");  // our flat list keeps our name
  const Fields destination_required = {{"id", "number"},           {"integration", "string"},
                                       {"externalId", "string"},   {"primaryEmail", "string?"},
                                       {"userId", "number?"},      {"eventTypeId", "number?"},
                                       {"credentialId", "number?"}};
  const Fields destination_optional = {{"name", "string?"},
                                       {"primary", "boolean"},
                                       {"readOnly", "boolean"},
                                       {"email", "string"},
                                       {"integrationTitle", "string"}};
  ExpectFields(data["destinationCalendar"], destination_required, destination_optional,
               "destinationCalendar");
  EXPECT_EQ(data["destinationCalendar"]["externalId"], "ada@example.com");  // the primary, as none was chosen
  EXPECT_EQ(data["destinationCalendar"]["userId"], user_);
  EXPECT_EQ(data["destinationCalendar"]["credentialId"], google["credentialId"]);
  EXPECT_EQ(data["destinationCalendar"]["primaryEmail"], "ada@example.com");
  const json first_destination_id = data["destinationCalendar"]["id"];

  // PUT /v2/destination-calendars: {userId, integration, externalId, credentialId}.
  HttpResult put =
      Send("PUT", "/v2/destination-calendars",
           {{"integration", "google_calendar"}, {"externalId", "team@group.calendar.google.com"}}, key_);
  ASSERT_EQ(put.status, 200) << put.body;
  ExpectFields(put.Json()["data"],
               {{"userId", "number"},
                {"integration", "string"},
                {"externalId", "string"},
                {"credentialId", "number?"}},
               {}, "destination-calendars");
  EXPECT_EQ(put.Json()["data"]["userId"], user_);
  EXPECT_EQ(put.Json()["data"]["credentialId"], google["credentialId"]);
  json after = Get("/v2/calendars", key_).Json()["data"]["destinationCalendar"];
  EXPECT_EQ(after["externalId"], "team@group.calendar.google.com");
  EXPECT_EQ(after["id"], first_destination_id);  // one destination per user, changed in place

  // POST /v2/calendars/google/disconnect {id}: the deleted credential; only the caller's own id.
  const int64_t credential = google["credentialId"];
  HttpResult wrong = Send("POST", "/v2/calendars/google/disconnect", {{"id", credential + 1000}}, key_);
  EXPECT_EQ(wrong.status, 404) << wrong.body;
  HttpResult not_int = Send("POST", "/v2/calendars/google/disconnect", {{"id", "x"}}, key_);
  EXPECT_EQ(not_int.status, 400) << not_int.body;
  EXPECT_EQ(not_int.Json()["error"]["details"]["field"], "id");
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_google_credentials"), "1");
  HttpResult off = Send("POST", "/v2/calendars/google/disconnect", {{"id", credential}}, key_);
  ASSERT_EQ(off.status, 200) << off.body;
  ExpectFields(off.Json()["data"], kCredential, {}, "disconnect");
  EXPECT_EQ(off.Json()["data"]["id"], credential);
  EXPECT_EQ(off.Json()["data"]["type"], "google_calendar");
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_google_credentials"), "0");
  HttpResult twice = Send("POST", "/v2/calendars/google/disconnect", {{"id", credential}}, key_);
  EXPECT_EQ(twice.status, 404) << twice.body;
  // Without Google the listing keeps the feed and has no destination.
  json without = Get("/v2/calendars", key_).Json()["data"];
  EXPECT_EQ(without["connectedCalendars"].size(), 1u);
  EXPECT_TRUE(without["destinationCalendar"].is_null());
}

TEST_F(CalendarTest, IcsFeedCheckIsSuccessWhileAFeedWorks) {
  // No feed saved: 400.
  HttpResult none = Get("/v2/calendars/ics-feed/check", key_);
  EXPECT_EQ(none.status, 400) << none.body;
  EXPECT_EQ(none.Json()["error"]["code"], "ics_feed_not_working");
  EXPECT_EQ(http_.Get(Api("/v2/calendars/ics-feed/check")).status, 401);

  google_.SetIcs("club.ics", kIcs);
  ASSERT_EQ(
      Send("POST", "/v2/calendars/ics-feed/save", {{"urls", {google_.IcsUrl("club.ics")}}}, key_).status,
      201);
  const size_t before = google_.RequestsTo("/ics/club.ics").size();
  HttpResult ok = Get("/v2/calendars/ics-feed/check", key_);
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(ok.Json(), (json{{"status", "success"}}));
  EXPECT_GT(google_.RequestsTo("/ics/club.ics").size(), before);  // the check asks the feed itself

  // The feed stops being a calendar: 400 saying why.
  google_.SetIcs("club.ics", "<html>gone</html>", "text/html");
  HttpResult broken = Get("/v2/calendars/ics-feed/check", key_);
  EXPECT_EQ(broken.status, 400) << broken.body;
  EXPECT_EQ(broken.Json()["error"]["code"], "ics_feed_not_working");
  EXPECT_NE(broken.body.find("not an iCalendar file"), std::string::npos) << broken.body;

  // One working feed among broken ones is enough.
  google_.SetIcs("other.ics", kIcs);
  ASSERT_EQ(
      Send("POST", "/v2/calendars/ics-feed/save", {{"urls", {google_.IcsUrl("other.ics")}}}, key_).status,
      201);
  EXPECT_EQ(Get("/v2/calendars/ics-feed/check", key_).status, 200);
  // Another user's feeds are not this user's.
  const std::string bob_key = server_->CreateApiKey(server_->CreateUser("bob@example.com", "Bob"));
  EXPECT_EQ(Get("/v2/calendars/ics-feed/check", bob_key).status, 400);
}

TEST_F(CalendarTest, DestinationCalendarMustBeOneOfYours) {
  AddStandardCalendars();
  ASSERT_EQ(ConnectAndSave().status, 200);
  HttpResult unknown = Send("PUT", "/v2/destination-calendars",
                            {{"integration", "google_calendar"}, {"externalId", "someone@else.com"}}, key_);
  EXPECT_EQ(unknown.status, 404) << unknown.body;
  HttpResult ro = Send(
      "PUT", "/v2/destination-calendars",
      {{"integration", "google_calendar"}, {"externalId", "holidays@group.v.calendar.google.com"}}, key_);
  EXPECT_EQ(ro.status, 400) << ro.body;
  HttpResult bad =
      Send("PUT", "/v2/destination-calendars", {{"integration", "outlook"}, {"externalId", "x"}}, key_);
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.Json()["error"]["details"]["field"], "integration");
  HttpResult missing = Send("PUT", "/v2/destination-calendars", {{"integration", "google_calendar"}}, key_);
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(missing.Json()["error"]["details"]["field"], "externalId");

  HttpResult ok =
      Send("PUT", "/v2/destination-calendars",
           {{"integration", "google_calendar"}, {"externalId", "team@group.calendar.google.com"}}, key_);
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(ok.Json()["data"]["externalId"], "team@group.calendar.google.com");
  EXPECT_EQ(ok.Json()["data"]["name"], "Team");
  json list = Get("/v2/calendars", key_).Json()["data"];
  EXPECT_EQ(list["destinationCalendar"]["externalId"], "team@group.calendar.google.com");
  EXPECT_EQ(list["calendars"][1]["isDestination"], true);
  EXPECT_EQ(list["calendars"][0]["isDestination"], false);

  // Another user cannot pick Ada's calendar.
  const int64_t bob = server_->CreateUser("bob@example.com", "Bob");
  HttpResult theirs = Send("PUT", "/v2/destination-calendars",
                           {{"integration", "google_calendar"}, {"externalId", "ada@example.com"}},
                           server_->CreateApiKey(bob));
  EXPECT_EQ(theirs.status, 404) << theirs.body;
}

TEST_F(CalendarTest, EventLookupMapsTheEventAndSearchesDestinationThenPrimary) {
  AddStandardCalendars();
  google_.AddEvent("ada@example.com", GoogleEvent("primary-ev", "In primary"));
  google_.AddEvent("team@group.calendar.google.com", GoogleEvent("team-ev", "In team"));
  google_.AddEvent("holidays@group.v.calendar.google.com", GoogleEvent("holiday-ev", "Elsewhere"));
  ASSERT_EQ(ConnectAndSave().status, 200);

  HttpResult r = Get("/v2/calendars/google/event/primary-ev", key_);
  ASSERT_EQ(r.status, 200) << r.body;
  json j = r.Json();
  EXPECT_EQ(j["status"], "success");
  json d = j["data"];
  EXPECT_EQ(d["id"], "primary-ev");
  EXPECT_EQ(d["title"], "In primary");
  EXPECT_EQ(d["description"], "Notes");
  EXPECT_EQ(d["start"], (json{{"time", "2025-05-01T10:00:00Z"}, {"timeZone", "Europe/Berlin"}}));
  EXPECT_EQ(d["end"], (json{{"time", "2025-05-01T10:30:00Z"}, {"timeZone", "Europe/Berlin"}}));
  // Location fields without a value are left out of the answer (DESIGN §9).
  EXPECT_EQ(d["locations"], (json{{{"type", "video"}, {"url", "https://meet.google.com/abc-defg-hij"}}}));
  EXPECT_EQ(j["data"]["locations"][0].dump(), R"({"type":"video","url":"https://meet.google.com/abc-defg-hij"})");
  EXPECT_EQ(d["status"], "accepted");
  EXPECT_EQ(d["source"], "google");
  EXPECT_EQ(d["calendarEventOwner"], (json{{"email", "ada@example.com"}, {"name", "Ada"}}));
  ASSERT_EQ(d["attendees"].size(), 2u);
  EXPECT_EQ(d["attendees"][0]["host"], true);
  EXPECT_EQ(d["attendees"][1]["responseStatus"], "pending");
  ASSERT_EQ(d["hosts"].size(), 1u);
  EXPECT_EQ(d["hosts"][0]["email"], "ada@example.com");

  // Not in destination nor primary: 404 (only those calendars are searched).
  EXPECT_EQ(Get("/v2/calendars/google/event/team-ev", key_).status, 404);
  EXPECT_EQ(Get("/v2/calendars/google/event/holiday-ev", key_).status, 404);
  ASSERT_EQ(Send("PUT", "/v2/destination-calendars",
                 {{"integration", "google_calendar"}, {"externalId", "team@group.calendar.google.com"}}, key_)
                .status,
            200);
  const size_t before = google_.RequestsTo("/calendar/v3/calendars/").size();
  HttpResult team = Get("/v2/calendars/google/event/team-ev", key_);
  ASSERT_EQ(team.status, 200) << team.body;
  EXPECT_EQ(team.Json()["data"]["title"], "In team");
  auto after = google_.RequestsTo("/calendar/v3/calendars/");
  ASSERT_EQ(after.size(), before + 1);  // the destination was searched first
  EXPECT_EQ(after.back().path, "/calendar/v3/calendars/team%40group.calendar.google.com/events/team-ev");
  // Primary is searched after the destination.
  EXPECT_EQ(Get("/v2/calendars/google/event/primary-ev", key_).status, 200);

  // Unknown event, other calendars, bad path values.
  EXPECT_EQ(Get("/v2/calendars/google/event/nope", key_).status, 404);
  HttpResult outlook = Get("/v2/calendars/outlook/event/primary-ev", key_);
  EXPECT_EQ(outlook.status, 400) << outlook.body;
  EXPECT_EQ(outlook.Json()["error"]["details"]["field"], "calendar");
  EXPECT_EQ(Get("/v2/calendars/google/event/" + std::string(1100, 'a'), key_).status, 400);
}

TEST_F(CalendarTest, EventLookupCredentialsAndOwnership) {
  AddStandardCalendars();
  google_.AddEvent("ada@example.com", GoogleEvent("ada-ev", "Ada's meeting"));
  ASSERT_EQ(ConnectAndSave().status, 200);

  // A managed user of an OAuth client, with their own Google calendar.
  const int64_t owner = server_->CreateUser("owner@example.com", "Owner");
  OAuthGrant app = GrantOAuthToken(*server_, db_, owner, user_, {"APPS_READ"}, {"APPS_READ"});
  ASSERT_FALSE(app.client_id.empty());
  CliResult mu = server_->Cli({"admin", "managed-user", "create", "--client-id", app.client_id, "--email",
                               "managed@example.com", "--name", "Managed"});
  ASSERT_EQ(mu.exit_code, 0) << mu.err;
  const json managed = mu.Json();
  const std::string managed_token = managed.value("access_token", "");
  const int64_t managed_id = managed.value("id", int64_t{0});
  ASSERT_FALSE(managed_token.empty());
  ASSERT_GT(managed_id, 0);

  // The OAuth token (APPS_READ) is refused: 401 (spec §5.1), even for an existing event.
  HttpResult oauth = Get("/v2/calendars/google/event/ada-ev", app.access_token);
  EXPECT_EQ(oauth.status, 401) << oauth.body;
  // The managed user has no calendar: Ada's event is not found, never leaked.
  EXPECT_EQ(Get("/v2/calendars/google/event/ada-ev", managed_token).status, 404);
  EXPECT_EQ(Get("/v2/calendars/google/event/ada-ev", server_->CreateApiKey(managed_id)).status, 404);

  // The managed user connects (an API key of theirs), then finds their own event with their token.
  google_.AddEvent("managed@example.com", GoogleEvent("managed-ev", "Managed's meeting"));
  google_.AddCalendar({{"id", "managed@example.com"},
                       {"summary", "Managed"},
                       {"primary", true},
                       {"accessRole", "owner"},
                       {"timeZone", "UTC"}},
                      "managed");
  // Managed users cannot sign in, so they cannot finish the browser-bound connect flow
  // (docs/calendar.md): their Google connection is stored as their platform would have it made.
  ASSERT_EQ(ConnectAndSave(key_, "managed").status, 200);
  db_.Exec("UPDATE calendar_google_calendars SET user_id = " + std::to_string(managed_id) +
           " WHERE user_id = " + std::to_string(user_));
  db_.Exec("UPDATE calendar_google_credentials SET user_id = " + std::to_string(managed_id) +
           " WHERE user_id = " + std::to_string(user_));
  ASSERT_EQ(ConnectAndSave().status, 200);
  HttpResult mine = Get("/v2/calendars/google/event/managed-ev", managed_token);
  EXPECT_EQ(mine.status, 200) << mine.body;
  EXPECT_EQ(mine.Json()["data"]["title"], "Managed's meeting");
  // Each sees only their own: Ada's event stays hidden from the managed user, and vice versa.
  EXPECT_EQ(Get("/v2/calendars/google/event/ada-ev", managed_token).status, 404);
  EXPECT_EQ(Get("/v2/calendars/google/event/managed-ev", key_).status, 404);
  EXPECT_EQ(Get("/v2/calendars/google/event/ada-ev", key_).status, 200);
  // Without credentials: 401.
  EXPECT_EQ(http_.Get(Api("/v2/calendars/google/event/ada-ev")).status, 401);
}

// A feed's name is whatever bytes it sends: a long non-ASCII name is cut on a character boundary,
// invalid UTF-8 is repaired, and neither answers a server error.
TEST_F(CalendarTest, IcsFeedNamesAreStoredAsValidUtf8) {
  std::string long_name;
  for (int i = 0; i < 300; ++i) long_name += "\xC3\xA9";  // é: 600 bytes
  const std::string invalid_name = "Club \xFF\xFE\xC3 night";
  auto feed = [](const std::string& name) {
    return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nX-WR-CALNAME:" + name + "\r\nEND:VCALENDAR\r\n";
  };
  google_.SetIcs("long.ics", feed(long_name));
  google_.SetIcs("invalid.ics", feed(invalid_name));
  HttpResult saved = Send("POST", "/v2/calendars/ics-feed/save",
                          {{"urls", {google_.IcsUrl("long.ics"), google_.IcsUrl("invalid.ics")}}}, key_);
  ASSERT_EQ(saved.status, 201) << saved.body;
  json data = saved.Json()["data"]["calendars"];
  ASSERT_EQ(data.size(), 2u) << saved.body;
  EXPECT_EQ(saved.Json()["data"]["id"], data[0]["credentialId"]);
  EXPECT_EQ(data[0]["name"], long_name.substr(0, 254));
  EXPECT_EQ(data[1]["name"], "Club \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD night");
  EXPECT_EQ(db_.QueryValue("SELECT LENGTH(name) FROM calendar_ics_feeds ORDER BY id LIMIT 1"), "254");
  EXPECT_EQ(db_.QueryValue("SELECT CHAR_LENGTH(name) FROM calendar_ics_feeds ORDER BY id LIMIT 1"), "127");
  HttpResult list = Get("/v2/calendars", key_);
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(list.Json()["data"]["calendars"][0]["name"], long_name.substr(0, 254));
}

// An ICS feed host on loopback: every path a feed of 200 half-hour UTC events in May 2025 with an
// ETag (a matching If-None-Match answers 304 at once); a full answer waits `delay`. Counts the full
// answers per path.
class IcsFeedHost {
 public:
  explicit IcsFeedHost(std::chrono::milliseconds delay)
      : server_([this, delay](const PeerRequest& req) {
          PeerResponse res;
          if (req.Header("if-none-match") == "\"v1\"") {
            res.status = 304;
            res.headers.push_back({"ETag", "\"v1\""});
            return res;
          }
          {
            std::lock_guard<std::mutex> lock(mu_);
            ++full_[req.path];
          }
          res.content_type = "text/calendar";
          res.headers.push_back({"ETag", "\"v1\""});
          res.body = Feed(200);
          res.delay = delay;
          return res;
        }) {}

  std::string Url(const std::string& name) const { return server_.url() + "/" + name; }
  int FullAnswers(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    return full_["/" + name];
  }

  // `events` events from 2025-05-01 08:00Z on, one every 2 hours (at most 250: within May).
  static std::string Feed(int events) {
    std::string out = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Test//EN\r\n";
    for (int i = 0; i < events; ++i) {
      const int hour = 8 + 2 * i, day = 1 + hour / 24;
      char line[200];
      std::snprintf(
          line, sizeof line,
          "BEGIN:VEVENT\r\nUID:e%d@x\r\nDTSTART:202505%02dT%02d0000Z\r\nDTEND:202505%02dT%02d3000Z\r\n"
          "END:VEVENT\r\n",
          i, day, hour % 24, day, hour % 24);
      out += line;
    }
    return out + "END:VCALENDAR\r\n";
  }

 private:
  std::mutex mu_;
  std::map<std::string, int> full_;
  LoopbackHttpServer server_;
};

class CalendarIcsMemoryTest : public CalendarTest {
 protected:
  // About two feeds of 200 kept events each do not fit.
  void SetUp() override {
    calendar_extra_ = "  ics_memory_bytes: 6000\n";
    StartServer("");
  }
  double HeldBytesMetric() {
    const std::string text = http_.Get(Api("/metrics")).body;
    const std::string name = "\ncalendar_ics_memory_bytes ";
    const size_t at = text.find(name);
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + name.size()));
  }
  static constexpr const char* kRange =
      "/v2/calendars/busy-times?dateFrom=2025-05-01&dateTo=2025-05-31&timeZone=UTC";
};

TEST_F(CalendarIcsMemoryTest, ConcurrentReadersOfOneFeedShareOneDownloadAndParse) {
  IcsFeedHost host(std::chrono::milliseconds(1500));
  // Two users name the same feed (each may ask for outside data 4 times at once).
  const std::string other_key = server_->CreateApiKey(server_->CreateUser("bob@example.com", "Bob"));
  for (const std::string& key : {key_, other_key}) {
    HttpResult saved = Send("POST", "/v2/calendars/ics-feed/save", {{"urls", {host.Url("a.ics")}}}, key);
    ASSERT_EQ(saved.status, 201) << saved.body;
  }
  ASSERT_EQ(host.FullAnswers("a.ics"), 2);  // the saves' own downloads
  // Eight readers at once: the first starts the feed's refresh, the others join it (or, arriving
  // after it, ask conditionally and get 304): the feed is downloaded and parsed once.
  std::atomic<int> answered{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < 8; ++i) {
    readers.emplace_back([&, i] {
      HttpClient client;
      HttpResult r = client.Get(Api(kRange), Auth(i % 2 == 0 ? key_ : other_key));
      if (r.status == 200 && r.Json()["data"].size() == 200u && !r.Json().contains("failedSources"))
        ++answered;
    });
  }
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(answered.load(), 8);
  EXPECT_EQ(host.FullAnswers("a.ics"), 3);
  EXPECT_GT(HeldBytesMetric(), 0);
}

TEST_F(CalendarIcsMemoryTest, TheParsedFeedsKeptStayWithinIcsMemoryBytes) {
  IcsFeedHost host(std::chrono::milliseconds(0));
  HttpResult saved = Send("POST", "/v2/calendars/ics-feed/save",
                          {{"urls", {host.Url("a.ics"), host.Url("b.ics"), host.Url("c.ics")}}}, key_);
  ASSERT_EQ(saved.status, 201) << saved.body;
  for (int round = 0; round < 2; ++round) {
    HttpResult r = Get(kRange, key_);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.Json()["data"].size(), 600u) << round;  // every feed answered
    const double held = HeldBytesMetric();
    EXPECT_GT(held, 0) << round;
    EXPECT_LE(held, 6000) << round;
  }
  // The feeds that did not fit were dropped, so the second round downloaded them again in full
  // (a kept one is only asked conditionally).
  const int full = host.FullAnswers("a.ics") + host.FullAnswers("b.ics") + host.FullAnswers("c.ics");
  EXPECT_GE(full, 3 + 3 + 2);
  EXPECT_LE(full, 3 + 3 + 3);
}

// With the default config (no ics_allow_private_networks), feeds must be https and public.
class CalendarStrictIcsTest : public CalendarTest {
 protected:
  void SetUp() override { StartServer("", false); }
};

TEST_F(CalendarStrictIcsTest, PrivateAndPlainHttpFeedsAreRefused) {
  google_.SetIcs("ok.ics", kIcs);
  HttpResult http = Send("POST", "/v2/calendars/ics-feed/save", {{"urls", {google_.IcsUrl("ok.ics")}}}, key_);
  EXPECT_EQ(http.status, 400) << http.body;
  EXPECT_NE(http.body.find("https"), std::string::npos) << http.body;
  // https to a loopback address is refused before any TLS: the socket is never opened.
  const std::string https = "https://127.0.0.1:" + std::to_string(google_.port()) + "/ics/ok.ics";
  HttpResult priv = Send("POST", "/v2/calendars/ics-feed/save", {{"urls", {https}}}, key_);
  EXPECT_EQ(priv.status, 400) << priv.body;
  EXPECT_NE(priv.body.find("private"), std::string::npos) << priv.body;
  EXPECT_TRUE(google_.RequestsTo("/ics/").empty());
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_ics_feeds"), "0");
}

// Addresses that embed a private or metadata IPv4 address, and the ranges only the webhooks' table
// used to know, are refused when saved, naming what they are, before any connection.
TEST_F(CalendarStrictIcsTest, Nat64AndOtherNonPublicFeedAddressesAreRefused) {
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"https://[64:ff9b::a9fe:a9fe]/feed.ics", "NAT64 of 169.254.169.254: cloud metadata"},
      {"https://[64:ff9b::a00:1]:8443/feed.ics", "NAT64 of 10.0.0.1: private"},
      {"https://[2002:a9fe:a9fe::1]/feed.ics", "6to4 of 169.254.169.254: cloud metadata"},
      {"https://198.18.0.1/feed.ics", "benchmarking"},
      {"https://192.0.0.8/feed.ics", "protocol assignments"},
  };
  for (const auto& [url, why] : refused) {
    const auto start = std::chrono::steady_clock::now();
    HttpResult saved = Send("POST", "/v2/calendars/ics-feed/save", {{"urls", {url}}}, key_);
    EXPECT_EQ(saved.status, 400) << url << ": " << saved.body;
    EXPECT_NE(saved.body.find(why), std::string::npos) << url << ": " << saved.body;
    EXPECT_NE(saved.body.find("urls[0]"), std::string::npos) << saved.body;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << url << " was tried";
  }
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_ics_feeds"), "0");
  EXPECT_EQ(Get("/v2/me", key_).status, 200);
}

}  // namespace
}  // namespace rendezvous::testing
