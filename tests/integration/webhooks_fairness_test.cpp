// Fairness between the users whose webhooks the server delivers to, with the real server, MariaDB
// and receivers on loopback. One user (the attacker) has 100 webhooks and is fed anonymous
// bookings with long attendee names: with a 64 KiB template each rendering is 1 MiB, and with a
// render script that runs for its whole time limit on that user's events each rendering costs 50
// ms. Meanwhile another user's deliveries (commit to delivery: from before the booking's POST to
// its arrival at the receiver) stay within a second of the same user's baseline measured in the
// same test, and the database grows by at most `max_event_bytes` per event. The same holds for a
// filter script that runs for its whole time limit on that user's events, and what the filter
// turns down never shows in the delivery log, not even while it awaits the filter. A configured
// max_rendered_bytes cuts every rendering on a character boundary.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "eventually.hpp"
#include "temp_dir.hpp"
#include "webhooks_fixture.hpp"

namespace rendezvous::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kAttackWebhooks = 100;
constexpr int kAttackBookings = 3;
constexpr int64_t kMaxEventBytes = 1048576;  // the cap the tests configure: a quarter of the default
constexpr std::chrono::milliseconds kAllowedDelay{1000};

// An attendee name of 255 characters (the most a name may have), `prefix` (ASCII) and then
// four-byte characters.
std::string LongName(const std::string& prefix) {
  std::string name = prefix;
  for (size_t i = prefix.size(); i < 255; ++i) name += "\xF0\x9D\x84\x9E";  // U+1D11E
  return name;
}

// A receiver that counts what it got and notes when each booking's delivery arrived (by the
// booking's uid in the built-in body).
class Receiver {
 public:
  Receiver()
      : server_([this](const PeerRequest& r) {
          {
            std::lock_guard<std::mutex> lock(mu_);
            ++count_;
            largest_ = std::max(largest_, r.body.size());
            const json body = json::parse(r.body, nullptr, false);
            if (body.is_object() && body.contains("payload") && body["payload"].contains("uid") &&
                body["payload"]["uid"].is_string()) {
              arrived_.emplace(body["payload"]["uid"].get<std::string>(), Clock::now());
            }
          }
          PeerResponse ok;
          ok.content_type = "text/plain";
          ok.body = "ok";
          return ok;
        }) {}

  std::string url() const { return server_.url(); }
  size_t count() const {
    std::lock_guard<std::mutex> lock(mu_);
    return count_;
  }
  size_t largest() const {
    std::lock_guard<std::mutex> lock(mu_);
    return largest_;
  }
  std::optional<Clock::time_point> ArrivalOf(const std::string& uid) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = arrived_.find(uid);
    if (it == arrived_.end()) return std::nullopt;
    return it->second;
  }

 private:
  mutable std::mutex mu_;
  size_t count_ = 0;
  size_t largest_ = 0;
  std::map<std::string, Clock::time_point> arrived_;
  LoopbackHttpServer server_;  // last: its thread calls the handler, which uses the members above
};

class WebhooksFairness : public WebhooksFixture {
 protected:
  // The webhooks plugin as the tests configure it, with the production default of 16 requests in
  // flight, the cap above, and the public routes unlimited (the attack's anonymous bookings).
  static std::string Plugins(const std::string& extra = "") {
    return "webhooks:\n  allow_private_networks: true\n  retry_schedule: [1, 1]\n  workers: 16\n  timeout: "
           "5\n"
           "  max_event_bytes: " +
           std::to_string(kMaxEventBytes) + "\n" + extra + kUnlimitedPublicRoutes;
  }

  // Starts the server and makes the two users' event types, the victim's webhook (the built-in
  // body) and the attacker's 100 webhooks (`attack_webhook` each, its URL added).
  void SetUpUsers(const std::string& plugins, const json& attack_webhook) {
    StartServer(plugins);
    attack_type_ = CreateEventType(owner_key_, "attack", 15)["id"].get<int64_t>();
    victim_type_ = CreateEventType(other_key_, "victim", 15)["id"].get<int64_t>();
    CreateWebhook(Body(victim_.url() + "/victim", {"BOOKING_CREATED"}), other_key_);
    for (int i = 0; i < kAttackWebhooks; ++i) {
      json body = attack_webhook;
      body["subscriberUrl"] = attacker_.url() + "/attack/" + std::to_string(i);
      CreateWebhook(body, owner_key_);
    }
    day_ = Monday();
  }

