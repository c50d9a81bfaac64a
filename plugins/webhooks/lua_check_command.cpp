#include "lua_check_command.hpp"

#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "rendezvous/cli_args.hpp"

namespace rendezvous::webhooks {
namespace {

constexpr const char* kUsage =
    "usage: lua check --hook filter|render --script FILE [--event FILE] [--webhook FILE]";

// What the hooks get when no --event or --webhook is given: a booking as the plugin sees one
// (DESIGN §6's default body) and a webhook value without a template.
constexpr const char* kSampleEvent =
    R"({"triggerEvent":"BOOKING_CREATED","createdAt":"2030-01-07T08:00:00.000Z","payload":{
 "id":1,"bookingId":1,"uid":"sample-booking","title":"Intro between Olga Owner and Ann Attendee",
 "description":"","status":"accepted","start":"2030-01-07T09:00:00.000Z","end":"2030-01-07T09:30:00.000Z",
 "startTime":"2030-01-07T09:00:00.000Z","endTime":"2030-01-07T09:30:00.000Z","duration":30,"length":30,
 "eventTypeId":1,"type":"intro","eventTitle":"Intro","location":null,"metadata":{},
 "attendees":[{"name":"Ann Attendee","email":"ann@example.com","timeZone":"Europe/Paris","language":"en"}],
 "hosts":[{"id":1,"name":"Olga Owner","email":"owner@example.com","timeZone":"UTC"}],
 "organizer":{"id":1,"name":"Olga Owner","email":"owner@example.com","timeZone":"UTC"}}})";
constexpr const char* kSampleWebhook =
    R"({"id":1,"userId":1,"subscriberUrl":"https://example.com/hooks","active":true,
 "triggers":["BOOKING_CREATED","BOOKING_CANCELLED"],"payloadTemplate":null})";

// An event or webhook file: read whole up to 16 MiB, a JSON object.
nlohmann::json ReadJsonFile(const std::string& option, const std::string& path) {
  constexpr std::streamsize kMaxBytes = 16 * 1024 * 1024;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("--" + option + ": cannot read '" + path + "'");
  std::string text(static_cast<size_t>(kMaxBytes) + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw std::invalid_argument("--" + option + ": cannot read '" + path + "'");
  if (in.gcount() > kMaxBytes)
    throw std::invalid_argument("--" + option + ": '" + path + "' is larger than 16 MiB");
  text.resize(static_cast<size_t>(in.gcount()));
  nlohmann::json value = nlohmann::json::parse(text, nullptr, false);
  if (value.is_discarded() || !value.is_object())
    throw std::invalid_argument("--" + option + ": '" + path + "' is not a JSON object");
  return value;
}

}  // namespace

int RunLuaCheck(ScriptRuntime& scripts, const LuaLimits& limits, const std::vector<std::string>& args,
                std::ostream& out, std::ostream& err) {
  std::string hook;
  std::string script;
  nlohmann::json event;
  nlohmann::json webhook;
  try {
    CliArgs a(args, {"hook", "script", "event", "webhook"}, {});
    if (a.positional().size() != 1 || a.positional()[0] != "check") throw std::invalid_argument(kUsage);
    hook = a.Get("hook").value_or("");
    if (hook != "filter" && hook != "render") throw std::invalid_argument(kUsage);
    const std::optional<std::string> path = a.Get("script");
    if (!path) throw std::invalid_argument(kUsage);
    script = *path;
    event = a.Get("event") ? ReadJsonFile("event", *a.Get("event")) : nlohmann::json::parse(kSampleEvent);
    webhook =
        a.Get("webhook") ? ReadJsonFile("webhook", *a.Get("webhook")) : nlohmann::json::parse(kSampleWebhook);
  } catch (const std::invalid_argument& e) {
    err << e.what() << std::endl;
    return 2;
  }
  std::vector<nlohmann::json> call_args;
  if (hook == "render")
    call_args.push_back(webhook.contains("payloadTemplate") ? webhook["payloadTemplate"] : nlohmann::json());
  call_args.push_back(std::move(event));
  call_args.push_back(std::move(webhook));
  Result<ScriptCheck> r = scripts.Check(hook == "filter" ? "webhooks.filter" : "webhooks.render", script,
                                        limits, hook == "filter" ? "should_deliver" : "render", call_args);
  if (!r.ok()) {
    err << "lua check failed: " << r.status().message() << std::endl;
    return 1;
  }
  // In the documented order of members.
  out << nlohmann::ordered_json{{"ok", true},
                                {"result", nlohmann::ordered_json::parse(r->result.dump())},
                                {"instructions", r->instructions},
                                {"memoryBytes", r->memory_bytes},
                                {"durationMicros", r->duration_micros}}
             .dump()
      << std::endl;
  return 0;
}

}  // namespace rendezvous::webhooks
