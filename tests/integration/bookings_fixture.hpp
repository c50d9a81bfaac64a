// Shared set-up of the bookings integration tests: a fresh database, the real server, two users
// with API keys, and helpers for the routes, `admin booking import` and database checks.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "http_client.hpp"
#include "oauth_support.hpp"
#include "rendezvous/time.hpp"
#include "scratch_db.hpp"
#include "test_server.hpp"

namespace rendezvous::testing {

using nlohmann::json;

class BookingsFixture : public ::testing::Test {
 protected:
  // A `plugins:` entry turning off the public routes' rate limit per client address, for tests
  // that send many public requests from 127.0.0.1 and are not about the limit.
  static constexpr const char* kUnlimitedPublicRoutes = "bookings: { public_rate_limit: { per_minute: 0 } }\n";

  // Migrates, creates owner_ and other_ (with API keys) and starts the server with `plugins` (and
  // `top_extra`: more top-level YAML; `server_extra`: more YAML under server:).
  void StartServer(const std::string& plugins = "", const std::string& top_extra = "",
                   const std::string& server_extra = "") {
    TestServerOptions o;
    o.plugins = plugins;
    o.top_extra = top_extra;
    o.server_extra = server_extra;
    server_ = std::make_unique<TestServer>(db_.name(), o);
    server_->Migrate();
    owner_ = server_->CreateUser("owner@example.com", "Olga Owner");
    other_ = server_->CreateUser("other@example.com", "Otto Other");
    owner_key_ = server_->CreateApiKey(owner_);
    other_key_ = server_->CreateApiKey(other_);
    std::string why;
    ASSERT_TRUE(server_->Start(&why)) << why;
  }

  HttpResult Call(const std::string& method, const std::string& path, const std::string& token,
                  const std::string& body = "") {
    std::vector<std::string> headers;
    if (!token.empty()) headers.push_back("Authorization: Bearer " + token);
    if (!body.empty()) headers.push_back("Content-Type: application/json");
    return http_.Request(method, server_->api() + path, body, headers);
  }
  HttpResult Call(const std::string& method, const std::string& path, const std::string& token,
                  const char* body) {
    return Call(method, path, token, std::string(body));
  }
  HttpResult Call(const std::string& method, const std::string& path, const std::string& token,
                  const json& body) {
    return Call(method, path, token, body.dump());
  }

  // POST /v2/event-types as `token`; returns the event type (fails the test unless 201).
  json CreateEventType(const std::string& token, const std::string& slug, int length = 30,
                       json extra = json::object()) {
    json body = {{"title", "Intro " + slug}, {"slug", slug}, {"lengthInMinutes", length}};
    body.update(extra);
    HttpResult r = Call("POST", "/v2/event-types", token, body);
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Json()["data"];
  }

  CliResult RunImport(int64_t user, int64_t event_type, const std::string& start, const std::string& email,
                      const std::string& name, const std::string& status = "") {
    std::vector<std::string> args = {"admin",
                                     "booking",
                                     "import",
                                     "--user-id",
                                     std::to_string(user),
                                     "--event-type-id",
                                     std::to_string(event_type),
                                     "--start",
                                     start,
                                     "--attendee-email",
                                     email,
                                     "--attendee-name",
                                     name};
    if (!status.empty()) args.insert(args.end(), {"--status", status});
    return server_->Cli(args);
  }
  // Imports a booking; returns it (fails the test unless the command succeeds).
  json Import(int64_t user, int64_t event_type, const std::string& start, const std::string& status = "",
              const std::string& email = "ann@example.com", const std::string& name = "Ann Attendee") {
    CliResult r = RunImport(user, event_type, start, email, name, status);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.Json();
  }

  // ISO 8601 of now + `minutes`.
  static std::string In(int64_t minutes) {
    return time::FormatIso(time::Now() + minutes * time::kMillisPerMinute);
  }

  // "YYYY-MM-DD" of the first Monday at least `weeks` weeks ahead (UTC): inside the implicit
  // working hours of a user in UTC, so its 09:00–17:00 starts are free slots.
  static std::string Monday(int weeks = 1) {
    int64_t day = time::DaysFromCivil(time::Zone::Utc().DateAt(time::Now())) + 7 * weeks;
    while (time::IsoWeekday(time::CivilFromDays(day)) != 1) ++day;
    return time::FormatDate(time::CivilFromDays(day));
  }
  // The API's spelling of `clock` ("HH:MM") on `date` in UTC.
  static std::string At(const std::string& date, const std::string& clock) { return date + "T" + clock + ":00.000Z"; }