  // An anonymous booking of `event_type` at the `slot`th quarter hour from 09:00; its uid.
  std::string Book(int64_t event_type, int slot, const std::string& name) {
    char clock[16];
    std::snprintf(clock, sizeof clock, "%02d:%02d", 9 + slot / 4, 15 * (slot % 4));
    const json body = {{"start", At(day_, clock)},
                       {"eventTypeId", event_type},
                       {"attendee", {{"name", name}, {"email", "ann@example.com"}, {"timeZone", "UTC"}}}};
    HttpResult r = Call("POST", "/v2/bookings", "", body);
    EXPECT_EQ(r.status, 201) << r.body.substr(0, 500);
    return r.Json()["data"].value("uid", "");
  }

  // Books the victim's `slot`th slot and waits for its delivery: commit to delivery, from before
  // the POST (its answer comes after the commit) to the receiver's arrival.
  std::chrono::milliseconds VictimLatency(int slot) {
    const auto posted = Clock::now();
    const std::string uid = Book(victim_type_, slot, "Vic Victim");
    std::optional<Clock::time_point> arrived;
    EXPECT_TRUE(Eventually("the victim's delivery of " + uid, Patience{std::chrono::seconds(60)}, [&] {
      arrived = victim_.ArrivalOf(uid);
      return arrived.has_value();
    }));
    if (!arrived) return std::chrono::hours(1);
    return std::chrono::duration_cast<std::chrono::milliseconds>(*arrived - posted);
  }

  // The worst of three victim deliveries with nothing else going on.
  std::chrono::milliseconds Baseline() {
    std::chrono::milliseconds worst{0};
    for (int slot = 0; slot < 3; ++slot) worst = std::max(worst, VictimLatency(slot));
    return worst;
  }

  // What the database holds: data and indexes of every table, from statistics made afresh.
  int64_t DatabaseBytes() {
    const std::string tables = db_.QueryValue(
        "SELECT GROUP_CONCAT(table_name) FROM information_schema.tables WHERE table_schema = DATABASE()"
        " AND engine = 'InnoDB'");
    db_.QueryValue("ANALYZE TABLE " + tables);
    return std::stoll("0" +
                      db_.QueryValue("SELECT SUM(data_length + index_length) FROM information_schema.tables"
                                     " WHERE table_schema = DATABASE()"));
  }

  // The attack's bookings, then victim deliveries while it runs: each within kAllowedDelay of
  // the baseline. Then the database's growth per attack event, once the attack's deliveries are
  // all created (and, when `await_sent`, sent).
  void RunAttack(const std::string& attack_name, bool await_sent) {
    const std::chrono::milliseconds baseline = Baseline();
    const int64_t before = DatabaseBytes();
    for (int i = 0; i < kAttackBookings; ++i) Book(attack_type_, i, attack_name);
    for (int slot = 3; slot < 6; ++slot) {
      const std::chrono::milliseconds latency = VictimLatency(slot);
      const size_t attack_received = attacker_.count();
      std::printf(
          "victim delivery during the attack: %lld ms (baseline %lld ms); the attacker's receiver had %zu of "
          "%d\n",
          static_cast<long long>(latency.count()), static_cast<long long>(baseline.count()), attack_received,
          kAttackWebhooks * kAttackBookings);
      EXPECT_LT(latency - baseline, kAllowedDelay) << "the victim's delivery took " << latency.count()
                                                   << " ms against a baseline of " << baseline.count();
    }
    const int64_t attack_deliveries = kAttackWebhooks * kAttackBookings;
    ASSERT_TRUE(Eventually("the attack's deliveries created", Patience{std::chrono::seconds(60)}, [&] {
      return Count(
                 "SELECT COUNT(*) FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id"
                 " WHERE w.user_id = " +
                 std::to_string(owner_)) == attack_deliveries;
    }));
    if (await_sent) {
      ASSERT_TRUE(Eventually("the attack's deliveries sent",
                             Patience{std::chrono::seconds(180), std::chrono::milliseconds(200)},
                             [&] { return attacker_.count() >= static_cast<size_t>(attack_deliveries); }));
    }
    const int64_t grown = DatabaseBytes() - before;
    std::printf("database growth: %lld bytes for %d attack events and 3 victim events (cap %lld per event)\n",
                static_cast<long long>(grown), kAttackBookings, static_cast<long long>(kMaxEventBytes));
    EXPECT_LE(grown, (kAttackBookings + 3) * kMaxEventBytes);
  }

  Receiver attacker_;
  Receiver victim_;
  int64_t attack_type_ = 0;
  int64_t victim_type_ = 0;
  std::string day_;
};

