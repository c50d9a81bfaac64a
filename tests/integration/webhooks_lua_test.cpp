// The webhook Lua hooks with the real server, MariaDB and a receiver on loopback: the shipped
// filter and Slack scripts, scripts that run away, eat memory or try to leave the sandbox (each
// falls back to the built-in behaviour, counted, and the server keeps serving), reloading on
// SIGHUP (a changed script takes effect, a broken one leaves the previous in force), a render
// answering text that is not UTF-8 (the built-in body is sent, the error counted), renders that
// run away through a message handler or a sort (cut at the time limit, in the server and in
// `lua check`, without holding up another user's delivery), and a start
// refused for a script that is missing or does not compile.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "eventually.hpp"
#include "temp_dir.hpp"
#include "webhooks_fixture.hpp"

namespace rendezvous::testing {
namespace {

PeerResponse Ok() {
  PeerResponse r;
  r.status = 200;
  r.content_type = "text/plain";
  r.body = "ok";
  return r;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class WebhooksLua : public WebhooksFixture {
 protected:
  // Writes `text` as scripts/<name> in the test's folder; returns its path.
  std::string WriteScript(const std::string& name, const std::string& text) {
    const std::string path = dir_.path() + "/" + name;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    return path;
  }

  // The test plugins' YAML with the hooks (paths; "" for none) and tight limits. A test of the
  // instruction or memory limit gives the time limit room (a loaded machine stretches wall time);
  // the default time limit (50 ms) is left unwritten.
  static std::string Plugins(const std::string& filter, const std::string& render,
                             long instruction_limit = 200000, long memory_limit = 4 * 1024 * 1024,
                             long time_limit_ms = 50) {
    return std::string(kTestPlugins) + "  scripts:\n    filter: \"" + filter + "\"\n    render: \"" + render +
           "\"\n  lua:\n    instruction_limit: " + std::to_string(instruction_limit) +
           "\n    memory_limit_bytes: " + std::to_string(memory_limit) + "\n" +
           (time_limit_ms == 50 ? "" : "    time_limit_ms: " + std::to_string(time_limit_ms) + "\n");
  }

  // A pending booking of the owner with this attendee, confirmed through the API: one
  // BOOKING_CONFIRMED event. Returns the uid.
  std::string Confirm(const std::string& email, const std::string& name) {
    if (event_type_ == 0) event_type_ = CreateEventType(owner_key_, "intro")["id"].get<int64_t>();
    ++bookings_made_;
    char start[32];
    std::snprintf(start, sizeof start, "2030-02-%02dT10:00:00Z", bookings_made_);
    const std::string uid = Import(owner_, event_type_, start, "pending", email, name).value("uid", "");
    HttpResult confirmed = Call("POST", "/v2/bookings/" + uid + "/confirm", owner_key_, std::string("{}"));
    EXPECT_EQ(confirmed.status, 200) << confirmed.body;
    return uid;
  }

  // Waits (bounded) until the webhook has `n` deliveries in its log; returns the log, newest first.
  json AwaitDeliveryCount(int64_t webhook, size_t n) {
    json log;
    EXPECT_TRUE(Eventually(std::to_string(n) + " deliveries in the log", [&] {
      log = Deliveries(webhook);
      return log.is_array() && log.size() >= n;
    })) << log.dump();
    return log;
  }

  // The body and content type the receiver got for the newest delivery of a webhook (bodies are
  // rendered when sent, never stored), found by its webhook-id.
  std::pair<std::string, std::string> NewestBody(int64_t webhook) const {
    const std::string id = db_.QueryValue("SELECT message_id FROM webhook_deliveries WHERE webhook_id = " +
                                          std::to_string(webhook) + " ORDER BY id DESC LIMIT 1");
    std::pair<std::string, std::string> got;
    EXPECT_NE(receiver_, nullptr);
    if (receiver_ == nullptr) return got;
    EXPECT_TRUE(Eventually("the receiver got delivery " + id, [&] {
      for (const PeerRequest& r : receiver_->Requests()) {
        if (r.Header("webhook-id") == id) {
          got = {r.body, r.Header("content-type")};
          return true;
        }
      }
      return false;
    }));
    return got;
  }

  // The value of one series on /metrics, -1 when absent.
  double Metric(const std::string& series) {
    HttpResult metrics = http_.Get(server_->api() + "/metrics");
    EXPECT_EQ(metrics.status, 200);
    std::istringstream lines(metrics.body);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
    }
    return -1;
  }

  // Expects the newest delivery of `webhook` to carry the built-in body of the event about `uid`.
  void ExpectBuiltInBody(int64_t webhook, const std::string& uid) {
    auto [body, type] = NewestBody(webhook);
    EXPECT_EQ(type, "application/json");
    const json event = json::parse(body, nullptr, false);
    ASSERT_TRUE(event.is_object()) << body;
    EXPECT_EQ(event["triggerEvent"], "BOOKING_CONFIRMED");
    EXPECT_EQ(event["payload"]["uid"], uid) << body;
  }

  // The server still answers its API.
  void ExpectServing() {
    EXPECT_TRUE(server_->running());
    EXPECT_EQ(Call("GET", "/v2/webhooks", owner_key_).status, 200);
  }

  rdv_test::TempDir dir_{"rdv-webhooks-lua"};
  const LoopbackHttpServer* receiver_ = nullptr;  // the test's receiver
};

// The shipped scripts, the filter's two lists edited as an operator would.
TEST_F(WebhooksLua, ShippedFilterAndSlackScripts) {
  std::string filter = ReadText(SourceDir() + "/scripts/webhooks/filter.lua");
  ASSERT_NE(filter.find("local TRIGGERS = {}"), std::string::npos) << "the filter's list changed shape";
  ASSERT_NE(filter.find("local DOMAINS = {}"), std::string::npos);
  filter.replace(filter.find("local TRIGGERS = {}"), 19, "local TRIGGERS = {\"BOOKING_CONFIRMED\"}");
  filter.replace(filter.find("local DOMAINS = {}"), 18, "local DOMAINS = {\"example.com\"}");
  LoopbackHttpServer receiver([](const PeerRequest&) { return Ok(); });
  receiver_ = &receiver;
  StartServer(Plugins(WriteScript("filter.lua", filter), SourceDir() + "/scripts/webhooks/slack.lua"));
  const int64_t webhook =
      CreateWebhook(Body(receiver.url() + "/slack", {"BOOKING_CONFIRMED", "BOOKING_CANCELLED"}))["id"];
  json templated = Body(receiver.url() + "/templated");
  templated["payloadTemplate"] = "for {{attendees.0.name}}";
  const int64_t templated_id = CreateWebhook(templated)["id"];

  // Chosen: a confirmation for an attendee at example.com, rendered Slack-shaped, escaped.
  const std::string tricky = "Ann \"Q\" \\ Attendée";
  const std::string first = Confirm("ann@Example.COM", tricky);
  AwaitDeliveryCount(webhook, 1);
  auto [body, type] = NewestBody(webhook);
  EXPECT_EQ(type, "application/json");
  const json slack = json::parse(body, nullptr, false);
  ASSERT_TRUE(slack.is_object()) << body;
  ASSERT_EQ(slack.size(), 1u) << body;
  const std::string text = slack.value("text", "");
  EXPECT_NE(text.find("*Booking confirmed*"), std::string::npos) << text;
  EXPECT_NE(text.find(tricky + " <ann@"), std::string::npos) << text;
  EXPECT_NE(text.find("Host: Olga Owner"), std::string::npos) << text;
  // A webhook with its own template keeps the built-in rendering of it.
  AwaitDeliveryCount(templated_id, 1);
  const std::string quoted = json(tricky).dump();
  EXPECT_EQ(NewestBody(templated_id).first, "for " + quoted.substr(1, quoted.size() - 2));

  // Filtered out: the cancellation (trigger not chosen) and an attendee of another domain. A
  // chosen event made after them shows when they have been handled.
  EXPECT_EQ(Call("POST", "/v2/bookings/" + first + "/cancel", "", json{{"cancellationReason", "x"}}).status, 200);
  Confirm("bob@elsewhere.org", "Bob");
  const std::string last = Confirm("carl@example.com", "Carl");
  AwaitDeliveryCount(webhook, 2);
  ASSERT_TRUE(receiver.AwaitRequests(4));
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = " + std::to_string(webhook)), 2);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE trigger_event = 'BOOKING_CANCELLED'"), 0);
  EXPECT_EQ(OutboxCount("BOOKING_CANCELLED"), 1);
  EXPECT_NE(json::parse(NewestBody(webhook).first).value("text", "").find("Carl <carl@example.com>"),
            std::string::npos);
  EXPECT_GE(Metric("lua_calls_total{function=\"should_deliver\",script=\"webhooks.filter\"}"), 7);
  EXPECT_EQ(Metric("lua_errors_total{kind=\"runtime\",script=\"webhooks.render\"}"), 0);
  EXPECT_EQ(Metric("lua_errors_total{kind=\"runtime\",script=\"webhooks.filter\"}"), 0);
}

