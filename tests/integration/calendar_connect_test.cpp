// The Google connect flow (DESIGN §7): connect -> save -> calendars, single-use states, the
// redir rule, tokens encrypted at rest, refresh-once, Google failures, and the §5.3 scopes.
#include <thread>

#include "calendar_fixture.hpp"

namespace rendezvous::testing {
namespace {

TEST_F(CalendarTest, ConnectSaveAndListCalendars) {
  AddStandardCalendars();
  HttpResult c = Get("/v2/calendars/google/connect", key_);
  ASSERT_EQ(c.status, 200) << c.body;
  EXPECT_EQ(c.Json()["status"], "success");
  // authUrl is the start page on the app listener; it names the account and links to Google.
  const std::string auth_url = c.Json()["data"]["authUrl"];
  const std::string start_prefix = "http://127.0.0.1:8081/settings/calendars/google/start?state=";
  ASSERT_EQ(auth_url.rfind(start_prefix, 0), 0u) << auth_url;
  StartPage start = OpenStartPage(auth_url, AdaBrowser());
  ASSERT_EQ(start.page.status, 200) << start.page.body;
  EXPECT_NE(start.page.body.find("ada@example.com"), std::string::npos) << start.page.body;
  EXPECT_NE(start.page.body.find("Continue to Google"), std::string::npos);
  EXPECT_EQ(start.page.Header("cache-control"), "no-store");
  EXPECT_EQ(start.page.Header("referrer-policy"), "no-referrer");
  for (const char* attribute : {"HttpOnly", "SameSite=Lax", "Path=/v2/calendars/google/save", "Max-Age=600"})
    EXPECT_NE(start.set_cookie.find(attribute), std::string::npos) << start.set_cookie;
  EXPECT_EQ(start.set_cookie.find("Secure"), std::string::npos) << "http app_url";
  const std::string url = start.google_url;
  EXPECT_EQ(url.rfind(google_.auth_url() + "?", 0), 0u) << url;
  EXPECT_EQ(QueryParam(url, "client_id"), "fake-client-id");
  EXPECT_EQ(QueryParam(url, "redirect_uri"), "http://127.0.0.1:8080/v2/calendars/google/save");
  EXPECT_EQ(QueryParam(url, "response_type"), "code");
  EXPECT_EQ(QueryParam(url, "access_type"), "offline");
  EXPECT_EQ(QueryParam(url, "prompt"), "consent");
  EXPECT_NE(QueryParam(url, "scope").find("https://www.googleapis.com/auth/calendar"), std::string::npos);
  const std::string state = QueryParam(url, "state");
  EXPECT_GE(state.size(), 40u);
  EXPECT_EQ(QueryParam(auth_url, "state"), state);

  HttpResult s = SaveFrom(google_.IssueCode(), state, start.binding_cookie);
  ASSERT_EQ(s.status, 200) << s.body;
  // The binding cookie is cleared once used.
  EXPECT_EQ(s.Header("set-cookie").rfind(start.binding_cookie.substr(0, start.binding_cookie.find('=') + 1) +
                                             ";", 0),
            0u)
      << s.Header("set-cookie");
  EXPECT_NE(s.Header("set-cookie").find("Max-Age=0"), std::string::npos) << s.Header("set-cookie");
  json cals = s.Json()["data"]["calendars"];
  ASSERT_EQ(cals.size(), 3u) << s.body;
  EXPECT_EQ(cals[0]["externalId"], "ada@example.com");
  EXPECT_EQ(cals[0]["primary"], true);
  EXPECT_EQ(cals[0]["readOnly"], false);
  EXPECT_EQ(cals[0]["integration"], "google_calendar");
  EXPECT_EQ(cals[0]["timeZone"], "Europe/Berlin");
  EXPECT_EQ(cals[2]["readOnly"], true);

  // The code exchange sent what Google expects.
  auto token_requests = google_.RequestsTo("/token");
  ASSERT_EQ(token_requests.size(), 1u);
  const std::string& body = token_requests[0].body;
  EXPECT_NE(body.find("grant_type=authorization_code"), std::string::npos) << body;
  EXPECT_NE(body.find("client_secret=fake-client-secret"), std::string::npos) << body;
  EXPECT_NE(body.find("redirect_uri=http%3A%2F%2F127.0.0.1%3A8080%2Fv2%2Fcalendars%2Fgoogle%2Fsave"),
            std::string::npos)
      << body;

  HttpResult list = Get("/v2/calendars", key_);
  ASSERT_EQ(list.status, 200) << list.body;
  json data = list.Json()["data"];
  EXPECT_EQ(data["calendars"].size(), 3u);
  // No destination was chosen: events go to the primary calendar, which is the destination.
  EXPECT_EQ(data["destinationCalendar"]["externalId"], "ada@example.com");
  ASSERT_EQ(data["connectedCalendars"].size(), 1u) << list.body;
  EXPECT_EQ(data["connectedCalendars"][0]["calendars"], data["calendars"]);
  EXPECT_EQ(data["calendars"][1]["name"], "Team");
  EXPECT_GT(data["calendars"][1]["credentialId"].get<int64_t>(), 0);

  // Connecting again replaces the list (one credential per user).
  HttpResult again = ConnectAndSave();
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_google_credentials"), "1");
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_google_calendars"), "3");
}

// Google's calendar names can be longer than the column: cut on a character boundary, never a 5xx.
TEST_F(CalendarTest, LongGoogleCalendarNamesAreCutOnCharacterBoundaries) {
  std::string long_name;
  for (int i = 0; i < 300; ++i) long_name += "\xE6\x97\xA5";  // 日: 900 bytes
  google_.AddCalendar({{"id", "ada@example.com"}, {"summary", long_name}, {"primary", true}, {"accessRole", "owner"}});
  HttpResult s = ConnectAndSave();
  ASSERT_EQ(s.status, 200) << s.body;
  EXPECT_EQ(s.Json()["data"]["calendars"][0]["name"], long_name.substr(0, 255));
  EXPECT_EQ(db_.QueryValue("SELECT CHAR_LENGTH(name) FROM calendar_google_calendars"), "85");
  HttpResult list = Get("/v2/calendars", key_);
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(list.Json()["data"]["calendars"][0]["name"], long_name.substr(0, 255));
}

TEST_F(CalendarTest, BadReplayedAndExpiredStatesAre400) {
  AddStandardCalendars();
  HttpResult bad = SaveWith(google_.IssueCode(), "not-a-state");
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(bad.Json()["error"]["code"], "invalid_state");
  HttpResult missing = http_.Get(Api("/v2/calendars/google/save?code=x"));
  EXPECT_EQ(missing.status, 400) << missing.body;
  EXPECT_EQ(google_.exchanges(), 0);

  const std::string state = ConnectState(key_);
  ASSERT_EQ(SaveWith(google_.IssueCode(), state).status, 200);
  HttpResult replay = SaveWith(google_.IssueCode(), state);
  EXPECT_EQ(replay.status, 400) << replay.body;
  EXPECT_EQ(google_.exchanges(), 1);

  const std::string old = ConnectState(key_);
  db_.Exec(
      "UPDATE calendar_connect_states SET expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE used_at IS "
      "NULL");
  HttpResult expired = SaveWith(google_.IssueCode(), old);
  EXPECT_EQ(expired.status, 400) << expired.body;
  EXPECT_EQ(google_.exchanges(), 1);
}

TEST_F(CalendarTest, SaveRedirectsOnlyToOwnOrigins) {
  AddStandardCalendars();
  const std::string redir = "http://127.0.0.1:8081/settings/calendars?connected=1";
  HttpResult s = SaveWith(google_.IssueCode(), ConnectState(key_, redir));
  EXPECT_EQ(s.status, 302) << s.body;
  EXPECT_EQ(s.Header("location"), redir);
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_google_calendars"), "3");

  for (const char* evil :
       {"https://evil.example.com/", "http://127.0.0.1:8081.evil.com/", "//evil.example.com/x",
        "http://127.0.0.1:8081@evil.example.com/", "javascript:alert(1)"}) {
    HttpResult r = Get("/v2/calendars/google/connect?redir=" + FormEncode(evil), key_);
    EXPECT_EQ(r.status, 400) << evil << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], "redir");
  }