// A 64 KiB template of the attendee's name over and over: each delivery's body is cut at 1 MiB.
TEST_F(WebhooksFairness, LargeRenderingsOfOneUserDoNotDelayAnothersDeliveries) {
  std::string tmpl = "{\"n\":\"";
  while (tmpl.size() + 20 + 2 <= 65536) tmpl += "{{attendees.0.name}}";
  tmpl += "\"}";
  SetUpUsers(Plugins(), json{{"active", true}, {"triggers", {"BOOKING_CREATED"}}, {"payloadTemplate", tmpl}});
  RunAttack(LongName("Mallory "), true);
  EXPECT_GT(attacker_.largest(), 1000000u) << "the renderings were 1 MiB each";
  EXPECT_LE(attacker_.largest(), 1048576u);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE body IS NOT NULL"), 0)
      << "no rendering is stored";
}

// A render script that loops for its whole time limit on the attacker's events (and answers nil,
// the built-in body, at once for everyone else's).
TEST_F(WebhooksFairness, SlowRendersOfOneUserDoNotDelayAnothersDeliveries) {
  rdv_test::TempDir dir("rdv-webhooks-fairness");
  const std::string script = dir.path() + "/render.lua";
  std::ofstream(script, std::ios::binary | std::ios::trunc)
      << "function render(template, event, webhook)\n"
         "  if string.sub(event.payload.attendees[1].name, 1, 4) == 'slow' then\n"
         "    local x = 0\n"
         "    while true do x = x + 1 end\n"
         "  end\n"
         "  return nil\n"
         "end\n";
  // The instruction limit out of the way: the time limit (50 ms) ends each call.
  SetUpUsers(Plugins("  scripts: { render: \"" + script +
                     "\" }\n  lua: { instruction_limit: 1000000000, time_limit_ms: 50 }\n"),
             json{{"active", true}, {"triggers", {"BOOKING_CREATED"}}});
  RunAttack(LongName("slow "), false);
  EXPECT_TRUE(server_->AwaitLog("time limit")) << "the attacker's renders ran into the time limit";
}

// A filter script that loops for its whole time limit on the attacker's "slow" events (so they are
// delivered: the built-in behaviour), and turns down at once the attacker's "drop" events and the
// victim's deliveries to a second webhook. The filter runs on the sender's render thread, owners in
// turns, not in the outbox consumer's transaction: the victim's deliveries stay within a second of
// the baseline. A delivery awaiting its filter or turned down by it is never in the log.
TEST_F(WebhooksFairness, SlowFiltersOfOneUserDoNotDelayAnothersDeliveries) {
  rdv_test::TempDir dir("rdv-webhooks-fairness");
  const std::string script = dir.path() + "/filter.lua";
  std::ofstream(script, std::ios::binary | std::ios::trunc)
      << "function should_deliver(event, webhook)\n"
         "  local name = event.payload.attendees[1].name\n"
         "  if string.sub(name, 1, 5) == 'slow ' then\n"
         "    local x = 0\n"
         "    while true do x = x + 1 end\n"
         "  end\n"
         "  if string.sub(name, 1, 5) == 'drop ' then return false end\n"
         "  return string.sub(webhook.subscriberUrl, -8) ~= '/dropped'\n"
         "end\n";
  SetUpUsers(Plugins("  scripts: { filter: \"" + script +
                     "\" }\n  lua: { instruction_limit: 1000000000, time_limit_ms: 50 }\n"),
             json{{"active", true}, {"triggers", {"BOOKING_CREATED"}}});
  const int64_t dropped =
      CreateWebhook(Body(victim_.url() + "/dropped", {"BOOKING_CREATED"}), other_key_)["id"].get<int64_t>();
  std::vector<int64_t> attack_webhooks;
  {
    std::istringstream ids(db_.QueryValue(
        "SELECT GROUP_CONCAT(id ORDER BY id) FROM webhooks WHERE user_id = " + std::to_string(owner_)));
    for (std::string id; std::getline(ids, id, ',');) attack_webhooks.push_back(std::stoll(id));
  }
  ASSERT_EQ(attack_webhooks.size(), static_cast<size_t>(kAttackWebhooks));

  // The delivery log as its owner sees it: the total and the page's length.
  auto logged = [&](int64_t webhook, const std::string& key) {
    HttpResult r = Call("GET", "/v2/webhooks/" + std::to_string(webhook) + "/deliveries?take=100", key);
    EXPECT_EQ(r.status, 200) << r.body;
    const json body = r.Json();
    EXPECT_EQ(body["data"].size(), body["pagination"].value("total", int64_t{-1})) << r.body;
    return body["pagination"].value("total", int64_t{-1});
  };
  // While the attack runs: no attacker's webhook shows more than its slow events, the victim's
  // second webhook nothing.
  auto expect_nothing_withheld_shown = [&] {
    for (size_t i : {size_t{0}, attack_webhooks.size() / 2, attack_webhooks.size() - 1}) {
      EXPECT_LE(logged(attack_webhooks[i], owner_key_), kAttackBookings) << "webhook " << attack_webhooks[i];
    }
    EXPECT_EQ(logged(dropped, other_key_), 0);
  };

  const std::chrono::milliseconds baseline = Baseline();
  std::vector<std::string> drops;
  for (int i = 0; i < kAttackBookings; ++i) {
    Book(attack_type_, 2 * i, "slow Sam");
    drops.push_back(Book(attack_type_, 2 * i + 1, "drop Dan"));
  }
  for (int slot = 3; slot < 6; ++slot) {
    const std::chrono::milliseconds latency = VictimLatency(slot);
    std::printf(
        "victim delivery during the filter attack: %lld ms (baseline %lld ms); the attacker's receiver had "
        "%zu\n",
        static_cast<long long>(latency.count()), static_cast<long long>(baseline.count()), attacker_.count());
    EXPECT_LT(latency - baseline, kAllowedDelay) << "the victim's delivery took " << latency.count()
                                                 << " ms against a baseline of " << baseline.count();
    expect_nothing_withheld_shown();
  }

  // Every filter has run: the turned-down deliveries are gone, the slow ones sent.
  const int64_t slow_deliveries = kAttackWebhooks * kAttackBookings;
  ASSERT_TRUE(Eventually(
      "every filter run", Patience{std::chrono::seconds(120), std::chrono::milliseconds(200)}, [&] {
        return Count("SELECT COUNT(*) FROM webhook_deliveries WHERE content_type = 'event-filter'") == 0 &&
               attacker_.count() >= static_cast<size_t>(slow_deliveries);
      }));
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id"
                  " WHERE w.user_id = " +
                  std::to_string(owner_)),
            slow_deliveries);
  for (int64_t webhook : attack_webhooks) EXPECT_EQ(logged(webhook, owner_key_), kAttackBookings) << webhook;
  EXPECT_EQ(logged(dropped, other_key_), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = " + std::to_string(dropped)),
            0);
  for (const std::string& uid : drops) EXPECT_FALSE(attacker_.ArrivalOf(uid).has_value()) << uid;
  EXPECT_EQ(attacker_.count(), static_cast<size_t>(slow_deliveries));
  EXPECT_EQ(victim_.count(), 6u) << "nothing reached the victim's second webhook";
  EXPECT_TRUE(server_->AwaitLog("webhooks.filter:5: time limit"))
      << "the attacker's filters ran into the time limit";
}

