// Delivery to a real receiver on loopback: headers and signatures (recomputed here), inactive and
// unsubscribed webhooks, templates, retries after 5xx, 429 with Retry-After and a hanging
// receiver, 410 disabling the webhook, a manual retry with the same webhook-id, and the address
// rule applied again at send time; event-type webhooks beside the user's.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "eventually.hpp"
#include "rendezvous/crypto.hpp"
#include "rendezvous/time.hpp"
#include "webhooks_fixture.hpp"

namespace rendezvous::testing {
namespace {

// A receiver's answer.
PeerResponse Answer(int status, const std::string& body = "") {
  PeerResponse r;
  r.status = status;
  r.content_type = "text/plain";
  r.body = body;
  return r;
}

class WebhooksDelivery : public WebhooksFixture {
 protected:
  std::vector<PeerRequest> RequestsTo(const LoopbackHttpServer& receiver, const std::string& path) const {
    std::vector<PeerRequest> out;
    for (const PeerRequest& r : receiver.Requests()) {
      if (r.path == path) out.push_back(r);
    }
    return out;
  }
};

TEST_F(WebhooksDelivery, SignedEventReachesOnlyActiveSubscribedWebhooks) {
  LoopbackHttpServer receiver([](const PeerRequest&) { return Answer(200, "thanks"); });
  StartServer();
  json body = Body(receiver.url() + "/signed");
  body["secret"] = "whsec_s3cr\xC3\xA9t";
  const int64_t signed_id = CreateWebhook(body)["id"];
  json inactive = Body(receiver.url() + "/inactive");
  inactive["active"] = false;
  const int64_t inactive_id = CreateWebhook(inactive)["id"];
  const int64_t unsubscribed_id = CreateWebhook(Body(receiver.url() + "/cancelled-only", {"BOOKING_CANCELLED"}))["id"];
  const int64_t others_id = CreateWebhook(Body(receiver.url() + "/other-user"), other_key_)["id"];
  const int64_t unsigned_id = CreateWebhook(Body(receiver.url() + "/unsigned"))["id"];

  const int64_t before = rendezvous::time::Now() / 1000;
  const std::string uid = ConfirmNewBooking();
  json delivery = AwaitDelivery(signed_id, "succeeded", 1);
  AwaitDelivery(unsigned_id, "succeeded", 1);

  std::vector<PeerRequest> got = RequestsTo(receiver, "/signed");
  ASSERT_EQ(got.size(), 1u);
  const PeerRequest& r = got[0];
  ExpectSignedDelivery(r, "whsec_s3cr\xC3\xA9t", before);
  const std::string id = r.Header("webhook-id");
  EXPECT_EQ(delivery["webhookId"], id);

  const json event = json::parse(r.body);
  EXPECT_EQ(event["triggerEvent"], "BOOKING_CONFIRMED");
  EXPECT_TRUE(event["createdAt"].is_string());
  EXPECT_EQ(event["payload"]["uid"], uid);
  EXPECT_EQ(event["payload"]["organizer"]["id"], owner_);
  EXPECT_EQ(event["payload"]["status"], "accepted");

  // The delivery log shows the attempt.
  ASSERT_EQ(delivery["attempts"].size(), 1u);
  EXPECT_EQ(delivery["triggerEvent"], "BOOKING_CONFIRMED");
  EXPECT_EQ(delivery["attempts"][0]["statusCode"], 200);
  EXPECT_TRUE(delivery["attempts"][0]["error"].is_null());
  EXPECT_TRUE(delivery["attempts"][0]["durationMs"].is_number_integer());
  EXPECT_TRUE(rendezvous::time::ParseIso(delivery["attempts"][0]["at"].get<std::string>()).has_value());

  // Without a secret: no signature headers.
  std::vector<PeerRequest> plain = RequestsTo(receiver, "/unsigned");
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].Header("webhook-signature"), "");
  EXPECT_EQ(plain[0].Header("x-cal-signature-256"), "");
  EXPECT_NE(plain[0].Header("webhook-id"), id);

  // Every delivery of one event is created in one transaction: the others got none.
  for (int64_t w : {inactive_id, unsubscribed_id, others_id}) {
    EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = " + std::to_string(w)), 0) << w;
  }
  EXPECT_EQ(receiver.Requests().size(), 2u);
}