  // The user denied access at Google: back to redir with the error.
  const std::string denied_state = ConnectState(key_, "http://127.0.0.1:8081/settings");
  const std::string denied_path = "/v2/calendars/google/save?error=access_denied&state=" + FormEncode(denied_state);
  // Only in the browser that started the flow (elsewhere: 403, nothing revealed).
  EXPECT_EQ(http_.Get(Api(denied_path)).status, 403);
  HttpResult denied = http_.Get(Api(denied_path), {"Cookie: " + bindings_[denied_state]});
  EXPECT_EQ(denied.status, 302);
  EXPECT_EQ(denied.Header("location"), "http://127.0.0.1:8081/settings?error=access_denied");
}

TEST_F(CalendarTest, TokensAreEncryptedAtRest) {
  AddStandardCalendars();
  ASSERT_EQ(ConnectAndSave().status, 200);
  const std::string access = db_.QueryValue("SELECT access_token_enc FROM calendar_google_credentials");
  const std::string refresh = db_.QueryValue("SELECT refresh_token_enc FROM calendar_google_credentials");
  EXPECT_EQ(access.rfind("v1:", 0), 0u) << access;
  EXPECT_EQ(refresh.rfind("v1:", 0), 0u) << refresh;
  const auto issued = google_.IssuedTokens();
  ASSERT_EQ(issued.size(), 2u);
  for (const std::string& t : issued) {
    EXPECT_EQ(access.find(t), std::string::npos);
    EXPECT_EQ(refresh.find(t), std::string::npos);
    EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_google_credentials WHERE CONCAT(access_token_enc,"
                             " refresh_token_enc) LIKE '%" +
                             t.substr(5) + "%'"),
              "0");
    EXPECT_EQ(server_->Log().find(t), std::string::npos) << "a token was logged";
  }
}

