// Shared set-up of the operations tests (metrics, dashboards, alerts): the real server with every
// plugin — the calendar against the fake Google, webhooks with the shipped Lua scripts and a
// receiver on loopback — and calls that touch each area: OAuth grants, bookings, slots, a webhook
// delivery, Google calls.
#pragma once

#include <chrono>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "calendar_fixture.hpp"
#include "eventually.hpp"
#include "loopback_http_server.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::testing {

class OperationsTest : public CalendarTest {
 protected:
  void SetUp() override {
    const std::string scripts = SourceDir() + "/scripts/webhooks/";
    StartServer("", true,
                "webhooks:\n  allow_private_networks: true\n  retry_schedule: [1, 1]\n  workers: 4\n  timeout: 5\n"
                "  scripts: { filter: \"" + scripts + "filter.lua\", render: \"" + scripts + "slack.lua\" }\n");
  }

  // The value of the sample `series` (name and labels as /metrics prints them, labels sorted) on
  // /metrics; NaN when it is absent.
  double Sample(const std::string& series) {
    HttpResult r = http_.Get(Api("/metrics"));
    EXPECT_EQ(r.status, 200);
    std::istringstream lines(r.body);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 && line[series.size()] == ' ')
        return std::stod(line.substr(series.size() + 1));
    }
    return std::numeric_limits<double>::quiet_NaN();
  }
  // Polls /metrics (bounded) until `series` has at least `value`.
  bool AwaitSample(const std::string& series, double value) {
    return Eventually(series + " at " + std::to_string(value), [&] { return Sample(series) >= value; });
  }

  // POST /v2/auth/oauth2/token with a form body.
  HttpResult Token(const std::string& form) {
    return http_.Request("POST", Api("/v2/auth/oauth2/token"), form,
                         {"Content-Type: application/x-www-form-urlencoded"});
  }
  HttpResult RefreshGrant(const OAuthGrant& g, const std::string& refresh_token) {
    return Token("grant_type=refresh_token&refresh_token=" + FormEncode(refresh_token) +
                 "&client_id=" + FormEncode(g.client_id) + "&client_secret=" + FormEncode(g.client_secret));
  }

  // An event type of Ada's (30 minutes); its id.
  int64_t EventType(const std::string& slug) {
    HttpResult r = Send("POST", "/v2/event-types", {{"title", "Intro"}, {"slug", slug}, {"lengthInMinutes", 30}}, key_);
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Json()["data"].value("id", int64_t{0});
  }
  // `clock` ("HH:MM") UTC on a Monday at least a week ahead: inside Ada's default working hours.
  static std::string NextMonday(const std::string& clock) {
    int64_t day = time::DaysFromCivil(time::Zone::Utc().DateAt(time::Now())) + 7;
    while (time::IsoWeekday(time::CivilFromDays(day)) != 1) ++day;
    return time::FormatDate(time::CivilFromDays(day)) + "T" + clock + ":00.000Z";
  }
  HttpResult Slots(int64_t event_type, const std::string& date) {
    return Get("/v2/slots?eventTypeId=" + std::to_string(event_type) + "&start=" + date + "&end=" + date, "");
  }
  HttpResult Book(int64_t event_type, const std::string& start) {
    return Send("POST", "/v2/bookings",
                {{"start", start},
                 {"eventTypeId", event_type},
                 {"attendee", {{"name", "Ann Attendee"}, {"email", "ann@example.com"}, {"timeZone", "UTC"}}}},
                "");
  }

  // Traffic through every area: Google connected (token, calendar list), OAuth grants issued and
  // refused, a revocation, the metadata, 401 and 403 answers, slots (free/busy), a booking and an
  // overlapping one refused, a webhook delivery to the receiver, the booking's Google event, a
  // cancellation (and its event deleted). Fails the test when a step does not answer as expected.
  void MakeTraffic() {
    AddStandardCalendars();
    ASSERT_EQ(ConnectAndSave().status, 200);

    OAuthGrant grant = GrantOAuthToken(*server_, db_, user_, user_, {"BOOKING_READ", "PROFILE_READ"}, {"BOOKING_READ"});
    ASSERT_FALSE(grant.refresh_token.empty());
    HttpResult refreshed = RefreshGrant(grant, grant.refresh_token);
    ASSERT_EQ(refreshed.status, 200) << refreshed.body;
    EXPECT_EQ(RefreshGrant(grant, grant.refresh_token).status, 400);  // reuse: invalid_grant
    EXPECT_EQ(Token("grant_type=password").status, 400);                // invalid_request
    OAuthGrant other = GrantOAuthToken(*server_, db_, user_, user_, {"BOOKING_READ"}, {"BOOKING_READ"});
    EXPECT_EQ(Get("/v2/me", other.access_token).status, 403);  // PROFILE_READ not granted
    EXPECT_EQ(Get("/v2/me", "").status, 401);
    EXPECT_EQ(http_.Request("POST", Api("/v2/auth/oauth2/revoke"),
                            "token=" + FormEncode(other.access_token) + "&client_id=" + FormEncode(other.client_id) +
                                "&client_secret=" + FormEncode(other.client_secret),
                            {"Content-Type: application/x-www-form-urlencoded"})
                  .status,
              200);
    EXPECT_EQ(http_.Get(Api("/.well-known/oauth-authorization-server")).status, 200);
    // A platform client's managed user, and a call with a wrong secret.
    EXPECT_EQ(http_
                  .Request("POST", Api("/v2/oauth-clients/" + grant.client_id + "/users"),
                           R"({"email":"managed@example.com","name":"Managed"})",
                           {"Content-Type: application/json", "x-cal-client-id: " + grant.client_id,
                            "x-cal-secret-key: " + grant.client_secret})
                  .status,
              201);
    EXPECT_EQ(http_
                  .Request("GET", Api("/v2/oauth-clients/" + grant.client_id + "/users"), "",
                           {"x-cal-client-id: " + grant.client_id, "x-cal-secret-key: wrong"})
                  .status,
              401);

    HttpResult hook = Send("POST", "/v2/webhooks",
                           {{"active", true},
                            {"subscriberUrl", receiver_.url() + "/hook"},
                            {"triggers", {"BOOKING_CREATED", "BOOKING_CANCELLED"}}},
                           key_);
    ASSERT_EQ(hook.status, 201) << hook.body;

    const int64_t et = EventType("ops");
    const std::string start = NextMonday("10:00");
    HttpResult slots = Slots(et, start.substr(0, 10));
    ASSERT_EQ(slots.status, 200) << slots.body;
    HttpResult booked = Book(et, start);
    ASSERT_EQ(booked.status, 201) << booked.body;
    EXPECT_EQ(Book(et, start).status, 409);  // the same time again: an overlap
    const std::string uid = booked.Json()["data"].value("uid", "");
    ASSERT_TRUE(receiver_.AwaitRequests(1)) << "no webhook delivery";
    ASSERT_TRUE(google_.AwaitRequestsTo("/calendar/v3/calendars/", 1)) << "no Google event written";
    HttpResult cancelled = Send("POST", "/v2/bookings/" + uid + "/cancel", json::object(), "");
    EXPECT_EQ(cancelled.status, 200) << cancelled.body;
    ASSERT_TRUE(receiver_.AwaitRequests(2)) << "no delivery of the cancellation";
    // A slot reservation made and deleted.
    HttpResult held = http_.Request("POST", Api("/v2/slots/reservations"),
                                    json{{"eventTypeId", et}, {"slotStart", start}}.dump(),
                                    {"Content-Type: application/json"});
    ASSERT_EQ(held.status, 201) << held.body;
    const std::string hold = held.Json()["data"].value("reservationUid", "");
    EXPECT_EQ(http_.Request("DELETE", Api("/v2/slots/reservations/" + hold)).status, 200);
  }

  LoopbackHttpServer receiver_{[](const PeerRequest&) {
    PeerResponse ok;
    ok.body = "{}";
    return ok;
  }};
};

}  // namespace rendezvous::testing