TEST_F(WebhooksDelivery, ServerErrorIsRetriedWithTheSameWebhookId) {
  std::atomic<int> calls{0};
  LoopbackHttpServer receiver([&](const PeerRequest&) {
    return ++calls == 1 ? Answer(500, "try later") : Answer(204, "");
  });
  StartServer();
  const int64_t webhook = CreateWebhook(Body(receiver.url() + "/hook"))["id"];
  ConfirmNewBooking();
  json delivery = AwaitDelivery(webhook, "succeeded", 2);
  ASSERT_EQ(delivery["attempts"].size(), 2u);
  EXPECT_EQ(delivery["attempts"][0]["statusCode"], 500);
  EXPECT_EQ(delivery["attempts"][0]["error"], "HTTP 500");
  EXPECT_EQ(delivery["attempts"][0]["response"], "try later");
  EXPECT_EQ(delivery["attempts"][1]["statusCode"], 204);
  std::vector<PeerRequest> got = receiver.Requests();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].Header("webhook-id"), got[1].Header("webhook-id"));
  EXPECT_EQ(got[0].body, got[1].body);
}

TEST_F(WebhooksDelivery, RetryAfterLongerThanTheNextDelayIsHonoured) {
  std::atomic<int> calls{0};
  std::mutex mu;
  std::vector<std::chrono::steady_clock::time_point> seen;
  LoopbackHttpServer receiver([&](const PeerRequest&) {
    {
      std::lock_guard<std::mutex> lock(mu);
      seen.push_back(std::chrono::steady_clock::now());
    }
    if (++calls > 1) return Answer(200);
    PeerResponse busy = Answer(429, "slow down");
    busy.headers.emplace_back("Retry-After", "2");
    return busy;
  });
  // The schedule alone would retry after 0.8 to 1.2 s; Retry-After asks for 2 (under the cap of 3).
  StartServer("webhooks:\n  allow_private_networks: true\n  retry_schedule: [1, 3]\n");
  const int64_t webhook = CreateWebhook(Body(receiver.url() + "/hook"))["id"];
  ConfirmNewBooking();
  json delivery = AwaitDelivery(webhook, "succeeded", 2);
  EXPECT_EQ(delivery["attempts"][0]["statusCode"], 429);
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_GE(std::chrono::duration_cast<std::chrono::milliseconds>(seen[1] - seen[0]).count(), 1900);
}

TEST_F(WebhooksDelivery, HangingReceiverTimesOutAndIsRetried) {
  std::atomic<int> calls{0};
  LoopbackHttpServer receiver([&](const PeerRequest&) {
    PeerResponse r = Answer(200);
    if (++calls == 1) r.delay = std::chrono::milliseconds(2500);
    return r;
  });
  StartServer("webhooks:\n  allow_private_networks: true\n  retry_schedule: [1]\n  timeout: 1\n");
  const int64_t webhook = CreateWebhook(Body(receiver.url() + "/hook"))["id"];
  ConfirmNewBooking();
  json delivery = AwaitDelivery(webhook, "succeeded", 2);
  EXPECT_TRUE(delivery["attempts"][0]["statusCode"].is_null());
  EXPECT_EQ(delivery["attempts"][0]["error"], "timed out");
  EXPECT_GE(delivery["attempts"][0]["durationMs"].get<int64_t>(), 900);
  EXPECT_LT(delivery["attempts"][0]["durationMs"].get<int64_t>(), 2500);
  EXPECT_EQ(delivery["attempts"][1]["statusCode"], 200);
}