TEST_F(WebhooksLua, RunawayLoopsAreCutAndTheBuiltInBehaviourApplies) {
  LoopbackHttpServer receiver([](const PeerRequest&) { return Ok(); });
  receiver_ = &receiver;
  const std::string loop = "function spin()\n  local n = 0\n  while true do n = n + 1 end\nend\n";
  StartServer(Plugins(WriteScript("filter.lua", loop + "function should_deliver() spin() return false end\n"),
                      WriteScript("render.lua", loop + "function render() spin() return 'never' end\n"), 200000,
                      4 * 1024 * 1024, 10000));
  const int64_t webhook = CreateWebhook(Body(receiver.url() + "/hook"))["id"];
  const std::string uid = ConfirmNewBooking();
  AwaitDelivery(webhook, "succeeded", 1);
  ExpectBuiltInBody(webhook, uid);
  EXPECT_EQ(Metric("lua_errors_total{kind=\"budget\",script=\"webhooks.filter\"}"), 1);
  EXPECT_EQ(Metric("lua_errors_total{kind=\"budget\",script=\"webhooks.render\"}"), 1);
  EXPECT_TRUE(server_->AwaitLog("webhooks.render:3: instruction limit of 200000 exceeded")) << server_->Log();
  ExpectServing();
}

TEST_F(WebhooksLua, MemoryBombFallsBackToTheBuiltInBody) {
  LoopbackHttpServer receiver([](const PeerRequest&) { return Ok(); });
  receiver_ = &receiver;
  StartServer(Plugins("", WriteScript("render.lua",
                                      "function render()\n"
                                      "  local hoard, chunk = {}, string.rep('x', 4096)\n"
                                      "  for i = 1, 1e9 do hoard[i] = chunk .. i end\n"
                                      "  return 'never'\n"
                                      "end\n"),
                      100000000, 4 * 1024 * 1024, 10000));
  const int64_t webhook = CreateWebhook(Body(receiver.url() + "/hook"))["id"];
  const std::string uid = ConfirmNewBooking();
  AwaitDelivery(webhook, "succeeded", 1);
  ExpectBuiltInBody(webhook, uid);
  EXPECT_EQ(Metric("lua_errors_total{kind=\"memory\",script=\"webhooks.render\"}"), 1);
  ExpectServing();
}