TEST_F(CalendarTest, ExpiredAccessTokenIsRefreshedOnce) {
  AddStandardCalendars();
  google_.AddEvent("ada@example.com", {{"id", "ev1"},
                                       {"summary", "Sync"},
                                       {"status", "confirmed"},
                                       {"start", {{"dateTime", "2025-05-01T10:00:00Z"}}},
                                       {"end", {{"dateTime", "2025-05-01T10:30:00Z"}}}});
  ASSERT_EQ(ConnectAndSave().status, 200);
  const std::string before = db_.QueryValue("SELECT access_token_enc FROM calendar_google_credentials");
  google_.ExpireAccessTokens();
  HttpResult r = Get("/v2/calendars/google/event/ev1", key_);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["data"]["title"], "Sync");
  EXPECT_EQ(google_.refreshes(), 1);
  EXPECT_NE(db_.QueryValue("SELECT access_token_enc FROM calendar_google_credentials"), before);
  // The refreshed token is stored and used: no second refresh.
  ASSERT_EQ(Get("/v2/calendars/google/event/ev1", key_).status, 200);
  EXPECT_EQ(google_.refreshes(), 1);

  // A known expiry refreshes before calling.
  db_.Exec("UPDATE calendar_google_credentials SET access_expires_at = 1");
  ASSERT_EQ(Get("/v2/calendars/google/event/ev1", key_).status, 200);
  EXPECT_EQ(google_.refreshes(), 2);

  // Google refuses the refresh token: 409 reconnect_required, once, no loop.
  google_.ExpireAccessTokens();
  google_.RevokeRefreshTokens();
  const size_t calls = google_.Requests().size();
  HttpResult refused = Get("/v2/calendars/google/event/ev1", key_);
  EXPECT_EQ(refused.status, 409) << refused.body;
  EXPECT_EQ(refused.Json()["error"]["code"], "reconnect_required") << refused.body;
  EXPECT_NE(refused.Json()["error"]["message"].get<std::string>().find("connect the calendar again"),
            std::string::npos)
      << refused.body;
  EXPECT_EQ(google_.Requests().size(), calls + 2);  // the 401 and one refresh attempt
}

TEST_F(CalendarTest, GoogleFailuresOnSaveStoreNothing) {
  AddStandardCalendars();
  HttpResult unknown_code = SaveWith("4/never-issued", ConnectState(key_));
  EXPECT_EQ(unknown_code.status, 502) << unknown_code.body;
  EXPECT_EQ(unknown_code.Json()["error"]["code"], "bad_gateway");
  EXPECT_NE(unknown_code.body.find("invalid_grant"), std::string::npos) << unknown_code.body;

  const std::string state = ConnectState(key_);
  const std::string code = google_.IssueCode();
  google_.SetFailStatus(500);
  HttpResult down = SaveWith(code, state);
  EXPECT_EQ(down.status, 502) << down.body;
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_google_credentials"), "0");
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_google_calendars"), "0");
}