TEST_F(WebhooksDelivery, GoneDisablesTheWebhook) {
  LoopbackHttpServer receiver([](const PeerRequest& r) { return r.path == "/gone" ? Answer(410, "gone") : Answer(200); });
  StartServer();
  const int64_t webhook = CreateWebhook(Body(receiver.url() + "/gone"))["id"];
  const int64_t control = CreateWebhook(Body(receiver.url() + "/control"))["id"];
  ConfirmNewBooking();
  json delivery = AwaitDelivery(webhook, "failed", 1);
  EXPECT_EQ(delivery["attempts"][0]["statusCode"], 410);
  HttpResult w = Call("GET", "/v2/webhooks/" + std::to_string(webhook), owner_key_);
  EXPECT_EQ(w.Json()["data"]["active"], false);
  // The next event reaches the other webhook (so it was consumed) but not the disabled one.
  ConfirmNewBooking();
  Eventually("2 deliveries to the other webhook", [&] { return Deliveries(control).size() >= 2; });
  ASSERT_EQ(Deliveries(control).size(), 2u);
  EXPECT_EQ(Deliveries(webhook).size(), 1u);
  // Its deliveries cannot be retried by hand until it is active again.
  const std::string retry = "/v2/webhooks/" + std::to_string(webhook) + "/deliveries/" +
                            std::to_string(delivery["id"].get<int64_t>()) + "/retry";
  EXPECT_EQ(Call("POST", retry, owner_key_, std::string("{}")).status, 409);
  ASSERT_EQ(Call("PATCH", "/v2/webhooks/" + std::to_string(webhook), owner_key_, json{{"active", true}}).status, 200);
  EXPECT_EQ(Call("POST", retry, owner_key_, std::string("{}")).status, 200);
  AwaitDelivery(webhook, "failed", 2);
  EXPECT_EQ(RequestsTo(receiver, "/gone").size(), 2u);
}

TEST_F(WebhooksDelivery, ClientErrorIsNotRetriedButCanBeRetriedByHand) {
  std::atomic<int> calls{0};
  LoopbackHttpServer receiver([&](const PeerRequest&) {
    return ++calls == 1 ? Answer(400, "bad") : Answer(200, "ok");
  });
  StartServer();
  const int64_t webhook = CreateWebhook(Body(receiver.url() + "/hook"))["id"];
  ConfirmNewBooking();
  json failed = AwaitDelivery(webhook, "failed", 1);
  const std::string path = "/v2/webhooks/" + std::to_string(webhook) + "/deliveries/" +
                           std::to_string(failed["id"].get<int64_t>()) + "/retry";
  EXPECT_EQ(Call("POST", path, other_key_, std::string("{}")).status, 404);
  HttpResult retried = Call("POST", path, owner_key_, std::string("{}"));
  ASSERT_EQ(retried.status, 200) << retried.body;
  EXPECT_EQ(retried.Json()["data"]["status"], "pending");
  json done = AwaitDelivery(webhook, "succeeded", 2);
  std::vector<PeerRequest> got = receiver.Requests();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].Header("webhook-id"), got[1].Header("webhook-id"));
  EXPECT_EQ(done["webhookId"], got[1].Header("webhook-id"));
}

TEST_F(WebhooksDelivery, TemplatesRenderQuotesBackslashesAndNonAscii) {
  LoopbackHttpServer receiver([](const PeerRequest&) { return PeerResponse{}; });
  StartServer();
  json as_json = Body(receiver.url() + "/json");
  as_json["payloadTemplate"] =
      R"({"event":"{{triggerEvent}}","who":"{{attendees.0.name}}","host":"{{organizer.name}}","id":{{id}},"none":"{{nope}}"})";
  const int64_t json_hook = CreateWebhook(as_json)["id"];
  json as_text = Body(receiver.url() + "/text");
  as_text["payloadTemplate"] = "Booking for {{attendees.0.name}} ({{triggerEvent}})";
  const int64_t text_hook = CreateWebhook(as_text)["id"];

  const std::string name = "Zo\xC3\xAB \"Q\" \\ \xE6\x97\xA5\xE6\x9C\xAC";  // Zoë "Q" \ 日本
  ConfirmNewBooking(name);
  AwaitDelivery(json_hook, "succeeded", 1);
  AwaitDelivery(text_hook, "succeeded", 1);

  std::vector<PeerRequest> j = RequestsTo(receiver, "/json");
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0].Header("content-type"), "application/json");
  json parsed = json::parse(j[0].body, nullptr, false);
  ASSERT_TRUE(parsed.is_object()) << j[0].body;
  EXPECT_EQ(parsed["event"], "BOOKING_CONFIRMED");
  EXPECT_EQ(parsed["who"], name);
  EXPECT_EQ(parsed["host"], "Olga Owner");
  EXPECT_TRUE(parsed["id"].is_number_integer());
  EXPECT_EQ(parsed["none"], "");

  std::vector<PeerRequest> t = RequestsTo(receiver, "/text");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].Header("content-type"), "text/plain");
  EXPECT_EQ(t[0].body, "Booking for Zo\xC3\xAB \\\"Q\\\" \\\\ \xE6\x97\xA5\xE6\x9C\xAC (BOOKING_CONFIRMED)");
}

