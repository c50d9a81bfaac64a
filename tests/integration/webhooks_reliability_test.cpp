// The delivery engine under stress, against the real server, database and receivers on loopback:
// a slow receiver does not hold up another's deliveries, a webhook that keeps failing is turned
// off and its owner mailed, the delivery log is purged after its retention, `kill -9` in the
// middle of a burst loses nothing, and two instances on one database share the work without
// sending anything twice.
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "webhooks_fixture.hpp"

namespace rendezvous::testing {
namespace {

PeerResponse Ok(std::chrono::milliseconds delay = std::chrono::milliseconds(0)) {
  PeerResponse r;
  r.content_type = "text/plain";
  r.body = "ok";
  r.delay = delay;
  return r;
}

// Polls `done` (bounded); returns whether it came true.
template <class Condition>
bool Await(Condition done, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

class WebhooksReliability : public WebhooksFixture {
 protected:
  static std::string Plugins(const std::string& extra = "") {
    return std::string("webhooks:\n  allow_private_networks: true\n  retry_schedule: [1, 1, 1, 1, 1, 1]\n") +
           (extra.find("timeout") == std::string::npos ? "  timeout: 5\n" : "") + extra + kUnlimitedPublicRoutes;
  }

  // Books `n` free 15-minute slots of a new event type of the owner through the public API, from
  // the first Monday at least a week ahead; returns the uids (fails the test unless each is 201).
  std::vector<std::string> BookMany(size_t n) {
    const int64_t event_type = CreateEventType(owner_key_, "burst", 15)["id"].get<int64_t>();
    int64_t day = time::DaysFromCivil(time::Zone::Utc().DateAt(time::Now())) + 7;
    while (time::IsoWeekday(time::CivilFromDays(day)) != 1) ++day;
    const std::string from = time::FormatDate(time::CivilFromDays(day));
    const std::string to = time::FormatDate(time::CivilFromDays(day + 27));
    HttpResult slots = Call("GET", "/v2/slots?eventTypeId=" + std::to_string(event_type) + "&start=" + from +
                                       "&end=" + to, "");
    EXPECT_EQ(slots.status, 200) << slots.body;
    std::vector<std::string> uids;
    const json data = slots.Json()["data"];
    for (const auto& [date, list] : data.items()) {
      for (const json& slot : list) {
        if (uids.size() == n) return uids;
        HttpResult r = Call("POST", "/v2/bookings", "",
                            json{{"start", slot["start"]},
                                 {"eventTypeId", event_type},
                                 {"attendee", {{"name", "Ann Attendee"}, {"email", "ann@example.com"}, {"timeZone", "UTC"}}}});
        EXPECT_EQ(r.status, 201) << r.body;
        if (r.status != 201) return uids;
        uids.push_back(r.Json()["data"]["uid"]);
      }
    }
    ADD_FAILURE() << "only " << uids.size() << " free slots";
    return uids;
  }

  // booking uid -> the webhook-ids it arrived with (one per request received).
  static std::map<std::string, std::vector<std::string>> ReceivedByBooking(const LoopbackHttpServer& receiver) {
    std::map<std::string, std::vector<std::string>> out;
    for (const PeerRequest& r : receiver.Requests()) {
      const json event = json::parse(r.body, nullptr, false);
      if (event.is_object()) out[event["payload"].value("uid", "")].push_back(r.Header("webhook-id"));
    }
    return out;
  }

  // The value of a sample line `name` (labels included) in the /metrics text of `server`, or -1.
  double Sample(const TestServer& server, const std::string& name) {
    HttpResult r = http_.Get(server.api() + "/metrics");
    std::istringstream lines(r.body);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
    }
    return -1;
  }

  bool Active(int64_t webhook_id) {
    HttpResult r = Call("GET", "/v2/webhooks/" + std::to_string(webhook_id), owner_key_);
    return r.status == 200 && r.Json()["data"]["active"] == true;
  }
};

TEST_F(WebhooksReliability, SlowReceiverDoesNotHoldUpAnother) {
  // The slow receiver answers one request at a time, each after 2 s.
  LoopbackHttpServer slow([](const PeerRequest&) { return Ok(std::chrono::seconds(2)); });
  LoopbackHttpServer fast([](const PeerRequest&) { return Ok(); });
  StartServer(Plugins("  workers: 4\n  workers_per_host: 2\n"));
  CreateWebhook(Body(slow.url() + "/slow", {"BOOKING_CREATED"}));
  CreateWebhook(Body(fast.url() + "/fast", {"BOOKING_CREATED"}));

  BookMany(6);
  // Without a limit per destination the slow receiver's deliveries would take every slot, and the
  // fast one's last deliveries would wait for the slow answers.
  ASSERT_TRUE(fast.AwaitRequests(6, std::chrono::seconds(20)));
  EXPECT_LE(slow.Requests().size(), 1u) << "the fast receiver waited for the slow one";
}

TEST_F(WebhooksReliability, WebhookFailingForDisableAfterIsTurnedOffAndItsOwnerMailed) {
  LoopbackHttpServer receiver([](const PeerRequest&) {
    PeerResponse r = Ok();
    r.status = 500;
    return r;
  });
  StartServer(Plugins("  disable_after: 2\n"), "mail:\n  log_file: \"var/test-mail.log\"\n");
  const int64_t id = CreateWebhook(Body(receiver.url() + "/broken"))["id"];
  const int64_t healthy = CreateWebhook(Body(receiver.url() + "/also-broken-but-new"), other_key_)["id"];

  ConfirmNewBooking();
  ASSERT_TRUE(Await([&] { return !Active(id); })) << "the failing webhook stayed active";
  const std::string mail_log = server_->dir() + "/var/test-mail.log";
  ASSERT_TRUE(Await([&] {
    std::ifstream in(mail_log);
    std::stringstream text;
    text << in.rdbuf();
    return text.str().find("owner@example.com") != std::string::npos &&
           text.str().find("Your webhook was turned off") != std::string::npos &&
           text.str().find("/broken") != std::string::npos;
  })) << "no mail to the owner in " << mail_log;
  // Counted once the sender has seen its record commit (the mail may be written a moment before).
  EXPECT_TRUE(Await([&] { return Sample(*server_, "webhooks_disabled_total{reason=\"failing\"}") == 1; }))
      << Sample(*server_, "webhooks_disabled_total{reason=\"failing\"}");
  // Another user's webhook, which received nothing, is untouched.
  EXPECT_EQ(Call("GET", "/v2/webhooks/" + std::to_string(healthy), other_key_).Json()["data"]["active"], true);

  // Set active again, it gets a fresh clock: the next event is attempted.
  ASSERT_EQ(Call("PATCH", "/v2/webhooks/" + std::to_string(id), owner_key_, json{{"active", true}}).status, 200);
  EXPECT_TRUE(Active(id));
  const size_t before = receiver.Requests().size();
  ConfirmNewBooking();
  EXPECT_TRUE(receiver.AwaitRequests(before + 1));
}

TEST_F(WebhooksReliability, DeliveryLogIsPurgedAfterItsRetention) {
  LoopbackHttpServer receiver([](const PeerRequest&) { return Ok(); });
  StartServer(Plugins("  delivery_retention: 1\n"));
  const int64_t id = CreateWebhook(Body(receiver.url() + "/kept-briefly"))["id"];
  ConfirmNewBooking();
  ASSERT_TRUE(receiver.AwaitRequests(1));
  ASSERT_TRUE(Await([&] { return Count("SELECT COUNT(*) FROM webhook_deliveries") == 0; }))
      << "the finished delivery was kept";
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_delivery_attempts"), 0);
  EXPECT_TRUE(Deliveries(id).empty());
  // Its first success was measured from the booking's commit.
  EXPECT_EQ(Sample(*server_, "webhooks_delivery_latency_seconds_count"), 1);
  EXPECT_GE(Sample(*server_, "webhooks_due_deliveries"), 0);
}

TEST_F(WebhooksReliability, KillDuringABurstLosesNothing) {
  // 20 ms a request, one at a time: the deliveries outlast the bookings, so the kill cuts them.
  LoopbackHttpServer receiver([](const PeerRequest&) { return Ok(std::chrono::milliseconds(20)); });
  StartServer(Plugins("  timeout: 1\n"));
  CreateWebhook(Body(receiver.url() + "/burst", {"BOOKING_CREATED"}));

  const std::vector<std::string> uids = BookMany(200);
  ASSERT_EQ(uids.size(), 200u);
  ASSERT_TRUE(receiver.AwaitRequests(30, std::chrono::seconds(30)));
  ASSERT_EQ(server_->Stop(9), 9 + 128) << "the server was not killed";  // mid-delivery
  const size_t at_kill = receiver.Requests().size();
  std::string why;
  ASSERT_TRUE(server_->Start(&why)) << why;

  std::map<std::string, std::vector<std::string>> got;
  const bool all = Await([&] {
    got = ReceivedByBooking(receiver);
    for (const std::string& uid : uids) {
      if (got.count(uid) == 0) return false;
    }
    return true;
  }, std::chrono::seconds(90));
  ASSERT_TRUE(all) << got.size() << " of 200 bookings delivered (" << at_kill << " requests before the kill)";
  EXPECT_LT(at_kill, 200u) << "the kill came after every delivery: it proved nothing";
  // A booking sent twice (its attempt cut by the kill) carried the same webhook-id both times.
  for (const auto& [uid, ids] : got) {
    EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), 1u) << uid;
  }
  // Every delivery is recorded as succeeded (the last record may land just after its request).
  EXPECT_TRUE(Await([&] { return Count("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'succeeded'") == 200; }))
      << Count("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'succeeded'");
}

