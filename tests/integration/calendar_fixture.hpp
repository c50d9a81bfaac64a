// Shared set-up of the calendar integration tests: a fake Google (tests/support/fake_google.hpp),
// the real server pointed at it, a user with an API key, and helpers for the connect flow.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "fake_google.hpp"
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
    o.plugins = google_.PluginConfig(allow_private_ics) + other_plugins;
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
    const size_t q = url.find('?');
    if (q == std::string::npos) return "";
    std::string rest = url.substr(q + 1);
    size_t pos = 0;
    while (pos <= rest.size()) {
      size_t amp = rest.find('&', pos);
      std::string pair = rest.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
      size_t eq = pair.find('=');
      if (eq != std::string::npos && pair.substr(0, eq) == name) return UrlDecode(pair.substr(eq + 1));
      if (amp == std::string::npos) break;
      pos = amp + 1;
    }
    return "";
  }

  // GET /v2/calendars/google/connect; returns the state in authUrl ("" on failure).
  std::string ConnectState(const std::string& token, const std::string& redir = "") {
    std::string path = "/v2/calendars/google/connect";
    if (!redir.empty()) path += "?redir=" + FormEncode(redir);
    HttpResult r = Get(path, token);
    EXPECT_EQ(r.status, 200) << r.body;
    const std::string url = r.Json()["data"].value("authUrl", "");
    return QueryParam(url, "state");
  }
  HttpResult SaveWith(const std::string& code, const std::string& state) {
    return http_.Get(
        Api("/v2/calendars/google/save?code=" + FormEncode(code) + "&state=" + FormEncode(state)));
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

  ScratchDatabase db_;
  FakeGoogle google_;
  std::unique_ptr<TestServer> server_;
  HttpClient http_;
  int64_t user_ = 0;
  std::string key_;
};

}  // namespace rendezvous::testing