TEST_F(WebhooksDelivery, AddressRuleIsCheckedAgainAtSendTime) {
  LoopbackHttpServer receiver([](const PeerRequest&) { return PeerResponse{}; });
  StartServer();
  const int64_t webhook = CreateWebhook(Body(receiver.url() + "/hook"))["id"];
  // The operator turns private networks off: the stored loopback URL is no longer delivered to.
  ASSERT_EQ(server_->Stop(), 0);
  std::stringstream config;
  config << std::ifstream(server_->config_path()).rdbuf();
  std::string yaml = config.str();
  const size_t at = yaml.find("allow_private_networks: true");
  ASSERT_NE(at, std::string::npos);
  yaml.replace(at, std::string("allow_private_networks: true").size(), "allow_private_networks: false");
  server_->WriteConfig(yaml);
  std::string why;
  ASSERT_TRUE(server_->Start(&why)) << why;

  ConfirmNewBooking();
  json delivery = AwaitDelivery(webhook, "failed", 1);
  EXPECT_TRUE(delivery["attempts"][0]["statusCode"].is_null());
  EXPECT_NE(delivery["attempts"][0]["error"].get<std::string>().find("loopback"), std::string::npos)
      << delivery.dump();
  // A ping follows the same rule.
  HttpResult ping = Call("POST", "/v2/webhooks/" + std::to_string(webhook) + "/ping", owner_key_, std::string("{}"));
  ASSERT_EQ(ping.status, 200) << ping.body;
  EXPECT_EQ(ping.Json()["data"]["ok"], false);
  EXPECT_TRUE(ping.Json()["data"]["statusCode"].is_null());
  EXPECT_NE(ping.Json()["data"]["error"].get<std::string>().find("loopback"), std::string::npos) << ping.body;
  EXPECT_TRUE(receiver.Requests().empty());
}