TEST_F(WebhooksReliability, TwoInstancesShareTheWorkWithoutSendingTwice) {
  // One request at a time, 10 ms each: the deliveries take long enough for both instances to claim.
  LoopbackHttpServer receiver([](const PeerRequest&) { return Ok(std::chrono::milliseconds(10)); });
  StartServer(Plugins("  workers: 4\n"));
  TestServerOptions second_options;
  second_options.plugins = Plugins("  workers: 4\n");
  TestServer second(db_.name(), second_options);
  std::string why;
  ASSERT_TRUE(second.Start(&why)) << why;
  CreateWebhook(Body(receiver.url() + "/shared", {"BOOKING_CREATED"}));

  const std::vector<std::string> uids = BookMany(120);
  ASSERT_EQ(uids.size(), 120u);
  ASSERT_TRUE(receiver.AwaitRequests(120, std::chrono::seconds(60)));
  const std::string succeeded = "webhooks_delivery_attempts_total{outcome=\"succeeded\",trigger=\"BOOKING_CREATED\"}";
  ASSERT_TRUE(Await([&] { return std::max(0.0, Sample(*server_, succeeded)) + std::max(0.0, Sample(second, succeeded)) == 120; }))
      << Sample(*server_, succeeded) << " + " << Sample(second, succeeded);
  EXPECT_GT(Sample(*server_, succeeded), 0) << "the first instance sent nothing";
  EXPECT_GT(Sample(second, succeeded), 0) << "the second instance sent nothing";

  std::map<std::string, std::vector<std::string>> got = ReceivedByBooking(receiver);
  EXPECT_EQ(got.size(), 120u);
  for (const auto& [uid, ids] : got) EXPECT_EQ(ids.size(), 1u) << uid << " was sent " << ids.size() << " times";
  EXPECT_EQ(receiver.Requests().size(), 120u);
}

}  // namespace
}  // namespace rendezvous::testing