// A pattern that backtracks for seconds runs inside one C function, where no instruction is
// counted: the time limit (50 ms by default) stops it, and the delivery goes out with the built-in
// body at once instead of holding the delivery thread.
TEST_F(WebhooksLua, PathologicalPatternFallsBackWithinTheTimeLimit) {
  LoopbackHttpServer receiver([](const PeerRequest&) { return Ok(); });
  receiver_ = &receiver;
  StartServer(Plugins("", WriteScript("render.lua",
                                      "function render()\n"
                                      "  local subject = string.rep('a', 480)\n"
                                      "  return tostring(string.find(subject, '.-.-.-b'))\n"
                                      "end\n"),
                      1000000000));
  const int64_t webhook = CreateWebhook(Body(receiver.url() + "/hook"))["id"];
  const auto start = std::chrono::steady_clock::now();
  const std::string uid = ConfirmNewBooking();
  AwaitDelivery(webhook, "succeeded", 1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  ExpectBuiltInBody(webhook, uid);
  EXPECT_EQ(Metric("lua_errors_total{kind=\"time\",script=\"webhooks.render\"}"), 1);
  EXPECT_TRUE(server_->AwaitLog("webhooks.render:3: time limit of 50 ms exceeded")) << server_->Log();
  ExpectServing();
}

// Each booking's attendee name picks one way out of the sandbox; every one is refused, so the
// render fails and the built-in body is sent.
TEST_F(WebhooksLua, SandboxEscapesAreRefused) {
  const std::string marker = dir_.path() + "/escaped";
  LoopbackHttpServer receiver([](const PeerRequest&) { return Ok(); });
  receiver_ = &receiver;
  StartServer(Plugins(
      "", WriteScript("render.lua",
                      "local MARKER = '" + marker + "'\n"
                      "local tries = {\n"
                      "  ['os.execute'] = function() return os.execute('touch ' .. MARKER) end,\n"
                      "  ['io.open'] = function() return io.open(MARKER, 'w'):write('x') end,\n"
                      "  ['require'] = function() return require('io') end,\n"
                      "  ['string.dump'] = function() return string.dump(function() end) end,\n"
                      "  ['load'] = function() return load('\\27Lua') end,\n"
                      "  ['debug'] = function() return debug.getinfo(1) end,\n"
                      "  ['dofile'] = function() return dofile(MARKER) end,\n"
                      "  ['package'] = function() return package.loadlib('libc.so.6', 'system') end,\n"
                      "  ['gc'] = function() return setmetatable({}, {__gc = function() end}) end,\n"
                      "}\n"
                      "function render(template, event)\n"
                      "  local name = event.payload.attendees[1].name\n"
                      "  tries[name]()\n"
                      "  return 'escaped by ' .. name\n"
                      "end\n")));
  const int64_t webhook = CreateWebhook(Body(receiver.url() + "/hook"))["id"];
  const std::vector<std::string> escapes = {"os.execute", "io.open", "require", "string.dump", "load",
                                            "debug",      "dofile",  "package", "gc"};
  for (size_t i = 0; i < escapes.size(); ++i) {
    const std::string uid = ConfirmNewBooking(escapes[i]);
    AwaitDeliveryCount(webhook, i + 1);
    ExpectBuiltInBody(webhook, uid);
  }
  EXPECT_EQ(Metric("lua_errors_total{kind=\"runtime\",script=\"webhooks.render\"}"),
            static_cast<double>(escapes.size()));
  EXPECT_FALSE(std::filesystem::exists(marker));
  EXPECT_TRUE(server_->AwaitLog("webhooks.render:3:")) << "the failing line is logged";
  EXPECT_EQ(server_->Log().find("escaped by"), std::string::npos);
  ASSERT_TRUE(receiver.AwaitRequests(escapes.size()));
  ExpectServing();
}

// A body the database could not store (and a receiver could not read) is not sent: the built-in
// one is, and the events after it are not held up.
TEST_F(WebhooksLua, RenderAnsweringInvalidUtf8FallsBackToTheBuiltInBody) {
  LoopbackHttpServer receiver([](const PeerRequest&) { return Ok(); });
  receiver_ = &receiver;
  StartServer(
      Plugins("", WriteScript("render.lua",
                              "function render(template, event)\n"
                              "  if event.payload.attendees[1].name == 'Fine' then return 'fine body' end\n"
                              "  return 'caf\\195 \\255\\254 ' .. string.rep('\\233', 3)\n"
                              "end\n")));
  const int64_t webhook = CreateWebhook(Body(receiver.url() + "/hook"))["id"];
  const std::string uid = ConfirmNewBooking("Broken");
  AwaitDelivery(webhook, "succeeded", 1);
  ExpectBuiltInBody(webhook, uid);
  EXPECT_TRUE(server_->AwaitLog("not valid UTF-8")) << server_->Log();
  EXPECT_EQ(Metric("lua_errors_total{kind=\"runtime\",script=\"webhooks.render\"}"), 1)
      << "an unusable answer counts as a failed call";
  ConfirmNewBooking("Fine");
  AwaitDeliveryCount(webhook, 2);
  EXPECT_EQ(NewestBody(webhook), std::make_pair(std::string("fine body"), std::string("text/plain")));
  ASSERT_TRUE(receiver.AwaitRequests(2));
  EXPECT_EQ(Metric("lua_errors_total{kind=\"runtime\",script=\"webhooks.render\"}"), 1);
  ExpectServing();
}

// Render scripts that run away where the instruction count does not look: a message handler that
// loops (Lua runs it after the hook's error, with hooks off) and a sort of a large table (one C
// call). Each render ends at the time limit and its delivery goes out with the built-in body;
// another user's delivery, made right after, is not held up by more than a second.
const char* kRunawayRender =
    "local function spin() while true do end end\n"
    "function render(template, event, webhook)\n"
    "  local name = event.payload.attendees[1].name\n"
    "  if name == 'Handler' then return select(2, xpcall(function() error('x') end, spin)) end\n"
    "  if name == 'Sort' then\n"
    "    local t = table.pack(string.byte(string.rep('zyxwvutsrq', 24000), 1, -1))\n"
    "    while true do table.sort(t) end\n"
    "  end\n"
    "  return 'fine ' .. name\n"
    "end\n";

TEST_F(WebhooksLua, RunawayHandlersAndSortsDoNotHoldUpAnotherUsersDelivery) {
  LoopbackHttpServer owners([](const PeerRequest&) { return Ok(); });
  LoopbackHttpServer others([](const PeerRequest&) { return Ok(); });
  StartServer(Plugins("", WriteScript("render.lua", kRunawayRender), 1000000000, 16 * 1024 * 1024));
  constexpr int kOwnerWebhooks = 3;
  for (int i = 0; i < kOwnerWebhooks; ++i) CreateWebhook(Body(owners.url() + "/owner" + std::to_string(i)));
  CreateWebhook(Body(others.url() + "/other"), other_key_);
  HttpResult type = Call("POST", "/v2/event-types", other_key_,
                         json{{"title", "Other"}, {"slug", "other"}, {"lengthInMinutes", 30}});
  ASSERT_EQ(type.status, 201) << type.body;
  const int64_t others_type = type.Json()["data"]["id"].get<int64_t>();

  // Confirms a booking of the other user; answers the time from its commit to its delivery.
  size_t others_bookings = 0;
  auto others_delivery = [&] {
    ++others_bookings;
    const std::string start = "2030-04-0" + std::to_string(others_bookings) + "T10:00:00Z";
    const std::string uid =
        Import(other_, others_type, start, "pending", "fine@example.com", "Fine").value("uid", "");
    const auto confirmed = std::chrono::steady_clock::now();
    EXPECT_EQ(Call("POST", "/v2/bookings/" + uid + "/confirm", other_key_, std::string("{}")).status, 200);
    EXPECT_TRUE(others.AwaitRequests(others_bookings, std::chrono::seconds(30)));
    return std::chrono::steady_clock::now() - confirmed;
  };
  const auto baseline = others_delivery();
  size_t owner_deliveries = 0;
  for (const char* hostile : {"Handler", "Sort"}) {
    ConfirmNewBooking(hostile);
    const auto delay = others_delivery();
    EXPECT_LT(delay, baseline + std::chrono::seconds(1))
        << hostile << ": " << std::chrono::duration_cast<std::chrono::milliseconds>(delay).count()
        << " ms against " << std::chrono::duration_cast<std::chrono::milliseconds>(baseline).count() << " ms";
    owner_deliveries += kOwnerWebhooks;
    EXPECT_TRUE(owners.AwaitRequests(owner_deliveries, std::chrono::seconds(30))) << hostile;
  }
  for (const PeerRequest& r : owners.Requests()) {
    const json body = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(body.is_object()) << "the built-in body: " << r.body;
    EXPECT_EQ(body["triggerEvent"], "BOOKING_CONFIRMED");
  }
  for (const PeerRequest& r : others.Requests()) EXPECT_EQ(r.body, "fine Fine");
  EXPECT_EQ(Metric("lua_errors_total{kind=\"time\",script=\"webhooks.render\"}"), 2 * kOwnerWebhooks);
  EXPECT_TRUE(server_->AwaitLog("time limit of 50 ms exceeded")) << server_->Log();
  // Every render, the runaway ones included, ended within the limit plus 200 ms (the histogram's
  // bucket of 250 ms; the margin is for a loaded machine).
  const double renders = Metric("lua_call_duration_seconds_count{script=\"webhooks.render\"}");
  EXPECT_GE(renders, 2 * kOwnerWebhooks + 3);
  EXPECT_EQ(Metric("lua_call_duration_seconds_bucket{script=\"webhooks.render\",le=\"0.25\"}"), renders);
  ExpectServing();
}

// `lua check` runs the same sandbox: the looping handler and the sort end at the time limit with
// an error naming it. The margin over a trivial script's check covers the command's start on a
// loaded machine; the runtime's unit tests hold the call itself to the limit plus 150 ms.
TEST_F(WebhooksLua, LuaCheckEndsRunawayHandlersAndSortsAtTheTimeLimit) {
  TestServerOptions o;
  o.plugins = Plugins("", "", 1000000000, 16 * 1024 * 1024);
  server_ = std::make_unique<TestServer>(db_.name(), o);
  const std::string script = WriteScript("render.lua", kRunawayRender);
  auto check = [&](const std::string& name, CliResult& r) {
    const std::string event = WriteScript(
        "event-" + name + ".json",
        R"({"triggerEvent":"BOOKING_CREATED","payload":{"attendees":[{"name":")" + name + R"("}]}})");
    const auto started = std::chrono::steady_clock::now();
    r = server_->Cli({"lua", "check", "--hook", "render", "--script", script, "--event", event});
    return std::chrono::steady_clock::now() - started;
  };
  CliResult r;
  const auto baseline = check("Quick", r);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.Json()["result"], "fine Quick") << r.out;
  for (const char* hostile : {"Handler", "Sort"}) {
    const auto elapsed = check(hostile, r);
    EXPECT_EQ(r.exit_code, 1) << hostile << ": " << r.out;
    EXPECT_NE(r.err.find("time limit of 50 ms exceeded"), std::string::npos) << hostile << ": " << r.err;
    EXPECT_NE(r.err.find("webhooks.render:"), std::string::npos) << r.err;
    EXPECT_LT(elapsed, baseline + std::chrono::milliseconds(50 + 400))
        << hostile << ": " << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()
        << " ms against " << std::chrono::duration_cast<std::chrono::milliseconds>(baseline).count() << " ms";
  }
}