TEST_F(WebhooksDelivery, PingIsSentAtOnceSignedAndLogged) {
  LoopbackHttpServer receiver([](const PeerRequest&) { return Answer(200, "pong"); });
  StartServer();
  json body = Body(receiver.url() + "/ping");
  body["secret"] = "whsec_ping";
  const int64_t webhook = CreateWebhook(body)["id"];
  const std::string path = "/v2/webhooks/" + std::to_string(webhook) + "/ping";
  EXPECT_EQ(Call("POST", path, other_key_, std::string("{}")).status, 404);
  EXPECT_EQ(Call("POST", "/v2/webhooks/999999/ping", owner_key_, std::string("{}")).status, 404);
  EXPECT_TRUE(receiver.Requests().empty());

  const int64_t before = rendezvous::time::Now() / 1000;
  HttpResult r = Call("POST", path, owner_key_, std::string("{}"));
  ASSERT_EQ(r.status, 200) << r.body;
  const json data = r.Json()["data"];
  EXPECT_EQ(data["ok"], true);
  EXPECT_EQ(data["statusCode"], 200);
  EXPECT_TRUE(data["durationMs"].is_number_integer());
  EXPECT_TRUE(data["error"].is_null());
  // Sent before the answer, not queued.
  ASSERT_EQ(receiver.Requests().size(), 1u);
  const PeerRequest got = receiver.Requests()[0];
  ExpectSignedDelivery(got, "whsec_ping", before);
  const json event = json::parse(got.body);
  EXPECT_EQ(event["triggerEvent"], "PING");
  EXPECT_TRUE(rendezvous::time::ParseIso(event["createdAt"].get<std::string>()).has_value());
  EXPECT_EQ(event["payload"]["type"], "Test");
  EXPECT_EQ(event["payload"]["title"], "Test trigger event");
  EXPECT_TRUE(rendezvous::time::ParseIso(event["payload"]["startTime"].get<std::string>()).has_value());
  EXPECT_TRUE(rendezvous::time::ParseIso(event["payload"]["endTime"].get<std::string>()).has_value());
  EXPECT_EQ(event["payload"]["organizer"]["name"], "Olga Owner");
  EXPECT_EQ(event["payload"]["organizer"]["email"], "owner@example.com");
  EXPECT_TRUE(event["payload"]["organizer"]["timeZone"].is_string());
  EXPECT_EQ(event["payload"]["attendees"], json::array());

  // The delivery log shows it with trigger PING and its webhook-id.
  json log = Deliveries(webhook);
  ASSERT_EQ(log.size(), 1u) << log.dump();
  EXPECT_EQ(log[0]["triggerEvent"], "PING");
  EXPECT_EQ(log[0]["status"], "succeeded");
  EXPECT_EQ(log[0]["webhookId"], got.Header("webhook-id"));
  ASSERT_EQ(log[0]["attempts"].size(), 1u);
  EXPECT_EQ(log[0]["attempts"][0]["statusCode"], 200);

  // A failing receiver: still 200, ok false with its status, and logged as failed (no retries).
  receiver.SetHandler([](const PeerRequest&) { return Answer(500, "down"); });
  HttpResult failing = Call("POST", path, owner_key_, std::string("{}"));
  ASSERT_EQ(failing.status, 200) << failing.body;
  EXPECT_EQ(failing.Json()["data"]["ok"], false);
  EXPECT_EQ(failing.Json()["data"]["statusCode"], 500);
  EXPECT_EQ(failing.Json()["data"]["error"], "HTTP 500");
  log = Deliveries(webhook);
  ASSERT_EQ(log.size(), 2u) << log.dump();
  EXPECT_EQ(log[0]["triggerEvent"], "PING");
  EXPECT_EQ(log[0]["status"], "failed");
  EXPECT_EQ(receiver.Requests().size(), 2u);
}

// The Standard Webhooks signature of a request with `secret`'s bytes as the key.
std::string Signature(const PeerRequest& r, const std::string& secret) {
  return "v1," + crypto::Base64Encode(crypto::HmacSha256(
                     secret, r.Header("webhook-id") + "." + r.Header("webhook-timestamp") + "." + r.body));
}