TEST_F(CalendarTest, RoutesEnforceTheirScopesForOAuthTokens) {
  AddStandardCalendars();
  const int64_t owner = server_->CreateUser("owner@example.com", "Owner");
  OAuthGrant read = GrantOAuthToken(*server_, db_, owner, user_, {"APPS_READ", "APPS_WRITE"}, {"APPS_READ"});
  OAuthGrant write =
      GrantOAuthToken(*server_, db_, owner, user_, {"APPS_READ", "APPS_WRITE"}, {"APPS_WRITE"});
  OAuthGrant legacy = GrantOAuthToken(*server_, db_, owner, user_, {}, {});
  OAuthGrant other = GrantOAuthToken(*server_, db_, owner, user_, {"BOOKING_READ"}, {"BOOKING_READ"});
  ASSERT_FALSE(read.access_token.empty());

  // Connect with an OAuth token granted APPS_WRITE.
  HttpResult saved = ConnectAndSave(write.access_token);
  ASSERT_EQ(saved.status, 200) << saved.body;

  struct Case {
    std::string method, path;
    json body;
    std::string scope;
    int granted_status;  // what the handler answers once the scope lets it run
  };
  const std::vector<Case> cases = {
      {"GET", "/v2/calendars", nullptr, "APPS_READ", 200},
      {"GET", "/v2/calendars/busy-times?dateFrom=2025-05-01&dateTo=2025-05-02", nullptr, "APPS_READ", 200},
      {"GET", "/v2/calendars/google/connect", nullptr, "APPS_WRITE", 200},
      // The feed does not exist: the handler ran and refused it.
      {"POST", "/v2/calendars/ics-feed/save", {{"urls", {google_.IcsUrl("missing.ics")}}}, "APPS_WRITE", 400},
      {"PUT",
       "/v2/destination-calendars",
       {{"integration", "google_calendar"}, {"externalId", "ada@example.com"}},
       "APPS_WRITE",
       200},
      {"GET", "/v2/calendars/google/check", nullptr, "APPS_READ", 200},
      // No feed saved: the handler ran and said so.
      {"GET", "/v2/calendars/ics-feed/check", nullptr, "APPS_READ", 400},
      // Last: the first call disconnects, the others find nothing connected (still 200).
      {"POST", "/v2/calendars/google/disconnect", json::object(), "APPS_WRITE", 200},
  };
  for (const Case& c : cases) {
    const std::string& granted = c.scope == "APPS_READ" ? read.access_token : write.access_token;
    const std::string& missing = c.scope == "APPS_READ" ? write.access_token : read.access_token;
    auto call = [&](const std::string& token) {
      return c.method == "GET" ? Get(c.path, token) : Send(c.method, c.path, c.body, token);
    };
    HttpResult ok = call(granted);
    EXPECT_EQ(ok.status, c.granted_status) << c.path << " " << ok.body;
    HttpResult denied = call(missing);
    EXPECT_EQ(denied.status, 403) << c.path << " " << denied.body;
    EXPECT_EQ(denied.Json()["error"]["code"], "insufficient_scope") << c.path;
    EXPECT_NE(denied.Header("www-authenticate").find(c.scope), std::string::npos) << c.path;
    EXPECT_EQ(call(other.access_token).status, 403) << c.path;
    HttpResult all = call(legacy.access_token);
    EXPECT_EQ(all.status, ok.status) << c.path << " " << all.body;
  }
}

TEST_F(CalendarTest, GoogleDownOrSlowIs502Or504AndTheServerKeepsServing) {
  AddStandardCalendars();
  google_.AddEvent("ada@example.com", {{"id", "ev1"}, {"summary", "Sync"}});
  ASSERT_EQ(ConnectAndSave().status, 200);

  google_.SetFailStatus(503);
  HttpResult down = Get("/v2/calendars/google/event/ev1", key_);
  EXPECT_EQ(down.status, 502) << down.body;
  HttpResult busy = Get("/v2/calendars/busy-times?dateFrom=2025-05-01&dateTo=2025-05-02", key_);
  EXPECT_EQ(busy.status, 502) << busy.body;
  google_.SetFailStatus(0);

  google_.SetDelay(std::chrono::milliseconds(15000));
  HttpResult slow;
  std::thread t([&] {
    HttpClient client;
    slow = client.Request("GET", Api("/v2/calendars/google/event/ev1"), "", Auth(key_), 30000);
  });
  ASSERT_TRUE(google_.AwaitRequestsTo("/calendar/v3/calendars/", 1));
  HttpClient other;
  EXPECT_EQ(other.Get(Api("/healthz")).status, 200);
  EXPECT_EQ(other.Get(Api("/v2/calendars"), Auth(key_)).status, 200);
  t.join();
  EXPECT_EQ(slow.status, 504) << slow.body;
  EXPECT_EQ(slow.Json()["error"]["code"], "gateway_timeout");
  google_.SetDelay(std::chrono::milliseconds(0));
  EXPECT_EQ(Get("/v2/calendars/google/event/ev1", key_).status, 200);

  HttpResult metrics = http_.Get(Api("/metrics"));
  EXPECT_NE(
      metrics.body.find("calendar_google_requests_total{endpoint=\"events_get\",outcome=\"timeout\"} 1"),
      std::string::npos)
      << metrics.body.substr(0, 200);
}

class CalendarNoKeyTest : public CalendarTest {
 protected:
  void SetUp() override { StartServer("security:\n  encryption_key_env: RDV_CALENDAR_TEST_UNSET_KEY\n"); }
};

TEST_F(CalendarNoKeyTest, ConnectAnswers503AndTheLogSaysWhatToSet) {
  EXPECT_TRUE(server_->AwaitLog("encryption_key_env"));
  HttpResult r = Get("/v2/calendars/google/connect", key_);
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_EQ(r.Json()["error"]["code"], "not_configured");
  EXPECT_NE(r.body.find("RENDEZVOUS_ENCRYPTION_KEY"), std::string::npos);
  EXPECT_EQ(Get("/v2/calendars", key_).status, 200);
}

}  // namespace
}  // namespace rendezvous::testing
