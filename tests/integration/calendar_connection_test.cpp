// The Google connection's life after connecting (DESIGN §7): refresh refused by Google ->
// 409 reconnect_required until a new connect, 401 at connect time, the check and disconnect routes,
// and the connect flow bound to the browser that started it.
#include "calendar_fixture.hpp"

namespace rendezvous::testing {
namespace {

json EventOf(const std::string& id) {
  return {{"id", id},
          {"summary", "Sync"},
          {"status", "confirmed"},
          {"start", {{"dateTime", "2025-05-01T10:00:00Z"}}},
          {"end", {{"dateTime", "2025-05-01T10:30:00Z"}}}};
}

TEST_F(CalendarTest, RefusedRefreshAsksForReconnectOnEveryRouteUntilConnectedAgain) {
  AddStandardCalendars();
  google_.AddEvent("ada@example.com", EventOf("ev1"));
  ASSERT_EQ(ConnectAndSave().status, 200);
  HttpResult fine = Get("/v2/calendars/google/check", key_);
  ASSERT_EQ(fine.status, 200) << fine.body;
  EXPECT_EQ(fine.Json(), (json{{"status", "success"},
                               {"data", {{"connected", true}, {"valid", true}, {"reconnectRequired", false}}}}));

  google_.ExpireAccessTokens();
  google_.RevokeRefreshTokens();
  HttpResult refused = Get("/v2/calendars/busy-times?dateFrom=2025-05-01&dateTo=2025-05-02", key_);
  EXPECT_EQ(refused.status, 409) << refused.body;
  EXPECT_EQ(refused.Json()["error"]["code"], "reconnect_required");
  EXPECT_EQ(db_.QueryValue("SELECT invalid_at IS NOT NULL FROM calendar_google_credentials"), "1");
  EXPECT_EQ(google_.RequestsTo("/token").size(), 2u);  // the code exchange and one refused refresh

  // From now on nothing asks Google: every route that needs the credential answers 409.
  const size_t calls = google_.Requests().size();
  for (const char* path : {"/v2/calendars/google/event/ev1",
                           "/v2/calendars/busy-times?dateFrom=2025-05-01&dateTo=2025-05-02"}) {
    HttpResult r = Get(path, key_);
    EXPECT_EQ(r.status, 409) << path << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["code"], "reconnect_required") << path;
  }
  HttpResult check = Get("/v2/calendars/google/check", key_);
  ASSERT_EQ(check.status, 200) << check.body;
  EXPECT_EQ(check.Json()["data"],
            (json{{"connected", true}, {"valid", false}, {"reconnectRequired", true}}));
  EXPECT_EQ(google_.Requests().size(), calls);
  // The calendar list itself is ours: still listed.
  EXPECT_EQ(Get("/v2/calendars", key_).status, 200);
  EXPECT_EQ(server_->Log().find("ya29.fake"), std::string::npos) << "a token was logged";
  EXPECT_EQ(server_->Log().find("1//fake-refresh"), std::string::npos) << "a token was logged";

