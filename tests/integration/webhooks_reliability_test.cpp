// The delivery engine under stress, against the real server, database and receivers on loopback:
// a slow receiver does not hold up another's deliveries, a webhook that keeps failing is turned
// off and its owner mailed, the delivery log is purged after its retention, `kill -9` in the
// middle of a burst loses nothing, two instances on one database share the work without sending
// anything twice, and one user's event that cannot be handled (a body past the size limit, a row
// the database refuses) holds up no one: cut on a character, or parked for the operator.
#include <condition_variable>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "eventually.hpp"
#include "rendezvous/text.hpp"
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

// How the tests here wait for the server: up to 30 s, checking every 20 ms.
const Patience kAwait{std::chrono::seconds(30), std::chrono::milliseconds(20)};

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

  // A pending booking of the other user (imported), confirmed through the API: one
  // BOOKING_CONFIRMED event whose organizer is the other user.
  void ConfirmOthersBooking() {
    if (others_event_type_ == 0)
      others_event_type_ = CreateEventType(other_key_, "others", 30)["id"].get<int64_t>();
    ++others_bookings_;
    char start[32];
    std::snprintf(start, sizeof start, "2030-03-%02dT10:00:00Z", others_bookings_);
    const std::string uid = Import(other_, others_event_type_, start, "pending").value("uid", "");
    EXPECT_EQ(Call("POST", "/v2/bookings/" + uid + "/confirm", other_key_, std::string("{}")).status, 200);
  }

  // `admin outbox parked` (fails the test unless it exits 0): the parked array.
  json Parked() {
    CliResult r = server_->Cli({"admin", "outbox", "parked", "--consumer", "webhooks"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.Json()["parked"];
  }

  // Waits (bounded) until `admin outbox parked` lists `n` events; returns the list.
  json AwaitParked(size_t n) {
    json parked;
    Eventually(std::to_string(n) + " parked events",
               {std::chrono::seconds(15), std::chrono::milliseconds(20)}, [&] {
                 parked = Parked();
                 return parked.is_array() && parked.size() == n;
               });
    EXPECT_EQ(parked.size(), n) << parked.dump();
    return parked;
  }

  int64_t others_event_type_ = 0;
  int others_bookings_ = 0;
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

// A template that renders past the body limit, with a multi-byte character at the cut: the body is
// cut before that character (the database takes it), and another user's delivery is not held up.
TEST_F(WebhooksReliability, OversizedTemplateIsCutOnACharacterAndHoldsUpNoOne) {
  LoopbackHttpServer a([](const PeerRequest&) { return Ok(); });
  LoopbackHttpServer b([](const PeerRequest&) { return Ok(); });
  StartServer(Plugins(), "outbox: { max_attempts: 2 }\n");
  json poisoned = Body(a.url() + "/a");
  std::string tmpl = "X";
  for (int i = 0; i < 2100; ++i) tmpl += "{{attendees.0.name}}";
  poisoned["payloadTemplate"] = tmpl;
  CreateWebhook(poisoned);
  CreateWebhook(Body(b.url() + "/b"), other_key_);

  std::string name;
  for (int i = 0; i < 255; ++i) name += "\xC3\xA9";  // é: 510 bytes, 2,100 times past 1 MiB
  ConfirmNewBooking(name);
  ConfirmOthersBooking();
  ASSERT_TRUE(b.AwaitRequests(1, std::chrono::seconds(15))) << "the other user's delivery was held up";
  ASSERT_TRUE(a.AwaitRequests(1, std::chrono::seconds(15)));
  const std::string body = a.Requests()[0].body;
  EXPECT_EQ(body.size(), 1048575u);  // 1 MiB less the half character
  EXPECT_TRUE(text::IsValidUtf8(body));
  EXPECT_EQ(body.compare(0, 1 + name.size(), "X" + name), 0);
  EXPECT_EQ(a.Requests()[0].Header("content-type"), "text/plain");
  EXPECT_TRUE(Parked().empty());
}

// A delivery the database refuses (a CHECK constraint added by the test stands for any row it
// will not take): the event is retried on its own and parked after outbox.max_attempts, the other
// user's delivery arrives meanwhile, and the operator lists, replays and drops it.
TEST_F(WebhooksReliability, EventTheDatabaseRefusesIsParkedAndNoOneWaitsForIt) {
  LoopbackHttpServer a([](const PeerRequest&) { return Ok(); });
  LoopbackHttpServer b([](const PeerRequest&) { return Ok(); });
  StartServer(Plugins(), "outbox: { max_attempts: 2 }\n");
  const int64_t a_hook = CreateWebhook(Body(a.url() + "/a"))["id"];
  CreateWebhook(Body(b.url() + "/b"), other_key_);
  const std::string refuse = "ALTER TABLE webhook_deliveries ADD CONSTRAINT refuse_a CHECK (webhook_id <> " +
                             std::to_string(a_hook) + ")";
  db_.Exec(refuse);

  const std::string uid = ConfirmNewBooking();
  ConfirmOthersBooking();
  ASSERT_TRUE(b.AwaitRequests(1, std::chrono::seconds(15))) << "the other user's delivery was held up";
  json parked = AwaitParked(1);
  ASSERT_EQ(parked.size(), 1u);
  const int64_t first_id = parked[0]["id"].get<int64_t>();
  EXPECT_EQ(parked[0]["consumer"], "webhooks");
  EXPECT_EQ(parked[0]["topic"], "bookings");
  EXPECT_EQ(parked[0]["type"], "BOOKING_CONFIRMED");
  EXPECT_EQ(parked[0]["attempts"], 2);
  EXPECT_NE(parked[0]["lastError"].get<std::string>().find("refuse_a"), std::string::npos) << parked[0];
  EXPECT_EQ(parked[0]["parkedAt"].get<std::string>().size(), 24u) << parked[0];
  EXPECT_TRUE(Eventually("one parked event", kAwait, [&] {
    return Sample(*server_, "outbox_parked_events{consumer=\"webhooks\"}") == 1;
  }));
  EXPECT_EQ(Sample(*server_, "outbox_events_parked_total{consumer=\"webhooks\"}"), 1);
  EXPECT_EQ(Sample(*server_, "outbox_parked_events{consumer=\"calendar\"}"), 0);

  // Replayed while the database still refuses it: tried again from zero, parked again.
  CliResult replay = server_->Cli({"admin", "outbox", "replay", std::to_string(first_id)});
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_EQ(replay.Json(), json({{"replayed", first_id}}));
  ASSERT_TRUE(Eventually("the replayed event parked again",
                         {std::chrono::seconds(15), std::chrono::milliseconds(20)}, [&] {
                           const json p = Parked();
                           return p.size() == 1 && p[0]["id"] != first_id;
                         }));
  EXPECT_EQ(Sample(*server_, "outbox_events_parked_total{consumer=\"webhooks\"}"), 2);
  EXPECT_EQ(a.Requests().size(), 0u);

  // Replayed once the database takes it: delivered.
  db_.Exec("ALTER TABLE webhook_deliveries DROP CONSTRAINT refuse_a");
  const int64_t second_id = Parked()[0]["id"].get<int64_t>();
  ASSERT_EQ(server_->Cli({"admin", "outbox", "replay", std::to_string(second_id)}).exit_code, 0);
  ASSERT_TRUE(a.AwaitRequests(1, std::chrono::seconds(15)));
  EXPECT_EQ(json::parse(a.Requests()[0].body)["payload"]["uid"], uid);
  AwaitParked(0);
  EXPECT_TRUE(Eventually("no parked event", kAwait, [&] {
    return Sample(*server_, "outbox_parked_events{consumer=\"webhooks\"}") == 0;
  }));

  // Dropped: forgotten, never delivered (to either of the owner's webhooks: the event failed).
  const int64_t a2_hook = CreateWebhook(Body(a.url() + "/a2"))["id"];
  db_.Exec("ALTER TABLE webhook_deliveries ADD CONSTRAINT refuse_a2 CHECK (webhook_id <> " +
           std::to_string(a2_hook) + ")");
  ConfirmNewBooking();
  const int64_t third_id = AwaitParked(1)[0]["id"].get<int64_t>();
  CliResult drop = server_->Cli({"admin", "outbox", "drop", std::to_string(third_id)});
  ASSERT_EQ(drop.exit_code, 0) << drop.err;
  EXPECT_EQ(drop.Json(), json({{"dropped", third_id}}));
  EXPECT_TRUE(Parked().empty());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM outbox_retries"), 0);

  // Unknown ids: a clear message and a failing exit, nothing printed on stdout.
  for (const std::string verb : {"replay", "drop"}) {
    CliResult unknown = server_->Cli({"admin", "outbox", verb, std::to_string(third_id)});
    EXPECT_NE(unknown.exit_code, 0) << verb;
    EXPECT_NE(unknown.err.find("no parked event has id " + std::to_string(third_id)), std::string::npos)
        << unknown.err;
    EXPECT_TRUE(unknown.out.empty()) << unknown.out;
  }
  CliResult bad = server_->Cli({"admin", "outbox", "drop", "x1"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("not a parked event id"), std::string::npos) << bad.err;
  EXPECT_EQ(a.Requests().size(), 1u);
  EXPECT_TRUE(server_->running());
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
  ASSERT_TRUE(Eventually("the failing webhook inactive", kAwait, [&] { return !Active(id); }))
      << "the failing webhook stayed active";
  const std::string mail_log = server_->dir() + "/var/test-mail.log";
  ASSERT_TRUE(Eventually("the mail to the owner", kAwait,
                         [&] {
                           std::ifstream in(mail_log);
                           std::stringstream text;
                           text << in.rdbuf();
                           return text.str().find("owner@example.com") != std::string::npos &&
                                  text.str().find("Your webhook was turned off") != std::string::npos &&
                                  text.str().find("/broken") != std::string::npos;
                         }))
      << "no mail to the owner in " << mail_log;
  // Counted once the sender has seen its record commit (the mail may be written a moment before).
  EXPECT_TRUE(Eventually("webhooks_disabled_total at 1", kAwait, [&] {
    return Sample(*server_, "webhooks_disabled_total{reason=\"failing\"}") == 1;
  })) << Sample(*server_, "webhooks_disabled_total{reason=\"failing\"}");
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
  ASSERT_TRUE(Eventually("the finished delivery purged", kAwait, [&] {
    return Count("SELECT COUNT(*) FROM webhook_deliveries") == 0;
  })) << "the finished delivery was kept";
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_delivery_attempts"), 0);
  EXPECT_TRUE(Deliveries(id).empty());
  // Its first success was measured from the booking's commit.
  EXPECT_EQ(Sample(*server_, "webhooks_delivery_latency_seconds_count"), 1);
  EXPECT_GE(Sample(*server_, "webhooks_due_deliveries"), 0);
}

TEST_F(WebhooksReliability, KillDuringABurstLosesNothing) {
  // The receiver takes 30 deliveries, then holds the next one until the server is killed (it
  // serves one request at a time): the kill cuts the burst whatever the machine's pace.
  std::mutex gate_mu;
  std::condition_variable gate_cv;
  bool gate_open = false;
  size_t taken = 0;
  auto open_gate = [&] {
    std::lock_guard<std::mutex> lock(gate_mu);
    gate_open = true;
    gate_cv.notify_all();
  };
  LoopbackHttpServer receiver([&](const PeerRequest&) {
    std::unique_lock<std::mutex> lock(gate_mu);
    if (++taken > 30) gate_cv.wait_for(lock, std::chrono::seconds(60), [&] { return gate_open; });
    return Ok(std::chrono::milliseconds(2));
  });
  struct OpenAtExit {
    std::function<void()> open;
    ~OpenAtExit() { open(); }
  } open_at_exit{open_gate};  // before the receiver's end, whatever fails
  StartServer(Plugins("  timeout: 1\n"));
  CreateWebhook(Body(receiver.url() + "/burst", {"BOOKING_CREATED"}));

  const std::vector<std::string> uids = BookMany(200);
  ASSERT_EQ(uids.size(), 200u);
  ASSERT_TRUE(receiver.AwaitRequests(30, std::chrono::seconds(30)));
  ASSERT_EQ(server_->Stop(9), 9 + 128) << "the server was not killed";  // mid-delivery
  const size_t at_kill = receiver.Requests().size();
  open_gate();
  std::string why;
  ASSERT_TRUE(server_->Start(&why)) << why;

  std::map<std::string, std::vector<std::string>> got;
  const bool all =
      Eventually("every booking received", {std::chrono::seconds(90), std::chrono::milliseconds(20)}, [&] {
        got = ReceivedByBooking(receiver);
        for (const std::string& uid : uids) {
          if (got.count(uid) == 0) return false;
        }
        return true;
      });
  ASSERT_TRUE(all) << got.size() << " of 200 bookings delivered (" << at_kill << " requests before the kill)";
  EXPECT_LT(at_kill, 200u) << "the kill came after every delivery: it proved nothing";
  // A booking sent twice (its attempt cut by the kill) carried the same webhook-id both times.
  for (const auto& [uid, ids] : got) {
    EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), 1u) << uid;
  }
  // Every delivery is recorded as succeeded (the last record may land just after its request).
  EXPECT_TRUE(Eventually("200 succeeded deliveries", kAwait, [&] {
    return Count("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'succeeded'") == 200;
  })) << Count("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'succeeded'");
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
  ASSERT_TRUE(Eventually(
      "120 deliveries from the two instances", kAwait,
      [&] {
        return std::max(0.0, Sample(*server_, succeeded)) + std::max(0.0, Sample(second, succeeded)) == 120;
      }))
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
