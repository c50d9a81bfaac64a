// Shared set-up of the webhooks integration tests: a fresh database, the real server with the
// webhooks plugin configured for tests (private networks allowed, one-second retries), two users
// with API keys, a webhook receiver on loopback, and a way to make a BOOKING_CONFIRMED event
// (import a pending booking, confirm it through the API), and the check of a signed delivery.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "bookings_fixture.hpp"
#include "eventually.hpp"
#include "loopback_http_server.hpp"
#include "rendezvous/crypto.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::testing {

class WebhooksFixture : public BookingsFixture {
 protected:
  static constexpr const char* kTestPlugins =
      "webhooks:\n  allow_private_networks: true\n  retry_schedule: [1, 1]\n  workers: 4\n  timeout: 5\n";

  // The server with the webhooks plugin as `plugins` configures it (BookingsFixture::StartServer).
  void StartServer(const std::string& plugins = kTestPlugins, const std::string& top_extra = "") {
    BookingsFixture::StartServer(plugins, top_extra);
  }

  static json Body(const std::string& url, const std::vector<std::string>& triggers = {"BOOKING_CONFIRMED"}) {
    return json{{"active", true}, {"subscriberUrl", url}, {"triggers", triggers}};
  }

  // POST /v2/webhooks as the owner; returns data (fails the test unless 201).
  json CreateWebhook(const json& body, const std::string& token = "") {
    HttpResult r = Call("POST", "/v2/webhooks", token.empty() ? owner_key_ : token, body);
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Json()["data"];
  }

  // A pending booking of the owner (imported), confirmed through the API: one BOOKING_CONFIRMED
  // event. Of `event_type` when given, else of one event type made on first use. Returns the
  // booking's uid.
  std::string ConfirmNewBooking(const std::string& attendee_name = "Ann Attendee", int64_t event_type = 0) {
    if (event_type == 0 && event_type_ == 0) {
      HttpResult et = Call("POST", "/v2/event-types", owner_key_,
                           json{{"title", "Intro"}, {"slug", "intro"}, {"lengthInMinutes", 30}});
      EXPECT_EQ(et.status, 201) << et.body;
      event_type_ = et.Json()["data"]["id"].get<int64_t>();
    }
    ++bookings_made_;
    CliResult imported = server_->Cli(
        {"admin", "booking", "import", "--user-id", std::to_string(owner_), "--event-type-id",
         std::to_string(event_type != 0 ? event_type : event_type_), "--start",
         "2030-01-" + std::string(bookings_made_ < 10 ? "0" : "") + std::to_string(bookings_made_) +
             "T10:00:00Z",
         "--attendee-email", "ann@example.com", "--attendee-name", attendee_name, "--status", "pending"});
    EXPECT_EQ(imported.exit_code, 0) << imported.err;
    const std::string uid = imported.Json().value("uid", "");
    HttpResult confirmed = Call("POST", "/v2/bookings/" + uid + "/confirm", owner_key_, std::string("{}"));
    EXPECT_EQ(confirmed.status, 200) << confirmed.body;
    return uid;
  }

  // A delivery as DESIGN §6 signs and labels it, checked against the receiver's view: a JSON body,
  // a `msg_` webhook-id, a webhook-timestamp within a second of [sent_after, now], the Standard
  // Webhooks signature and X-Cal-Signature-256 recomputed here with `secret`'s bytes as the key,
  // the original service's version header and a User-Agent naming Rendezvous.
  static void ExpectSignedDelivery(const PeerRequest& r, const std::string& secret, int64_t sent_after) {
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.Header("content-type"), "application/json");
    EXPECT_EQ(r.Header("x-cal-webhook-version"), "2021-10-20");
    EXPECT_NE(r.Header("user-agent").find("Rendezvous"), std::string::npos) << r.Header("user-agent");
    const std::string id = r.Header("webhook-id");
    EXPECT_EQ(id.rfind("msg_", 0), 0u) << id;
    const std::string timestamp = r.Header("webhook-timestamp");
    ASSERT_FALSE(timestamp.empty());
    EXPECT_GE(std::stoll(timestamp), sent_after - 1);
    EXPECT_LE(std::stoll(timestamp), time::Now() / 1000 + 1);
    EXPECT_EQ(r.Header("webhook-signature"),
              "v1," + crypto::Base64Encode(crypto::HmacSha256(secret, id + "." + timestamp + "." + r.body)));
    EXPECT_EQ(r.Header("x-cal-signature-256"), crypto::ToHex(crypto::HmacSha256(secret, r.body)));
  }

  // POST /v2/event-types/{event_type}/webhooks as the owner; returns data (fails the test unless 201).
  json CreateEventTypeWebhook(int64_t event_type, const json& body, const std::string& token = "") {
    HttpResult r = Call("POST", "/v2/event-types/" + std::to_string(event_type) + "/webhooks",
                        token.empty() ? owner_key_ : token, body);
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Json()["data"];
  }

  json Deliveries(int64_t webhook_id) {
    HttpResult r = Call("GET", "/v2/webhooks/" + std::to_string(webhook_id) + "/deliveries", owner_key_);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.Json()["data"];
  }

  // Polls the delivery log (bounded) until its newest delivery has `status` and `attempts` attempts.
  json AwaitDelivery(int64_t webhook_id, const std::string& status, size_t attempts,
                     std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    json last;
    const bool reached = Eventually(
        "the newest delivery " + status + " after " + std::to_string(attempts) + " attempts", {timeout}, [&] {
          last = Deliveries(webhook_id);
          return last.is_array() && !last.empty() && last[0]["status"] == status &&
                 last[0]["attempts"].size() == attempts;
        });
    if (reached) return last[0];
    ADD_FAILURE() << "delivery did not reach " << status << "/" << attempts << ": " << last.dump();
    return last;
  }

  int64_t event_type_ = 0;
  int bookings_made_ = 0;
};

}  // namespace rendezvous::testing