TEST_F(WebhooksDelivery, RotatedSecretSignsBesideTheOldOneUntilTheGraceEnds) {
  LoopbackHttpServer receiver([](const PeerRequest&) { return Answer(200); });
  // A short retention makes the housekeeping that erases ended graces run every second.
  StartServer(std::string(kTestPlugins) + "  delivery_retention: 2\n");
  json body = Body(receiver.url() + "/rotated");
  body["secret"] = "whsec_old";
  const int64_t webhook = CreateWebhook(body)["id"];
  const std::string base = "/v2/webhooks/" + std::to_string(webhook);
  auto ping = [&]() -> PeerRequest {
    const size_t before = receiver.Requests().size();
    HttpResult r = Call("POST", base + "/ping", owner_key_, std::string("{}"));
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(receiver.Requests().size(), before + 1);
    return receiver.Requests().back();
  };

  EXPECT_EQ(Call("POST", base + "/secret/rotate", other_key_, std::string("{}")).status, 404);
  for (const json& bad : {json{{"graceSeconds", 604801}}, json{{"graceSeconds", -1}}, json{{"graceSeconds", "60"}}}) {
    HttpResult r = Call("POST", base + "/secret/rotate", owner_key_, bad);
    EXPECT_EQ(r.status, 400) << bad.dump() << " " << r.body;
  }
  ExpectSignedDelivery(ping(), "whsec_old", time::Now() / 1000);  // nothing rotated by the refusals

  // The default grace (a day): both signatures, new first; X-Cal-Signature-256 with the new one.
  HttpResult rotated = Call("POST", base + "/secret/rotate", owner_key_, std::string("{}"));
  ASSERT_EQ(rotated.status, 200) << rotated.body;
  const std::string fresh = rotated.Json()["data"]["secret"];
  EXPECT_EQ(fresh.rfind("whsec_", 0), 0u) << fresh;
  EXPECT_EQ(rotated.Json()["data"]["id"], webhook);
  EXPECT_EQ(Call("GET", base, owner_key_).Json()["data"]["secret"], fresh);
  PeerRequest both = ping();
  EXPECT_EQ(both.Header("webhook-signature"), Signature(both, fresh) + " " + Signature(both, "whsec_old"));
  EXPECT_EQ(both.Header("x-cal-signature-256"), crypto::ToHex(crypto::HmacSha256(fresh, both.body)));
  // Both kept encrypted.
  const std::string where = " FROM webhooks WHERE id = " + std::to_string(webhook);
  const std::string old_stored = db_.QueryValue("SELECT COALESCE(previous_secret_encrypted, '')" + where);
  EXPECT_FALSE(old_stored.empty());
  EXPECT_EQ(old_stored.find("whsec_old"), std::string::npos);
  EXPECT_EQ(db_.QueryValue("SELECT secret_encrypted" + where).find(fresh), std::string::npos);

  // Grace 0: the new secret alone, at once.
  rotated = Call("POST", base + "/secret/rotate", owner_key_, json{{"graceSeconds", 0}});
  ASSERT_EQ(rotated.status, 200) << rotated.body;
  const std::string third = rotated.Json()["data"]["secret"];
  EXPECT_NE(third, fresh);
  ExpectSignedDelivery(ping(), third, time::Now() / 1000);

  // A one-second grace ends: the old signature goes.
  rotated = Call("POST", base + "/secret/rotate", owner_key_, json{{"graceSeconds", 1}});
  ASSERT_EQ(rotated.status, 200) << rotated.body;
  const std::string fourth = rotated.Json()["data"]["secret"];
  PeerRequest during = ping();
  EXPECT_EQ(during.Header("webhook-signature"), Signature(during, fourth) + " " + Signature(during, third));
  PeerRequest last = during;
  Eventually("a ping signed by the new secret alone",
             {std::chrono::seconds(10), std::chrono::milliseconds(200)}, [&] {
               last = ping();
               return last.Header("webhook-signature").find(' ') == std::string::npos;
             });
  ExpectSignedDelivery(last, fourth, time::Now() / 1000 - 10);
  // And the housekeeping forgets it (bounded wait).
  auto kept = [&] { return db_.QueryValue("SELECT previous_secret_encrypted IS NOT NULL" + where); };
  Eventually("the old secret erased", {std::chrono::seconds(10), std::chrono::milliseconds(100)},
             [&] { return kept() == "0"; });
  EXPECT_EQ(kept(), "0");

  // A PATCH of the secret replaces it at once, and any old one with it.
  ASSERT_EQ(Call("POST", base + "/secret/rotate", owner_key_, std::string("{}")).status, 200);
  ASSERT_EQ(kept(), "1");
  ASSERT_EQ(Call("PATCH", base, owner_key_, json{{"secret", "whsec_patched"}}).status, 200);
  EXPECT_EQ(kept(), "0");
  ExpectSignedDelivery(ping(), "whsec_patched", time::Now() / 1000);
}