TEST_F(WebhooksLua, SighupReloadsAndABrokenScriptLeavesThePreviousInForce) {
  LoopbackHttpServer receiver([](const PeerRequest&) { return Ok(); });
  receiver_ = &receiver;
  const std::string render = WriteScript("render.lua", "function render() return 'version one' end\n");
  StartServer(Plugins("", render));
  const int64_t webhook = CreateWebhook(Body(receiver.url() + "/hook"))["id"];
  ConfirmNewBooking();
  AwaitDeliveryCount(webhook, 1);
  EXPECT_EQ(NewestBody(webhook), std::make_pair(std::string("version one"), std::string("text/plain")));

  WriteScript("render.lua", "function render() return '{\"version\":2}' end\n");
  ASSERT_EQ(::kill(server_->pid(), SIGHUP), 0);
  ASSERT_TRUE(server_->AwaitLog("lua script reloaded")) << server_->Log();
  ConfirmNewBooking();
  AwaitDeliveryCount(webhook, 2);
  EXPECT_EQ(NewestBody(webhook), std::make_pair(std::string("{\"version\":2}"), std::string("application/json")));

  // Imported first: with a broken script on disk, commands that read the config refuse to run.
  const std::string pending = Import(owner_, event_type_, "2030-03-01T10:00:00Z", "pending").value("uid", "");
  WriteScript("render.lua", "function render()\n  return 'version three'\nend end\n");
  ASSERT_EQ(::kill(server_->pid(), SIGHUP), 0);
  ASSERT_TRUE(server_->AwaitLog("lua script reload failed")) << server_->Log();
  EXPECT_NE(server_->Log().find("webhooks.render:3:"), std::string::npos) << "the reload error names the line";
  EXPECT_EQ(Call("POST", "/v2/bookings/" + pending + "/confirm", owner_key_, std::string("{}")).status, 200);
  AwaitDeliveryCount(webhook, 3);
  EXPECT_EQ(NewestBody(webhook).first, "{\"version\":2}");
  EXPECT_EQ(Metric("lua_reloads_total{result=\"error\",script=\"webhooks.render\"}"), 1);
  ExpectServing();
}

