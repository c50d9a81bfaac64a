// Input from outside never causes a 5xx: every string (and number) in the JSON bodies, query
// strings and path segments of the API's routes, and every field and parameter of the app
// listener's pages and forms, is replaced in turn by non-ASCII text, invalid UTF-8, a NUL, control
// characters, an over-long value and SQL-looking text, and every answer must be below 500 — and
// the server keeps serving.
#include <functional>

#include "bookings_fixture.hpp"
#include "browser_session.hpp"
#include "google_connect.hpp"

namespace rendezvous::testing {
namespace {

const std::vector<std::string> kHostile = {
    "\xc3\xa9t\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80",  // é, CJK, an emoji
    "\xff\xfe\xc3",                                                    // invalid UTF-8
    std::string("a\0b", 3),                                            // a NUL
    "line\r\nX-Injected: 1\t\x01\x7f",                                 // controls
    std::string(70000, 'x'),                                           // over-long
    "' OR 1=1; -- \\ \" %s %n",                                        // SQL and format text
};

// JSON text of a value that nlohmann refuses to dump (invalid UTF-8) written by hand.
std::string Dump(const json& body) {
  return body.dump(-1, ' ', false, json::error_handler_t::ignore);
}

// Every variant of `body` with one leaf (string or number) replaced by `value`, with the leaf's path.
void EachLeafReplaced(const json& body, const std::string& value,
                      const std::function<void(const std::string&, const json&)>& fn) {
  std::function<void(const json&, const json::json_pointer&)> walk = [&](const json& node,
                                                                         const json::json_pointer& at) {
    if (node.is_object()) {
      for (auto it = node.begin(); it != node.end(); ++it) walk(it.value(), at / it.key());
    } else if (node.is_array()) {
      for (size_t i = 0; i < node.size(); ++i) walk(node[i], at / i);
    } else if (node.is_string() || node.is_number()) {
      json copy = body;
      copy[at] = value;
      fn(at.to_string(), copy);
    }
  };
  walk(body, json::json_pointer());
}

class HostileInput : public BookingsFixture {
 protected:
  void SetUp() override {
    // Google configured (never called: no state here is ever valid), so its routes run their checks.
    StartServer(std::string(kUnlimitedPublicRoutes) +
                "calendar: { google: { client_id: hostile-test, client_secret: not-used } }\n");
    event_type_ = std::to_string(CreateEventType(owner_key_, "intro")["id"].get<int64_t>());
    uid_ = Import(owner_, std::stoll(event_type_), In(60 * 24 * 9), "pending")["uid"];
  }

  void ExpectBelow500(const std::string& method, const std::string& path, const std::string& body,
                      const std::string& what) {
    std::vector<std::string> headers{"Authorization: Bearer " + owner_key_};
    if (!body.empty()) headers.push_back("Content-Type: application/json");
    HttpResult r = http_.Request(method, server_->api() + path, body, headers);
    EXPECT_GT(r.status, 0) << method << " " << path << " " << what << ": " << r.error;
    EXPECT_LT(r.status, 500) << method << " " << path.substr(0, 200) << " " << what << ": " << r.body.substr(0, 300);
    ++requests_;
  }

  // The same for a page of the app listener, from a browser holding `cookies`; a body is a form.
  HttpResult PageBelow500(const std::string& method, const std::string& path, const std::string& body,
                          const std::string& cookies, const std::string& what) {
    std::vector<std::string> headers;
    if (!cookies.empty()) headers.push_back("Cookie: " + cookies);
    if (method == "POST") headers.push_back("Content-Type: application/x-www-form-urlencoded");
    HttpResult r = http_.Request(method, server_->app() + path, body, headers);
    EXPECT_GT(r.status, 0) << method << " " << path.substr(0, 200) << " " << what << ": " << r.error;
    EXPECT_LT(r.status, 500) << method << " " << path.substr(0, 200) << " " << what << ": " << r.body.substr(0, 300);
    ++requests_;
    return r;
  }
  static std::string FormOf(const std::vector<std::pair<std::string, std::string>>& fields) {
    std::string out;
    for (const auto& [k, v] : fields) out += (out.empty() ? "" : "&") + k + "=" + FormEncode(v);
    return out;
  }
  // Every variant of the form with one field's value replaced by each hostile value (the field
  // named `keep` is left alone: the CSRF token, so the form's own checks run).
  void EachFieldHostile(const std::string& method, const std::string& path,
                        const std::vector<std::pair<std::string, std::string>>& fields, const std::string& cookies,
                        const std::string& keep = "csrf_token") {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (fields[i].first == keep) continue;
      for (const std::string& value : kHostile) {
        auto changed = fields;
        changed[i].second = value;
        if (method == "GET")
          PageBelow500("GET", path + "?" + FormOf(changed), "", cookies, fields[i].first);
        else
          PageBelow500("POST", path, FormOf(changed), cookies, fields[i].first);
      }
    }
  }