TEST_F(WebhooksDelivery, RecoverQueuesExactlyTheFailedDeliveriesAgainWithTheirIds) {
  std::atomic<bool> refuse{true};
  LoopbackHttpServer receiver([&](const PeerRequest&) { return Answer(refuse ? 400 : 200); });
  StartServer();
  const int64_t webhook = CreateWebhook(Body(receiver.url() + "/recover"))["id"];
  const std::string base = "/v2/webhooks/" + std::to_string(webhook);
  const std::string since = time::FormatIso(time::Now() - 60000);
  // Two deliveries fail (400 is not retried), then one succeeds.
  // Until the log holds `n` deliveries, the newest with `status` (bounded).
  auto await_log = [&](size_t n, const std::string& status) {
    json log;
    EXPECT_TRUE(Eventually(std::to_string(n) + " deliveries, the newest " + status, [&] {
      log = Deliveries(webhook);
      return log.size() == n && log[0]["status"] == status;
    })) << log.dump();
  };
  ConfirmNewBooking();
  await_log(1, "failed");
  ConfirmNewBooking();
  await_log(2, "failed");
  refuse = false;
  ConfirmNewBooking();
  await_log(3, "succeeded");
  json log = Deliveries(webhook);
  ASSERT_EQ(log.size(), 3u) << log.dump();
  std::set<std::string> failed_ids;
  for (const json& d : log) {
    if (d["status"] == "failed") failed_ids.insert(d["webhookId"].get<std::string>());
  }
  ASSERT_EQ(failed_ids.size(), 2u) << log.dump();
  ASSERT_EQ(receiver.Requests().size(), 3u);

  // Refused: another user's webhook, bad or missing times, a window past the retention.
  EXPECT_EQ(Call("POST", base + "/recover", other_key_, json{{"since", since}}).status, 404);
  EXPECT_EQ(Call("POST", base + "/recover", owner_key_, json::object()).status, 400);
  EXPECT_EQ(Call("POST", base + "/recover", owner_key_, json{{"since", "yesterday"}}).status, 400);
  EXPECT_EQ(Call("POST", base + "/recover", owner_key_, json{{"since", since}, {"until", "2000-01-01T00:00:00Z"}}).status, 400);
  HttpResult past = Call("POST", base + "/recover", owner_key_, json{{"since", "2000-01-01T00:00:00Z"}});
  EXPECT_EQ(past.status, 400) << past.body;
  EXPECT_NE(past.body.find("retention"), std::string::npos) << past.body;
  // A window before the deliveries finds none.
  HttpResult none = Call("POST", base + "/recover", owner_key_,
                         json{{"since", time::FormatIso(time::Now() - 120000)}, {"until", since}});
  ASSERT_EQ(none.status, 202) << none.body;
  EXPECT_EQ(none.Json()["data"]["queued"], 0);

  HttpResult r = Call("POST", base + "/recover", owner_key_, json{{"since", since}});
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(r.Json()["status"], "success");
  EXPECT_EQ(r.Json()["data"]["queued"], 2);
  ASSERT_TRUE(receiver.AwaitRequests(5, std::chrono::seconds(20)));
  std::set<std::string> resent;
  const std::vector<PeerRequest> got = receiver.Requests();
  for (size_t i = 3; i < got.size(); ++i) resent.insert(got[i].Header("webhook-id"));
  EXPECT_EQ(resent, failed_ids);
  // Both succeeded now; nothing else was sent.
  Eventually("every delivery succeeded", {std::chrono::seconds(10)}, [&] {
    log = Deliveries(webhook);
    return std::all_of(log.begin(), log.end(), [](const json& d) { return d["status"] == "succeeded"; });
  });
  for (const json& d : log) EXPECT_EQ(d["status"], "succeeded") << log.dump();
  EXPECT_EQ(receiver.Requests().size(), 5u);
}

