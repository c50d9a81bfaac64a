#include "script_hooks.hpp"

#include <span>
#include <utility>

#include "rendezvous/text.hpp"

namespace rendezvous::webhooks {
namespace {

using Json = nlohmann::json;

constexpr const char* kFilterFunction = "should_deliver";
constexpr const char* kRenderFunction = "render";

Result<std::shared_ptr<Script>> LoadOne(ScriptRuntime& runtime, const char* name, const std::string& path,
                                        const LuaLimits& limits) {
  if (path.empty()) return std::shared_ptr<Script>();
  Result<std::shared_ptr<Script>> loaded = runtime.Load(name, path, limits);
  if (!loaded.ok()) return Status(loaded.status().code(), "'" + path + "': " + loaded.status().message());
  return loaded;
}

}  // namespace

ScriptHooks::ScriptHooks(std::shared_ptr<Script> filter, std::shared_ptr<Script> render, Logger* logger)
    : filter_(std::move(filter)), render_(std::move(render)), logger_(logger) {}

Result<ScriptHooks> ScriptHooks::Load(ScriptRuntime& runtime, Logger& logger, const std::string& filter_path,
                                      const std::string& render_path, const LuaLimits& limits) {
  Result<std::shared_ptr<Script>> filter = LoadOne(runtime, kFilterScriptName, filter_path, limits);
  if (!filter.ok()) return filter.status();
  Result<std::shared_ptr<Script>> render = LoadOne(runtime, kRenderScriptName, render_path, limits);
  if (!render.ok()) return render.status();
  return ScriptHooks(std::move(filter).value(), std::move(render).value(), &logger);
}

namespace {

constexpr const char* kEventMembers[] = {"triggerEvent", "createdAt", "payload"};

bool IsEventValue(const Json& outbox_payload) {
  if (!outbox_payload.is_object()) return false;
  for (auto it = outbox_payload.begin(); it != outbox_payload.end(); ++it) {
    const std::string& key = it.key();
    if (key != kEventMembers[0] && key != kEventMembers[1] && key != kEventMembers[2]) return false;
  }
  return true;
}

}  // namespace

Json ScriptHooks::EventValue(const Json& outbox_payload) {
  Json event = Json::object();
  if (!outbox_payload.is_object()) return event;
  for (const char* key : kEventMembers) {
    auto it = outbox_payload.find(key);
    if (it != outbox_payload.end()) event[key] = *it;
  }
  return event;
}

ScriptHooks::Args::Args(const Json& outbox_payload, Json webhook_value)
    : webhook(std::move(webhook_value)), outbox_(&outbox_payload) {
  if (!IsEventValue(outbox_payload)) filtered_ = EventValue(outbox_payload);
}

// Built member by member: an initializer list would copy every value once more.
Json ScriptHooks::WebhookValue(const Webhook& w) {
  Json value(Json::value_t::object);
  Json::object_t& members = *value.get_ptr<Json::object_t*>();
  members.emplace("id", w.id);
  members.emplace("userId", w.user_id);
  members.emplace("subscriberUrl", w.subscriber_url);
  Json& triggers = members.emplace("triggers", Json::value_t::array).first->second;
  triggers.get_ptr<Json::array_t*>()->assign(w.triggers.begin(), w.triggers.end());
  members.emplace("active", w.active);
  members.emplace("payloadTemplate", w.payload_template ? Json(*w.payload_template) : Json());
  if (w.event_type_id) members.emplace("eventTypeId", *w.event_type_id);
  return value;
}

// Calls `function` with the arguments read in place: the (large) event value is never copied.
Result<Json> ScriptHooks::CallWith(Script& script, const char* function, const Json* first, const Args& args) {
  const Json* values[] = {first, &args.event(), &args.webhook};
  std::span<const Json* const> in_place(values);
  return script.CallInPlace(function, first != nullptr ? in_place : in_place.subspan(1));
}

bool ScriptHooks::ShouldDeliver(const Args& args) const {
  if (!filter_ || !filter_->HasFunction(kFilterFunction)) return true;
  Result<Json> answer = CallWith(*filter_, kFilterFunction, nullptr, args);
  if (!answer.ok()) return true;  // logged and counted by the runtime
  if (answer->is_boolean()) return answer->get<bool>();
  filter_->Unusable(kFilterFunction, std::string("answered a value that is not a boolean (") +
                                         answer->type_name() + "); delivering");
  return true;
}

std::optional<std::string> ScriptHooks::Render(const std::optional<std::string>& tmpl, const Args& args) const {
  if (!render_ || !render_->HasFunction(kRenderFunction)) return std::nullopt;
  const Json template_value = tmpl ? Json(*tmpl) : Json();
  Result<Json> answer = CallWith(*render_, kRenderFunction, &template_value, args);
  if (!answer.ok()) return std::nullopt;  // logged and counted by the runtime
  if (answer->is_string()) {
    std::string body = std::move(answer->get_ref<std::string&>());
    if (text::IsValidUtf8(body)) return body;
    // A body the database cannot store and a receiver cannot read: the built-in one instead.
    render_->Unusable(kRenderFunction, "answered text that is not valid UTF-8; using the built-in rendering");
    return std::nullopt;
  }
  if (!answer->is_null()) {
    render_->Unusable(kRenderFunction, std::string("answered a value that is not a string (") +
                                           answer->type_name() + "); using the built-in rendering");
  }
  return std::nullopt;
}

RenderedBody ScriptHooks::Body(const Webhook& webhook, const Json& outbox_payload, const Args& args,
                               size_t max_bytes) const {
  if (std::optional<std::string> rendered = Render(webhook.payload_template, args)) {
    return TypedBody(std::move(*rendered), max_bytes);
  }
  return RenderBody(webhook.payload_template, outbox_payload, max_bytes);
}

}  // namespace rendezvous::webhooks