  std::string event_type_, uid_;
  int requests_ = 0;
};

TEST_F(HostileInput, JsonBodiesNeverCause5xx) {
  const std::string day = time::FormatDate(time::CivilFromDays(time::DaysFromCivil(time::Zone::Utc().DateAt(time::Now())) + 20));
  struct Route {
    std::string method, path;
    json body;
  };
  const std::vector<Route> routes = {
      {"PATCH",
       "/v2/me",
       {{"name", "Olga"},
        {"timeZone", "Europe/Berlin"},
        {"weekStart", "Monday"},
        {"username", "olga"},
        {"timeFormat", 24},
        {"defaultScheduleId", 1}}},
      {"POST",
       "/v2/event-types",
       {{"title", "T"},
        {"slug", "t"},
        {"lengthInMinutes", 30},
        {"description", "d"},
        {"locations",
         {{{"type", "address"}, {"address", "Main St 1"}},
          {{"type", "link"}, {"link", "https://x.example"}},
          {{"type", "phone"}, {"phone", "+14155550123"}}}},
        {"slotInterval", 15}}},
      {"PATCH", "/v2/event-types/" + event_type_, {{"title", "T2"}, {"minimumBookingNotice", 5}}},
      {"POST",
       "/v2/schedules",
       {{"name", "S"},
        {"timeZone", "UTC"},
        {"availability", {{{"days", {"Monday"}}, {"startTime", "09:00"}, {"endTime", "17:00"}}}},
        {"overrides", {{{"date", day}, {"startTime", "10:00"}, {"endTime", "11:00"}}}}}},
      {"POST",
       "/v2/bookings",
       {{"start", day + "T09:00:00Z"},
        {"eventTypeId", std::stoll(event_type_)},
        {"attendee", {{"name", "A"}, {"email", "a@example.com"}, {"timeZone", "UTC"}, {"language", "en"}}},
        {"guests", {"g@example.com"}},
        {"metadata", {{"k", "v"}}},
        {"location", "here"}}},
      {"POST", "/v2/bookings/" + uid_ + "/cancel", {{"cancellationReason", "r"}}},
      {"POST",
       "/v2/bookings/" + uid_ + "/reschedule",
       {{"start", day + "T10:00:00Z"}, {"reschedulingReason", "r"}}},
      {"POST", "/v2/bookings/" + uid_ + "/decline", {{"reason", "r"}}},
      {"POST",
       "/v2/bookings/" + uid_ + "/mark-absent",
       {{"attendees", {{{"email", "ann@example.com"}, {"absent", true}}}}}},
      {"POST", "/v2/calendars/ics-feed/save", {{"urls", {"https://calendar.example/feed.ics"}}}},
      {"PUT", "/v2/destination-calendars", {{"integration", "google_calendar"}, {"externalId", "primary"}}},
      {"POST", "/v2/calendars/google/disconnect", {{"id", 12345}}},
      {"POST", "/v2/verified-resources/emails/verification-code/request", {{"email", "v@example.com"}}},
      {"POST",
       "/v2/verified-resources/emails/verification-code/verify",
       {{"email", "v@example.com"}, {"code", "123456"}}},
      {"POST", "/v2/verified-resources/phones/verification-code/request", {{"phone", "+14155550123"}}},
      {"POST",
       "/v2/verified-resources/phones/verification-code/verify",
       {{"phone", "+14155550123"}, {"code", "123456"}}},
  };
  for (const Route& route : routes) {
    for (const std::string& value : kHostile) {
      EachLeafReplaced(route.body, value, [&](const std::string& where, const json& body) {
        ExpectBelow500(route.method, route.path, Dump(body), where);
      });
    }
    // The body itself: not JSON, or JSON of the wrong shape.
    for (const std::string& raw : {std::string("\xff\xfe{"), std::string("[]"), std::string("{\"a\":") + std::string(20000, '['),
                                   std::string("null")}) {
      ExpectBelow500(route.method, route.path, raw, "raw body");
    }
  }
  // The pushed authorization request endpoint takes JSON bodies as the token endpoint does.
  const json par = {{"client_id", "no-such-client"},
                    {"redirect_uri", "https://app.example/callback"},
                    {"scope", "BOOKING_READ"},
                    {"state", "s"},
                    {"response_type", "code"}};
  for (const std::string& value : kHostile) {
    EachLeafReplaced(par, value, [&](const std::string& where, const json& body) {
      ExpectBelow500("POST", "/v2/auth/oauth2/par", Dump(body), where);
    });
  }
  EXPECT_GT(requests_, 300);
  EXPECT_EQ(Call("GET", "/v2/me", owner_key_).status, 200);  // still serving
}

TEST_F(HostileInput, QueriesAndPathsNeverCause5xx) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> queries = {
      {"/v2/slots", {"eventTypeId=" + event_type_, "start=2027-01-04", "end=2027-01-05", "timeZone=UTC"}},
      {"/v2/bookings", {"status=accepted", "afterStart=2027-01-04T00:00:00Z", "beforeEnd=2027-01-05T00:00:00Z",
                        "eventTypeId=" + event_type_, "skip=0", "take=10"}},
      {"/v2/calendars/busy-times", {"dateFrom=2027-01-04", "dateTo=2027-01-05", "timeZone=UTC"}},
      {"/v2/calendars/google/connect", {"redir=https://app.example/done"}},
      {"/v2/calendars/google/save", {"code=c", "state=s"}},
  };
  for (const auto& [path, params] : queries) {
    for (size_t i = 0; i < params.size(); ++i) {
      for (const std::string& value : kHostile) {
        std::string q;
        for (size_t j = 0; j < params.size(); ++j) {
          const std::string& p = params[j];
          q += (j ? "&" : "") + (j == i ? p.substr(0, p.find('=') + 1) + FormEncode(value) : p);
        }
        ExpectBelow500("GET", path + "?" + q, "", params[i]);
      }
    }
  }
  const std::vector<std::string> paths = {"/v2/bookings/{}", "/v2/bookings/{}/references", "/v2/event-types/{}",
                                          "/v2/schedules/{}", "/v2/calendars/{}/event/x", "/v2/calendars/google/event/{}"};
  for (const std::string& path : paths) {
    for (const std::string& value : kHostile) {
      const std::string segment = FormEncode(value.substr(0, 2000));
      ExpectBelow500("GET", path.substr(0, path.find("{}")) + segment + path.substr(path.find("{}") + 2), "", "path");
    }
  }
  EXPECT_EQ(requests_, (4 + 6 + 3 + 1 + 2) * 6 + 6 * 6);
  EXPECT_EQ(Call("GET", "/v2/me", owner_key_).status, 200);
}