TEST_F(WebhooksDelivery, EventTypeWebhooksGetOnlyTheirEventTypesBookingsAndEachLevelOneDelivery) {
  LoopbackHttpServer receiver([](const PeerRequest&) { return Answer(200); });
  StartServer();
  const int64_t intro = CreateEventType(owner_key_, "intro")["id"];
  const int64_t demo = CreateEventType(owner_key_, "demo")["id"];
  // The same URL at the user's level and on `intro`: two webhooks, each gets its delivery.
  json signed_body = Body(receiver.url() + "/both");
  signed_body["secret"] = "whsec_event_type";
  const int64_t intro_hook = CreateEventTypeWebhook(intro, signed_body)["id"];
  const int64_t user_hook = CreateWebhook(Body(receiver.url() + "/both"))["id"];
  const int64_t demo_hook = CreateEventTypeWebhook(demo, Body(receiver.url() + "/demo"))["id"];
  const int64_t demo_cancel_only =
      CreateEventTypeWebhook(demo, Body(receiver.url() + "/demo-cancelled", {"BOOKING_CANCELLED"}))["id"];
  json inactive = Body(receiver.url() + "/inactive");
  inactive["active"] = false;
  const int64_t inactive_hook = CreateEventTypeWebhook(intro, inactive)["id"];

  const int64_t before = rendezvous::time::Now() / 1000;
  const std::string intro_uid = ConfirmNewBooking("Ann Attendee", intro);
  const json intro_delivery = AwaitDelivery(intro_hook, "succeeded", 1);
  AwaitDelivery(user_hook, "succeeded", 1);
  // The deliveries of one event are written together: demo's webhooks got none of intro's booking.
  EXPECT_EQ(Deliveries(demo_hook).size(), 0u);
  EXPECT_EQ(Deliveries(inactive_hook).size(), 0u);
  std::vector<PeerRequest> both = RequestsTo(receiver, "/both");
  ASSERT_EQ(both.size(), 2u);
  EXPECT_NE(both[0].Header("webhook-id"), both[1].Header("webhook-id"));
  std::set<std::string> ids{both[0].Header("webhook-id"), both[1].Header("webhook-id")};
  EXPECT_EQ(ids.count(intro_delivery["webhookId"].get<std::string>()), 1u);
  for (const PeerRequest& r : both) {
    const json event = json::parse(r.body);
    EXPECT_EQ(event["triggerEvent"], "BOOKING_CONFIRMED");
    EXPECT_EQ(event["payload"]["uid"], intro_uid);
    EXPECT_EQ(event["payload"]["eventTypeId"], intro);
    // The event type's webhook signs with its secret; the user's has none.
    if (r.Header("webhook-id") == intro_delivery["webhookId"]) {
      ExpectSignedDelivery(r, "whsec_event_type", before);
    } else {
      EXPECT_EQ(r.Header("webhook-signature"), "");
    }
  }

  const std::string demo_uid = ConfirmNewBooking("Bea Attendee", demo);
  const json demo_delivery = AwaitDelivery(demo_hook, "succeeded", 1);
  AwaitDelivery(user_hook, "succeeded", 1);  // the newest: demo's booking
  const json user_log = Deliveries(user_hook);
  ASSERT_EQ(user_log.size(), 2u) << user_log.dump();
  EXPECT_EQ(Deliveries(intro_hook).size(), 1u);
  both = RequestsTo(receiver, "/both");
  ASSERT_EQ(both.size(), 3u);
  EXPECT_EQ(json::parse(both[2].body)["payload"]["uid"], demo_uid);
  EXPECT_EQ(both[2].Header("webhook-id"), user_log[0]["webhookId"]);
  EXPECT_EQ(Deliveries(demo_cancel_only).size(), 0u);
  std::vector<PeerRequest> demo_got = RequestsTo(receiver, "/demo");
  ASSERT_EQ(demo_got.size(), 1u);
  EXPECT_EQ(json::parse(demo_got[0].body)["payload"]["uid"], demo_uid);
  EXPECT_EQ(demo_got[0].Header("webhook-id"), demo_delivery["webhookId"]);

  // The webhook's own routes serve event-type webhooks: its ping, and a manual retry.
  HttpResult ping =
      Call("POST", "/v2/webhooks/" + std::to_string(intro_hook) + "/ping", owner_key_, std::string("{}"));
  ASSERT_EQ(ping.status, 200) << ping.body;
  EXPECT_EQ(ping.Json()["data"]["ok"], true);
  both = RequestsTo(receiver, "/both");
  ASSERT_EQ(both.size(), 4u);
  EXPECT_EQ(json::parse(both[3].body)["triggerEvent"], "PING");
  ExpectSignedDelivery(both[3], "whsec_event_type", before);
  HttpResult retry = Call("POST",
                          "/v2/webhooks/" + std::to_string(demo_hook) + "/deliveries/" +
                              std::to_string(demo_delivery["id"].get<int64_t>()) + "/retry",
                          owner_key_, std::string("{}"));
  ASSERT_EQ(retry.status, 200) << retry.body;
  AwaitDelivery(demo_hook, "succeeded", 2);
  demo_got = RequestsTo(receiver, "/demo");
  ASSERT_EQ(demo_got.size(), 2u);
  EXPECT_EQ(demo_got[1].Header("webhook-id"), demo_delivery["webhookId"]);
}

}  // namespace
}  // namespace rendezvous::testing