  // Connecting again replaces the credential and clears the mark.
  ASSERT_EQ(ConnectAndSave().status, 200);
  EXPECT_EQ(db_.QueryValue("SELECT invalid_at IS NULL FROM calendar_google_credentials"), "1");
  HttpResult again = Get("/v2/calendars/google/event/ev1", key_);
  EXPECT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(Get("/v2/calendars/google/check", key_).Json()["data"]["valid"], true);
}

TEST_F(CalendarTest, GoogleFailingTheRefreshIsABadGatewayNotAReconnect) {
  AddStandardCalendars();
  google_.AddEvent("ada@example.com", EventOf("ev1"));
  ASSERT_EQ(ConnectAndSave().status, 200);
  db_.Exec("UPDATE calendar_google_credentials SET access_expires_at = 1");
  google_.SetFailStatus(503);
  HttpResult down = Get("/v2/calendars/google/event/ev1", key_);
  EXPECT_EQ(down.status, 502) << down.body;
  HttpResult check = Get("/v2/calendars/google/check", key_);
  EXPECT_EQ(check.status, 502) << check.body;
  EXPECT_EQ(db_.QueryValue("SELECT invalid_at IS NULL FROM calendar_google_credentials"), "1");
  google_.SetFailStatus(0);
  EXPECT_EQ(Get("/v2/calendars/google/event/ev1", key_).status, 200);
}

TEST_F(CalendarTest, ConnectRefreshesOnceWhenGoogleRefusesItsFreshToken) {
  AddStandardCalendars();
  google_.FailNextApiCalls(401, 1);
  HttpResult saved = ConnectAndSave();
  ASSERT_EQ(saved.status, 200) << saved.body;
  EXPECT_EQ(saved.Json()["data"]["calendars"].size(), 3u);
  EXPECT_EQ(google_.refreshes(), 1);
  EXPECT_EQ(google_.RequestsTo("/calendar/v3/users/me/calendarList").size(), 2u);
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_google_calendars"), "3");

  // Refused again after the one refresh: Google failing (502), not a loop; nothing stored.
  db_.Exec("DELETE FROM calendar_google_calendars");
  db_.Exec("DELETE FROM calendar_google_credentials");
  google_.FailNextApiCalls(401, 2);
  HttpResult twice = ConnectAndSave();
  EXPECT_EQ(twice.status, 502) << twice.body;
  EXPECT_EQ(google_.refreshes(), 2);
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_google_credentials"), "0");

  // The refresh refused too: 409 reconnect_required, nothing stored, never a 5xx.
  google_.RevokeRefreshTokens();
  google_.FailNextApiCalls(401, 1);
  HttpResult refused = ConnectAndSave();
  EXPECT_EQ(refused.status, 409) << refused.body;
  EXPECT_EQ(refused.Json()["error"]["code"], "reconnect_required");
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_google_credentials"), "0");
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_google_calendars"), "0");

}

TEST_F(CalendarTest, CheckWithoutAConnection) {
  HttpResult r = Get("/v2/calendars/google/check", key_);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["data"], (json{{"connected", false}, {"valid", false}, {"reconnectRequired", false}}));
  EXPECT_TRUE(google_.Requests().empty());
  EXPECT_EQ(http_.Get(Api("/v2/calendars/google/check")).status, 401);
}

TEST_F(CalendarTest, DisconnectRevokesAtGoogleAndForgetsTheConnection) {
  AddStandardCalendars();
  ASSERT_EQ(ConnectAndSave().status, 200);
  ASSERT_EQ(Send("PUT", "/v2/destination-calendars",
                 {{"integration", "google_calendar"}, {"externalId", "ada@example.com"}}, key_)
                .status,
            200);
  ASSERT_EQ(Send("POST", "/v2/calendars/ics-feed/save", {{"urls", {google_.IcsUrl("feed.ics")}}}, key_).status,
            400);  // no such feed; ICS feeds are not Google's and stay untouched anyway
  const std::vector<std::string> issued = google_.IssuedTokens();
  ASSERT_EQ(issued.size(), 2u);

  const std::string credential = db_.QueryValue("SELECT MAX(id) FROM calendar_google_credentials");
  HttpResult off = Send("POST", "/v2/calendars/google/disconnect", json::object(), key_);
  ASSERT_EQ(off.status, 200) << off.body;
  EXPECT_EQ(off.Json()["status"], "success");
  EXPECT_EQ(off.Json()["data"], (json{{"id", std::stoll(credential)},
                                      {"type", "google_calendar"},
                                      {"userId", user_},
                                      {"teamId", nullptr},
                                      {"appId", "google-calendar"},
                                      {"invalid", false},
                                      {"disconnected", true},
                                      {"revoked", true}}))
      << off.body;
  EXPECT_EQ(google_.RevokedTokens(), std::vector<std::string>{issued[1]});  // the refresh token
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_google_credentials"), "0");
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_google_calendars"), "0");
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_destinations"), "0");
  HttpResult list = Get("/v2/calendars", key_);
  EXPECT_EQ(list.Json()["data"]["calendars"], json::array()) << list.body;
  EXPECT_EQ(Get("/v2/calendars/google/check", key_).Json()["data"]["connected"], false);
  EXPECT_EQ(Get("/v2/calendars/google/event/ev1", key_).status, 404);

  // Idempotent: nothing connected any more.
  const size_t calls = google_.Requests().size();
  HttpResult again = Send("POST", "/v2/calendars/google/disconnect", json::object(), key_);
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.Json()["data"], (json{{"disconnected", false}, {"revoked", false}}));
  EXPECT_EQ(google_.Requests().size(), calls);

  // Google down: the connection still goes (the answer says it was not revoked).
  ASSERT_EQ(ConnectAndSave().status, 200);
  google_.SetFailStatus(503);
  HttpResult down = Send("POST", "/v2/calendars/google/disconnect", json::object(), key_);
  ASSERT_EQ(down.status, 200) << down.body;
  EXPECT_EQ(down.Json()["data"]["disconnected"], true) << down.body;
  EXPECT_EQ(down.Json()["data"]["revoked"], false);
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_google_credentials"), "0");
}