// The platform routes of an OAuth client (its headers, bodies, path segments): never a 5xx, and
// nothing half-made (every managed user made has its tokens' grant).
TEST_F(HostileInput, PlatformClientRoutesNeverCause5xx) {
  CliResult made =
      server_->Cli({"admin", "oauth-client", "create", "--owner-id", std::to_string(owner_), "--name",
                    "Platform", "--redirect-uri", "https://platform.example/cb", "--scope", "PROFILE_READ"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string id = made.Json()["client_id"], secret = made.Json()["client_secret"];
  ASSERT_EQ(server_->Cli({"admin", "oauth-client", "review", id, "--accept"}).exit_code, 0);
  auto send = [&](const std::string& method, const std::string& path, const std::string& body,
                  const std::string& header_id, const std::string& header_secret, const std::string& what) {
    std::vector<std::string> headers = {"x-cal-client-id: " + header_id,
                                        "x-cal-secret-key: " + header_secret};
    if (!body.empty()) headers.push_back("Content-Type: application/json");
    HttpResult r = http_.Request(method, server_->api() + path, body, headers);
    EXPECT_GT(r.status, 0) << method << " " << path.substr(0, 200) << " " << what << ": " << r.error;
    EXPECT_LT(r.status, 500) << method << " " << path.substr(0, 200) << " " << what << ": "
                             << r.body.substr(0, 300);
    ++requests_;
    return r;
  };
  const std::string users = "/v2/oauth-clients/" + id + "/users";
  HttpResult first = send("POST", users, R"({"email":"mu@example.com","name":"Mu"})", id, secret, "create");
  ASSERT_EQ(first.status, 201) << first.body;
  const std::string user = users + "/" + std::to_string(first.Json()["data"]["user"]["id"].get<int64_t>());
  const json create = {{"email", "mu2@example.com"},
                       {"name", "Mu Two"},
                       {"timeZone", "UTC"},
                       {"timeFormat", 24},
                       {"weekStart", "Monday"},
                       {"locale", "en"},
                       {"avatarUrl", "https://platform.example/a.png"}};
  const json patch = {{"name", "Mu"}, {"timeZone", "UTC"}, {"locale", "de"}, {"defaultScheduleId", 1}};
  const json refresh = {{"refreshToken", first.Json()["data"]["refreshToken"]}};
  for (const std::string& value : kHostile) {
    EachLeafReplaced(create, value, [&](const std::string& where, const json& body) {
      send("POST", users, Dump(body), id, secret, where);
    });
    EachLeafReplaced(patch, value, [&](const std::string& where, const json& body) {
      send("PATCH", user, Dump(body), id, secret, where);
    });
    EachLeafReplaced(refresh, value, [&](const std::string& where, const json& body) {
      send("POST", "/v2/oauth/" + id + "/refresh", Dump(body), id, secret, where);
    });
    // Header values (curl drops what a header line cannot carry) and path segments.
    const std::string line_safe =
        value.find_first_of(std::string("\r\n\0", 3)) == std::string::npos ? value : "x";
    send("GET", users, "", line_safe.substr(0, 4000), secret, "x-cal-client-id");
    send("GET", users, "", id, line_safe.substr(0, 4000), "x-cal-secret-key");
    const std::string segment = FormEncode(value.substr(0, 2000));
    send("GET", "/v2/oauth-clients/" + segment + "/users", "", id, secret, "clientId");
    send("GET", users + "/" + segment, "", id, secret, "userId");
    send("GET", users + "?limit=" + segment + "&offset=" + segment, "", id, secret, "limit, offset");
  }
  for (const std::string& raw : {std::string("\xff\xfe{"), std::string("[]"), std::string("null")}) {
    send("POST", users, raw, id, secret, "raw body");
    send("PATCH", user, raw, id, secret, "raw body");
  }
  EXPECT_GT(requests_, 100);
  // Every managed user that was made has its link and a grant; the client still works.
  EXPECT_EQ(
      Count("SELECT COUNT(*) FROM oauth_managed_users m LEFT JOIN oauth_grants g ON g.user_id = m.user_id"
            " WHERE g.id IS NULL"),
      0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM users u WHERE u.password_hash IS NULL AND u.id NOT IN"
                  " (SELECT user_id FROM oauth_managed_users)"),
            0);
  EXPECT_EQ(send("GET", user, "", id, secret, "after").status, 200);
}

TEST_F(HostileInput, PagesAndFormsNeverCause5xx) {
  server_->CreateUser("admin@example.com", "Ada Admin", "correct horse battery", /*admin=*/true);
  const std::string owner = SignInBrowser(http_, server_->app(), "owner@example.com", "correct horse battery", nullptr);
  ASSERT_FALSE(owner.empty());
  const std::string settings = "/settings/developer/oauth";
  const std::string csrf = CsrfFieldOf(http_.Get(server_->app() + settings, {"Cookie: " + owner}).body);
  ASSERT_FALSE(csrf.empty());
  // A public client to authorize against, made with the same form.
  const std::vector<std::pair<std::string, std::string>> client_form = {
      {"csrf_token", csrf},           {"name", "Hostile app"},
      {"kind", "public"},             {"redirect_uris", "https://app.example/callback"},
      {"purpose", "Testing"},         {"website", "https://app.example"},
      {"logo", "https://app.example/logo.png"}, {"scope_BOOKING_READ", "1"}};
  HttpResult created = PageBelow500("POST", settings, FormOf(client_form), owner, "baseline");
  ASSERT_EQ(created.status, 303) << created.body.substr(0, 300);
  const std::string location = created.Header("location");
  const std::string client_path = location.substr(0, location.find('?'));
  const std::string client_id = client_path.substr(client_path.rfind('/') + 1);
  ASSERT_FALSE(client_id.empty()) << location;

  EachFieldHostile("POST", settings, client_form, owner);
  EachFieldHostile("POST", client_path, client_form, owner);
  EachFieldHostile("POST", client_path + "/secrets", {{"csrf_token", csrf}}, owner, "");
  for (const std::string& value : kHostile) {
    const std::string segment = FormEncode(value.substr(0, 2000));
    PageBelow500("GET", settings + "/" + segment, "", owner, "client id");
    PageBelow500("POST", settings + "/" + segment + "/secrets", FormOf({{"csrf_token", csrf}}), owner, "client id");
    PageBelow500("POST", client_path + "/secrets/" + segment + "/revoke", FormOf({{"csrf_token", csrf}}), owner,
                 "secret id");
    PageBelow500("GET", "/settings/calendars/google/start?state=" + FormEncode(value), "", owner, "state");
  }

  // The authorization page and its consent form.
  const std::vector<std::pair<std::string, std::string>> authorize = {
      {"client_id", client_id},
      {"redirect_uri", "https://app.example/callback"},
      {"response_type", "code"},
      {"scope", "BOOKING_READ"},
      {"state", "s-123"},
      {"code_challenge", S256Challenge("verifier-verifier-verifier-verifier-verifier-1")},
      {"code_challenge_method", "S256"}};
  EachFieldHostile("GET", "/auth/oauth2/authorize", authorize, owner);
  auto consent = authorize;
  consent.emplace_back("csrf_token", csrf);
  consent.emplace_back("decision", "deny");
  EachFieldHostile("POST", "/auth/oauth2/authorize", consent, owner);
  // A pushed request's reference (RFC 9126), shown and decided.
  const std::vector<std::pair<std::string, std::string>> pushed = {
      {"client_id", client_id}, {"request_uri", "urn:ietf:params:oauth:request_uri:" + std::string(43, 'a')}};
  EachFieldHostile("GET", "/auth/oauth2/authorize", pushed, owner);
  auto pushed_consent = pushed;
  pushed_consent.emplace_back("csrf_token", csrf);
  pushed_consent.emplace_back("decision", "allow");
  EachFieldHostile("POST", "/auth/oauth2/authorize", pushed_consent, owner);

  // The admin's review of clients.
  const std::string admin = SignInBrowser(http_, server_->app(), "admin@example.com", "correct horse battery", nullptr);
  ASSERT_FALSE(admin.empty());
  const std::string admin_csrf =
      CsrfFieldOf(http_.Get(server_->app() + "/admin/oauth-clients", {"Cookie: " + admin}).body);
  ASSERT_FALSE(admin_csrf.empty());
  EachFieldHostile("POST", "/admin/oauth-clients/" + client_id + "/review",
                   {{"csrf_token", admin_csrf}, {"accept", "1"}, {"reason", "fine"}}, admin);

  // Signing in: every field of the login form (last: the failed attempts slow further sign-ins).
  HttpResult login = http_.Get(server_->app() + "/auth/login");
  std::string anonymous;
  for (auto [it, end] = login.headers.equal_range("set-cookie"); it != end; ++it)
    anonymous += it->second.substr(0, it->second.find(';')) + "; ";
  EachFieldHostile("POST", "/auth/login",
                   {{"email", "owner@example.com"}, {"password", "wrong"}, {"next", "/settings/developer/oauth"},
                    {"csrf_token", CsrfFieldOf(login.body)}},
                   anonymous);
  EachFieldHostile("GET", "/auth/login", {{"next", "/settings/developer/oauth"}}, "");

  // Bodies that are not forms at all.
  for (const std::string& raw : {std::string("\xff\xfe=%%%"), std::string(70000, '&'), std::string("a=%ZZ&b")}) {
    PageBelow500("POST", "/auth/login", raw, anonymous, "raw body");
    PageBelow500("POST", settings, raw, owner, "raw body");
    PageBelow500("POST", "/auth/oauth2/authorize", raw, owner, "raw body");
  }
  // Client forms (7 fields, create and update), the secret form's token, ids and states, the
  // authorization query (7) and consent (8), a pushed request's reference (2) and its consent (3),
  // the review (2), the login form (3) and its `next`, raw bodies, and the baseline.
  EXPECT_EQ(requests_, (7 * 2 + 1 + 4 + 7 + 8 + 2 + 3 + 2 + 3 + 1) * 6 + 3 * 3 + 1);
  EXPECT_EQ(http_.Get(server_->app() + settings, {"Cookie: " + owner}).status, 200);  // still serving
  EXPECT_EQ(Call("GET", "/v2/me", owner_key_).status, 200);
}

}  // namespace
}  // namespace rendezvous::testing