TEST_F(WebhooksLua, ScriptThatIsMissingOrDoesNotCompileStopsTheStart) {
  const std::string filter = WriteScript("filter.lua", "function should_deliver() return true end\n");
  TestServerOptions o;
  o.plugins = Plugins(filter, "");
  server_ = std::make_unique<TestServer>(db_.name(), o);
  server_->Migrate();

  WriteScript("filter.lua", "function should_deliver()\n  return = true\nend\n");
  std::string why;
  EXPECT_FALSE(server_->Start(&why));
  EXPECT_NE(why.find(filter), std::string::npos) << why;
  EXPECT_NE(why.find("webhooks.filter:2:"), std::string::npos) << why;

  std::filesystem::remove(filter);
  auto missing = std::make_unique<TestServer>(db_.name(), o);
  why.clear();
  EXPECT_FALSE(missing->Start(&why));
  EXPECT_NE(why.find(filter), std::string::npos) << why;
  EXPECT_NE(why.find("plugins.webhooks.scripts"), std::string::npos) << why;
}

TEST_F(WebhooksLua, LuaCheckRunsOneHookUnderTheConfiguredLimits) {
  // A generous instruction budget, so that the runaway loop meets the time limit.
  TestServerOptions o;
  o.plugins = Plugins("", "", 1000000000, 4 * 1024 * 1024, 200);
  server_ = std::make_unique<TestServer>(db_.name(), o);

  // The shipped Slack render on the sample event, and on a given one.
  CliResult r = server_->Cli({"lua", "check", "--hook", "render", "--script", SourceDir() + "/scripts/webhooks/slack.lua"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json out = r.Json();
  EXPECT_EQ(out["ok"], true) << r.out;
  ASSERT_TRUE(out["result"].is_string()) << r.out;
  EXPECT_TRUE(json::parse(out["result"].get<std::string>(), nullptr, false).is_object()) << r.out;
  EXPECT_GT(out["instructions"].get<int64_t>(), 0) << r.out;
  EXPECT_GT(out["memoryBytes"].get<int64_t>(), 0) << r.out;
  EXPECT_GE(out["durationMicros"].get<int64_t>(), 0) << r.out;

  const std::string filter = WriteScript(
      "check_filter.lua", "function should_deliver(event, webhook)\n"
                          "  return event.payload.attendees[1].name == 'Zed' and webhook.id == 7\nend\n");
  const std::string event = WriteScript(
      "event.json", R"({"triggerEvent":"BOOKING_CREATED","createdAt":"2030-01-01T00:00:00Z","payload":{"attendees":[{"name":"Zed"}]}})");
  const std::string webhook = WriteScript("webhook.json", R"({"id":7,"userId":1,"triggers":[]})");
  r = server_->Cli({"lua", "check", "--hook", "filter", "--script", filter});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.Json()["result"], false) << r.out;
  r = server_->Cli({"lua", "check", "--hook", "filter", "--script", filter, "--event", event, "--webhook", webhook});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.Json()["result"], true) << r.out;

  // A runaway loop: cut at the configured time limit, named with its line.
  const std::string loop = WriteScript("loop.lua", "function should_deliver()\n  while true do end\nend\n");
  const auto started = std::chrono::steady_clock::now();
  r = server_->Cli({"lua", "check", "--hook", "filter", "--script", loop});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
  EXPECT_NE(r.err.find("time limit of 200 ms exceeded"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("webhooks.filter:2:"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;

  // A syntax error: its line.
  const std::string broken = WriteScript("broken.lua", "function render()\n  return = 1\nend\n");
  r = server_->Cli({"lua", "check", "--hook", "render", "--script", broken});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("webhooks.render:2:"), std::string::npos) << r.err;

  // Bad invocations.
  EXPECT_EQ(server_->Cli({"lua", "check", "--hook", "other", "--script", filter}).exit_code, 2);
  EXPECT_EQ(server_->Cli({"lua", "check", "--hook", "filter"}).exit_code, 2);
  EXPECT_EQ(server_->Cli({"lua", "check", "--hook", "filter", "--script", filter, "--event", broken}).exit_code, 2);
}

// `lua check` is the webhooks plugin's command: with the plugin disabled there is none, and the
// host says so without running anything.
TEST_F(WebhooksLua, LuaCheckIsTheWebhooksPluginsCommand) {
  TestServerOptions o;
  o.plugins = "webhooks:\n  enabled: false\n";
  server_ = std::make_unique<TestServer>(db_.name(), o);
  const std::string filter = WriteScript("plain_filter.lua", "function should_deliver() return true end\n");
  CliResult r = server_->Cli({"lua", "check", "--hook", "filter", "--script", filter});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("unknown command 'lua' (is its plugin enabled?)"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace
}  // namespace rendezvous::testing
