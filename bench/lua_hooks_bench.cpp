// Cost of the webhook Lua hooks per delivery: the shipped filter (both lists filled in) and the
// shipped Slack render over a realistic BOOKING_CONFIRMED event, called as DeliveryQueue::Enqueue
// calls them (hook values built, should_deliver, render, the body typed), one thread, after a
// warm-up. Target: under 20 µs per delivery.
//   lua_hooks_bench [SCRIPTS_DIR] [DELIVERIES]   (default: scripts/webhooks of the source tree, 20000)
// Prints one JSON line.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <prometheus/registry.h>

#include "script_hooks.hpp"
#include "scripting/lua_runtime.hpp"

#ifndef RDV_SOURCE_DIR
#define RDV_SOURCE_DIR "."
#endif

namespace {

using nlohmann::json;
using rendezvous::webhooks::ScriptHooks;

class QuietLogger final : public rendezvous::Logger {
 public:
  void Log(rendezvous::LogLevel, std::string_view, const json&) override {}
  bool Enabled(rendezvous::LogLevel) const override { return false; }
};

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

json Event() {
  const json attendee = {{"name", "Ann \"Q\" Attendée"}, {"email", "ann@example.com"}, {"timeZone", "Europe/Paris"},
                         {"absent", false}, {"language", "fr"}};
  const json host = {{"id", 3}, {"name", "Olga Owner"}, {"email", "owner@example.com"}, {"username", "olga"},
                     {"timeZone", "Europe/Berlin"}};
  const json payload = {{"id", 1234}, {"uid", "b9dcqGz3yQ4Lr1Xwq0pT7a"}, {"title", "Intro between Olga and Ann"},
                        {"description", "Let us talk about the roadmap."}, {"status", "accepted"},
                        {"start", "2030-01-05T10:00:00.000Z"}, {"end", "2030-01-05T10:30:00.000Z"},
                        {"duration", 30}, {"eventTypeId", 17}, {"eventType", {{"id", 17}, {"slug", "intro"}}},
                        {"attendees", {attendee, {{"name", "Bob"}, {"email", "bob@example.org"},
                                                  {"timeZone", "UTC"}, {"absent", false}, {"language", "en"}}}},
                        {"hosts", {host}}, {"organizer", host}, {"guests", json::array({"carl@example.com"})},
                        {"location", "integrations:google:meet"}, {"meetingUrl", "https://meet.example.com/abc"},
                        {"metadata", {{"source", "website"}, {"campaign", "spring"}}},
                        {"bookingFieldsResponses", {{"name", "Ann"}, {"notes", "Bring the slides"}}},
                        {"cancellationReason", nullptr}, {"rescheduledFromUid", nullptr},
                        {"createdAt", "2029-12-20T08:00:00.000Z"}, {"updatedAt", "2029-12-20T08:05:00.000Z"},
                        {"bookingId", 1234}, {"startTime", "2030-01-05T10:00:00.000Z"},
                        {"endTime", "2030-01-05T10:30:00.000Z"}, {"type", "intro"},
                        {"eventTitle", "Intro"}, {"length", 30}};
  return {{"triggerEvent", "BOOKING_CONFIRMED"}, {"createdAt", "2029-12-21T09:00:00.000Z"}, {"payload", payload}};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : RDV_SOURCE_DIR "/scripts/webhooks";
  const long deliveries = argc > 2 ? std::stol(argv[2]) : 20000;

  // The shipped filter with both of its lists in use, as an operator would configure it.
  std::string filter = Read(dir + "/filter.lua");
  const auto fill = [&filter](const std::string& from, const std::string& to) {
    const size_t at = filter.find(from);
    if (at != std::string::npos) filter.replace(at, from.size(), to);
  };
  fill("local TRIGGERS = {}", "local TRIGGERS = {\"BOOKING_CREATED\", \"BOOKING_CONFIRMED\"}");
  fill("local DOMAINS = {}", "local DOMAINS = {\"example.com\", \"example.net\"}");
  const std::string filter_path =
      (std::filesystem::temp_directory_path() / ("lua_hooks_bench_filter_" + std::to_string(::getpid()) + ".lua"))
          .string();
  std::ofstream(filter_path, std::ios::binary | std::ios::trunc) << filter;

  prometheus::Registry registry;
  QuietLogger logger;
  rendezvous::core::LuaRuntime runtime(registry, logger);
  auto hooks = ScriptHooks::Load(runtime, logger, filter_path, dir + "/slack.lua", rendezvous::LuaLimits{});
  std::filesystem::remove(filter_path);
  if (!hooks.ok()) {
    std::cerr << "lua_hooks_bench: " << hooks.status().message() << "\n";
    return 2;
  }

  const json outbox_payload = Event();
  rendezvous::webhooks::Webhook webhook;
  webhook.id = 7;
  webhook.user_id = 3;
  webhook.subscriber_url = "https://hooks.slack.example.com/services/T000/B000/XXXX";
  webhook.triggers = {"BOOKING_CREATED", "BOOKING_CONFIRMED", "BOOKING_CANCELLED"};

  size_t delivered = 0, bytes = 0;
  auto one = [&] {
    ScriptHooks::Args args(outbox_payload, ScriptHooks::WebhookValue(webhook));
    if (!hooks->ShouldDeliver(args)) return;
    rendezvous::webhooks::RenderedBody body = hooks->Body(webhook, outbox_payload, args);
    bytes += body.body.size();
    delivered += body.content_type == "application/json" && body.body.rfind("{\"text\":", 0) == 0 ? 1 : 0;
  };
  for (int i = 0; i < 1000; ++i) one();
  delivered = 0;
  bytes = 0;

  std::vector<double> us;
  us.reserve(static_cast<size_t>(deliveries));
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < deliveries; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    one();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::sort(us.begin(), us.end());
  const auto pct = [&us](double p) {
    return us.empty() ? 0.0 : us[static_cast<size_t>(p * (us.size() - 1))];
  };
  const json out = {{"deliveries", deliveries},
                    {"rendered_by_script", delivered},
                    {"seconds", seconds},
                    {"per_second", static_cast<double>(deliveries) / seconds},
                    {"mean_us", seconds * 1e6 / static_cast<double>(deliveries)},
                    {"p50_us", pct(0.50)},
                    {"p99_us", pct(0.99)},
                    {"body_bytes", deliveries > 0 ? bytes / static_cast<size_t>(deliveries) : 0}};
  std::cout << out.dump() << std::endl;
  return delivered == static_cast<size_t>(deliveries) ? 0 : 1;
}
