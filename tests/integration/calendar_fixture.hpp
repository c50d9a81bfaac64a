// Shared set-up of the calendar integration tests: a fake Google (tests/support/fake_google.hpp),
// the real server pointed at it, a user with an API key, and helpers for the connect flow.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fake_google.hpp"
#include "google_connect.hpp"
#include "http_client.hpp"
#include "oauth_support.hpp"
#include "scratch_db.hpp"
#include "test_server.hpp"

namespace rendezvous::testing {

using nlohmann::json;

class CalendarTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(""); }

  // `other_plugins`: YAML for other plugins under `plugins:` (e.g. "bookings:\n  enabled: false\n").
  void StartServer(const std::string& top_extra, bool allow_private_ics = true,
                   const std::string& other_plugins = "") {
    TestServerOptions o;
    o.plugins = google_.PluginConfig(allow_private_ics) + calendar_extra_ + other_plugins;
    o.top_extra = top_extra;
    server_ = std::make_unique<TestServer>(db_.name(), o);
    server_->Migrate();
    user_ = server_->CreateUser("ada@example.com", "Ada");
    key_ = server_->CreateApiKey(user_);
    std::string why;
    ASSERT_TRUE(server_->Start(&why)) << why;
  }

  std::string Api(const std::string& path) const { return server_->api() + path; }
  static std::vector<std::string> Auth(const std::string& token) {
    return {"Authorization: Bearer " + token};
  }
  HttpResult Get(const std::string& path, const std::string& token) {
    return http_.Get(Api(path), Auth(token));
  }
  HttpResult Send(const std::string& method, const std::string& path, const json& body,
                  const std::string& token) {
    std::vector<std::string> h = Auth(token);
    h.push_back("Content-Type: application/json");
    return http_.Request(method, Api(path), body.dump(), h);
  }

  // Query parameter `name` of `url` (decoded).
  static std::string QueryParam(const std::string& url, const std::string& name) {
    return QueryParameter(url, name);
  }

  // A browser signed in on the app listener: its session cookie ("rdv_session=..").
  std::string SignIn(const std::string& email, const std::string& password = "correct horse battery") {
    std::string why;
    std::string cookie = SignInBrowser(http_, server_->app(), email, password, &why);
    EXPECT_FALSE(cookie.empty()) << why;
    return cookie;
  }
  // Ada's signed-in browser (signed in once per test).
  const std::string& AdaBrowser() {
    if (ada_session_.empty()) ada_session_ = SignIn("ada@example.com");
    return ada_session_;
  }

  using StartPage = ConnectStartPage;
  // `auth_url` names the configured app_url (http://127.0.0.1:8081); the request goes to the app
  // listener's real port.
  StartPage OpenStartPage(const std::string& auth_url, const std::string& session_cookie) {
    return OpenConnectStartPage(http_, server_->app(), auth_url, session_cookie);
  }

  // GET /v2/calendars/google/connect's authUrl ("" on failure).
  std::string ConnectUrl(const std::string& token, const std::string& redir = "") {
    std::string path = "/v2/calendars/google/connect";
    if (!redir.empty()) path += "?redir=" + FormEncode(redir);
    HttpResult r = Get(path, token);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.Json()["data"].value("authUrl", "");
  }
  // connect, then the start page in `browser` (default: Ada's signed-in browser); returns the
  // state, and remembers the binding cookie SaveWith sends for it.
  std::string ConnectState(const std::string& token, const std::string& redir = "", std::string browser = "") {
    if (browser.empty()) browser = AdaBrowser();
    const std::string state = QueryParam(ConnectUrl(token, redir), "state");
    StartPage start = OpenStartPage("http://127.0.0.1:8081/settings/calendars/google/start?state=" + FormEncode(state),
                                    browser);
    EXPECT_EQ(start.page.status, 200) << start.page.body;
    EXPECT_EQ(QueryParam(start.google_url, "state"), state);
    bindings_[state] = start.binding_cookie;
    return state;
  }
  // Google's redirect back to /save, from the browser that opened the start page for `state`.
  HttpResult SaveWith(const std::string& code, const std::string& state) {
    return SaveFrom(code, state, bindings_.count(state) ? bindings_[state] : "");
  }
  // The same from a browser holding `cookies` ("" = none).
  HttpResult SaveFrom(const std::string& code, const std::string& state, const std::string& cookies) {
    std::vector<std::string> h;
    if (!cookies.empty()) h.push_back("Cookie: " + cookies);
    return http_.Get(Api("/v2/calendars/google/save?code=" + FormEncode(code) + "&state=" + FormEncode(state)), h);
  }

  // The usual Google account: a primary calendar, a writable team calendar, a read-only one.
  void AddStandardCalendars() {
    google_.AddCalendar({{"id", "ada@example.com"},
                         {"summary", "Ada"},
                         {"primary", true},
                         {"accessRole", "owner"},
                         {"timeZone", "Europe/Berlin"}});
    google_.AddCalendar({{"id", "team@group.calendar.google.com"},
                         {"summary", "Team"},
                         {"accessRole", "writer"},
                         {"timeZone", "America/New_York"}});
    google_.AddCalendar({{"id", "holidays@group.v.calendar.google.com"},
                         {"summary", "Holidays"},
                         {"accessRole", "reader"},
                         {"timeZone", "UTC"}});
  }

  // connect -> (Google consent) -> save, with `token` (default: the API key). Returns the save answer.
  HttpResult ConnectAndSave(const std::string& token = "", const std::string& account = "default") {
    const std::string state = ConnectState(token.empty() ? key_ : token);
    return SaveWith(google_.IssueCode(account), state);
  }

  // More keys of the calendar plugin's config for StartServer, indented two spaces.
  std::string calendar_extra_;
  ScratchDatabase db_;
  FakeGoogle google_;
  std::unique_ptr<TestServer> server_;
  HttpClient http_;
  int64_t user_ = 0;
  std::string key_;
  std::string ada_session_;
  std::map<std::string, std::string> bindings_;  // state -> binding cookie of the browser that started it
};

}  // namespace rendezvous::testing