// The attack: Bob starts a connect and hands the link to Carol, hoping her Google calendar lands
// in his account. The flow only finishes in the browser of the signed-in user who started it.
TEST_F(CalendarTest, ConnectFlowFinishesOnlyInTheBrowserThatStartedIt) {
  google_.AddCalendar({{"id", "carol@example.com"}, {"summary", "Carol"}, {"primary", true}, {"accessRole", "owner"}},
                      "carol");
  const int64_t bob = server_->CreateUser("bob@example.com", "Bob");
  const std::string bob_key = server_->CreateApiKey(bob);
  server_->CreateUser("carol@example.com", "Carol");
  const std::string carol_browser = SignIn("carol@example.com");
  const std::string bob_browser = SignIn("bob@example.com");

  const std::string bob_link = ConnectUrl(bob_key);
  const std::string state = QueryParam(bob_link, "state");
  ASSERT_FALSE(state.empty());

  // Carol opens Bob's link: refused, no cookie, no Google link, no account named.
  StartPage carol_start = OpenStartPage(bob_link, carol_browser);
  EXPECT_EQ(carol_start.page.status, 403) << carol_start.page.body;
  EXPECT_TRUE(carol_start.binding_cookie.empty());
  EXPECT_TRUE(carol_start.google_url.empty());
  EXPECT_EQ(carol_start.page.body.find("bob@example.com"), std::string::npos);
  // Not signed in: the sign-in page first.
  StartPage anonymous = OpenStartPage(bob_link, "");
  EXPECT_EQ(anonymous.page.status / 100, 3) << anonymous.page.body;
  EXPECT_NE(anonymous.page.Header("location").find("/auth/login"), std::string::npos);
  EXPECT_TRUE(anonymous.binding_cookie.empty());

  // Carol consents at Google anyway (Bob forwarded Google's URL): her browser has no binding.
  const std::string carol_code = google_.IssueCode("carol");
  for (const std::string& cookies : {std::string(), carol_browser,
                                     "rdv_gcal_" + HexEncode(Sha256Raw(state)).substr(0, 16) + "=forged-value-of-43-characters-aaaaaaaaaa"}) {
    HttpResult r = SaveFrom(carol_code, state, cookies);
    EXPECT_EQ(r.status, 403) << cookies << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["code"], "connect_browser_mismatch") << r.body;
  }
  EXPECT_EQ(google_.exchanges(), 0);
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_google_credentials"), "0");
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_google_calendars"), "0");

  // Bob's own browser, signed in as Bob, can still finish his flow (the state was not used up),
  // and a binding cookie of Bob's does not help Carol's other state.
  StartPage bob_start = OpenStartPage(bob_link, bob_browser);
  ASSERT_EQ(bob_start.page.status, 200) << bob_start.page.body;
  EXPECT_NE(bob_start.page.body.find("bob@example.com"), std::string::npos);
  // Bound now: still nothing for a browser without Bob's secret.
  const std::string name = bob_start.binding_cookie.substr(0, bob_start.binding_cookie.find('='));
  HttpResult forged = SaveFrom(carol_code, state, name + "=" + std::string(43, 'A'));
  EXPECT_EQ(forged.status, 403) << forged.body;
  EXPECT_EQ(google_.exchanges(), 0);
  HttpResult bob_saved = SaveFrom(google_.IssueCode(), state, bob_start.binding_cookie);
  EXPECT_EQ(bob_saved.status, 200) << bob_saved.body;
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_google_credentials WHERE user_id = " + std::to_string(bob)),
            "1");
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_google_calendars WHERE external_id = 'carol@example.com'"),
            "0");
}

}  // namespace
}  // namespace rendezvous::testing
