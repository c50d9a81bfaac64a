#include "script_hooks.hpp"

#include <utility>
#include <vector>

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

Json ScriptHooks::EventValue(const Json& outbox_payload) {
  Json event = Json::object();
  if (!outbox_payload.is_object()) return event;
  for (const char* key : {"triggerEvent", "createdAt", "payload"}) {
    auto it = outbox_payload.find(key);
    if (it != outbox_payload.end()) event[key] = *it;
  }
  return event;
}

Json ScriptHooks::WebhookValue(const Webhook& w) {
  return Json{{"id", w.id},
              {"userId", w.user_id},
              {"subscriberUrl", w.subscriber_url},
              {"triggers", w.triggers},
              {"active", w.active},
              {"payloadTemplate", w.payload_template ? Json(*w.payload_template) : Json()}};
}

// Calls `function` with the arguments, moving the (large) event value into the call and back
// rather than copying it.
Result<Json> ScriptHooks::CallWith(Script& script, const char* function, std::optional<Json> first, Args& args) {
  std::vector<Json> values;
  values.reserve(3);
  if (first) values.push_back(std::move(*first));
  values.push_back(std::move(args.event));
  values.push_back(std::move(args.webhook));
  Result<Json> answer = script.Call(function, values);
  args.webhook = std::move(values.back());
  values.pop_back();
  args.event = std::move(values.back());
  return answer;
}

bool ScriptHooks::ShouldDeliver(Args& args) const {
  if (!filter_ || !filter_->HasFunction(kFilterFunction)) return true;
  Result<Json> answer = CallWith(*filter_, kFilterFunction, std::nullopt, args);
  if (!answer.ok()) return true;  // logged and counted by the runtime
  if (answer->is_boolean()) return answer->get<bool>();
  if (logger_ != nullptr) {
    logger_->Warn("lua hook answered a value that is not a boolean; delivering",
                  {{"script", filter_->name()}, {"function", kFilterFunction}, {"type", answer->type_name()}});
  }
  return true;
}

std::optional<std::string> ScriptHooks::Render(const std::optional<std::string>& tmpl, Args& args) const {
  if (!render_ || !render_->HasFunction(kRenderFunction)) return std::nullopt;
  Result<Json> answer = CallWith(*render_, kRenderFunction, tmpl ? Json(*tmpl) : Json(), args);
  if (!answer.ok()) return std::nullopt;  // logged and counted by the runtime
  if (answer->is_string()) return std::move(answer).value().get<std::string>();
  if (!answer->is_null() && logger_ != nullptr) {
    logger_->Warn("lua hook answered a value that is not a string; using the built-in rendering",
                  {{"script", render_->name()}, {"function", kRenderFunction}, {"type", answer->type_name()}});
  }
  return std::nullopt;
}

RenderedBody ScriptHooks::Body(const Webhook& webhook, const Json& outbox_payload, Args& args) const {
  if (std::optional<std::string> rendered = Render(webhook.payload_template, args)) {
    return TypedBody(std::move(*rendered));
  }
  return RenderBody(webhook.payload_template, outbox_payload);
}

}  // namespace rendezvous::webhooks