  int64_t Count(const std::string& sql) const { return std::stoll("0" + db_.QueryValue(sql)); }
  int64_t OutboxCount(const std::string& type) const {
    return Count("SELECT COUNT(*) FROM outbox_events WHERE topic = 'bookings' AND type = '" + type + "'");
  }
  // The payload of the newest outbox event of `type`.
  json LastOutbox(const std::string& type) const {
    return json::parse(
        db_.QueryValue("SELECT payload FROM outbox_events WHERE topic = 'bookings' AND type = '" + type +
                       "' ORDER BY id DESC LIMIT 1"),
        nullptr, false);
  }

  // An event payload (DESIGN §6): the booking as the API shows it, plus the organizer (the owner
  // here) and the original service's names for the same values.
  // The webhook payload carries the booking's fields (an optional one the answer omits as null)
  // but not the answer's Cal.com additions `eventType` and `absentHost`.
  // The payload's hosts are the answer's without Cal.com's `username`; its attendees include the
  // guests, and it has no `guests` of its own. Its `responses` carry the answer's
  // `bookingFieldsResponses` as Cal.com's {label, value} by slug.
  void ExpectPayloadShows(const json& payload, const json& booking) const {
    json hosts = booking["hosts"];
    for (json& h : hosts) {
      EXPECT_TRUE(h.value("username", json()).is_string()) << booking;
      h.erase("username");
    }
    for (auto it = booking.begin(); it != booking.end(); ++it) {
      if (it.key() == "eventType" || it.key() == "absentHost" || it.key() == "guests" ||
          it.key() == "bookingFieldsResponses")
        continue;
      EXPECT_EQ(payload.value(it.key(), json()), it.key() == "hosts" ? hosts : it.value()) << it.key();
    }
    EXPECT_FALSE(payload.contains("eventType"));
    EXPECT_FALSE(payload.contains("absentHost"));
    EXPECT_FALSE(payload.contains("guests"));
    EXPECT_FALSE(payload.contains("bookingFieldsResponses"));
    const json answers = booking.value("bookingFieldsResponses", json::object());
    for (auto it = answers.begin(); it != answers.end(); ++it) {
      EXPECT_EQ(payload["responses"][it.key()]["value"], it.value()) << it.key();
    }
    for (const char* optional :
         {"location", "cancellationReason", "rescheduledFromUid", "rescheduledToUid"}) {
      ASSERT_TRUE(payload.contains(optional)) << optional;
      if (!booking.contains(optional)) {
        EXPECT_TRUE(payload[optional].is_null()) << optional;
      }
    }
    EXPECT_EQ(payload["bookingId"], booking["id"]);
    EXPECT_EQ(payload["startTime"], booking["start"]);
    EXPECT_EQ(payload["endTime"], booking["end"]);
    EXPECT_EQ(payload["length"], booking["duration"]);
    EXPECT_EQ(payload["organizer"], hosts[0]);
    EXPECT_TRUE(payload["type"].is_string());
    EXPECT_TRUE(payload["eventTitle"].is_string());
  }

  // A booking answer in Cal.com's shape: `eventType: {id, slug}` of its event type, `absentHost` a
  // boolean, and the optional strings either absent or strings (never null).
  void ExpectCalComShape(const json& b, const std::string& slug, bool absent_host = false) const {
    ASSERT_TRUE(b.is_object()) << b;
    EXPECT_EQ(b.value("eventType", json()), json({{"id", b["eventTypeId"]}, {"slug", slug}})) << b;
    EXPECT_EQ(b.value("absentHost", json()), absent_host) << b;
    for (const char* optional :
         {"location", "cancellationReason", "rescheduledFromUid", "rescheduledToUid"}) {
      if (b.contains(optional)) {
        EXPECT_TRUE(b[optional].is_string()) << optional << ": " << b;
      }
    }
  }

  ScratchDatabase db_;
  std::unique_ptr<TestServer> server_;
  HttpClient http_;
  int64_t owner_ = 0;
  int64_t other_ = 0;
  std::string owner_key_;
  std::string other_key_;
};

}  // namespace rendezvous::testing