// plugins.webhooks.max_rendered_bytes: every rendering is cut at the configured size on a UTF-8
// character boundary (four-byte characters: up to 3 bytes short); a size out of range stops the
// start with an error naming the key.
TEST_F(WebhooksFairness, TheConfiguredMaxRenderedBytesCutsEveryRendering) {
  std::string tmpl = "{\"n\":\"";
  for (int i = 0; i < 8; ++i) tmpl += "{{attendees.0.name}}";
  tmpl += "\"}";
  SetUpUsers(Plugins("  max_rendered_bytes: 4096\n"),
             json{{"active", true}, {"triggers", {"BOOKING_CREATED"}}, {"payloadTemplate", tmpl}});
  Book(attack_type_, 0, LongName("Cut "));
  ASSERT_TRUE(Eventually("the deliveries of the booking", Patience{std::chrono::seconds(60)},
                         [&] { return attacker_.count() >= static_cast<size_t>(kAttackWebhooks); }));
  // `{"n":"` (6 bytes), four names of 1,008 bytes ("Cut " and 251 four-byte characters), "Cut " and
  // 13 characters: the 14th would end 2 bytes past 4,096 and is left out whole.
  EXPECT_EQ(attacker_.largest(), 6u + 4 * 1008 + 4 + 13 * 4);
  // A receiver has its body before the sender records the attempt.
  EXPECT_TRUE(Eventually("every attempt recorded", Patience{std::chrono::seconds(60)}, [&] {
    return Count("SELECT COUNT(*) FROM webhook_delivery_attempts WHERE status_code = 200") == kAttackWebhooks;
  }));

  TestServerOptions o;
  o.plugins = Plugins("  max_rendered_bytes: 1000\n");
  TestServer refused(db_.name(), o);
  std::string why;
  EXPECT_FALSE(refused.Start(&why));
  EXPECT_NE(why.find("max_rendered_bytes"), std::string::npos) << why;
}

}  // namespace
}  // namespace rendezvous::testing
