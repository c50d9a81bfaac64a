// The operator's Lua hooks on webhook deliveries (DESIGN §6, §8 `plugins.webhooks.scripts`, §9):
//
// - the filter script's `should_deliver(event, webhook) -> boolean` decides, per event and
//   subscribed webhook, whether a delivery exists at all (run by the sender before the first
//   attempt: DeliveryQueue);
// - the render script's `render(template, event, webhook) -> string` makes the body; `template`
//   is the webhook's payloadTemplate or nil.
//
// Values: event = {triggerEvent, createdAt, payload}; webhook = {id, userId, subscriberUrl,
// triggers, active, payloadTemplate}, and eventTypeId for an event type's webhook — never the
// secret.
//
// Every failure falls back to the built-in behaviour: deliver, and render the template (or the
// event) as TemplateRenderer does. An error or a limit overrun is logged with the script's line
// and counted by the runtime (lua_errors_total); a result of the wrong type (a filter answering
// something other than a boolean, a render answering something other than a string or nil, or a
// string that is not well-formed UTF-8) is handed to Script::Unusable: logged at Warn and counted
// as a runtime error in lua_errors_total too. A script without the function is not an error: that
// hook is simply off.
//
// The scripts are owned by the core runtime, which reloads them on SIGHUP (a script that no
// longer compiles leaves the previous version in force), so a ScriptHooks object never changes.
// All calls are thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "rendezvous/log.hpp"
#include "rendezvous/scripting.hpp"
#include "rendezvous/status.hpp"
#include "template_renderer.hpp"
#include "webhook_store.hpp"

namespace rendezvous::webhooks {

// The names the scripts carry in logs and in the runtime's metrics (label `script`).
inline constexpr const char* kFilterScriptName = "webhooks.filter";
inline constexpr const char* kRenderScriptName = "webhooks.render";

class ScriptHooks {
 public:
  // No scripts: the built-in behaviour throughout.
  ScriptHooks() = default;
  // Either script may be null. `logger` must outlive this object.
  ScriptHooks(std::shared_ptr<Script> filter, std::shared_ptr<Script> render, Logger* logger);

  // Loads the scripts at `filter_path` and `render_path` (absolute; "" for none) through
  // `runtime`. Errors name the file and, for a script that does not compile or whose top level
  // fails, the line ("webhooks.filter:3: ...").
  static Result<ScriptHooks> Load(ScriptRuntime& runtime, Logger& logger, const std::string& filter_path,
                                  const std::string& render_path, const LuaLimits& limits);

  bool has_filter() const { return filter_ != nullptr; }
  bool has_render() const { return render_ != nullptr; }

  // The event value the hooks see, from an outbox event's payload ({triggerEvent, createdAt,
  // payload}; other members are left out).
  static nlohmann::json EventValue(const nlohmann::json& outbox_payload);
  // The webhook value the hooks see (no secret).
  static nlohmann::json WebhookValue(const Webhook& webhook);

  // The arguments of one delivery's hook calls. Built once per event and reused for each of its
  // webhooks (only `webhook` changes). The event value is the outbox payload itself when that
  // holds nothing but the event's members (as the bookings plugin writes it), read in place by
  // the calls; otherwise EventValue's copy. The payload must outlive the Args.
  class Args {
   public:
    explicit Args(const nlohmann::json& outbox_payload, nlohmann::json webhook_value = nlohmann::json());
    const nlohmann::json& event() const { return filtered_ ? *filtered_ : *outbox_; }
    nlohmann::json webhook;  // WebhookValue

   private:
    const nlohmann::json* outbox_;
    std::optional<nlohmann::json> filtered_;
  };

  // True without a filter.
  bool ShouldDeliver(const Args& args) const;
  // The script's body, or nullopt for the built-in rendering (no render script, nil, an error or
  // a result that is not a string or not well-formed UTF-8).
  std::optional<std::string> Render(const std::optional<std::string>& tmpl, const Args& args) const;

  // The delivery's body: the render hook's (cut at `max_bytes` on a character boundary, typed as
  // templates are), else RenderBody over the outbox payload (cut at `max_bytes` too).
  RenderedBody Body(const Webhook& webhook, const nlohmann::json& outbox_payload, const Args& args,
                    size_t max_bytes = kMaxRenderedBytes) const;

 private:
  static Result<nlohmann::json> CallWith(Script& script, const char* function, const nlohmann::json* first,
                                         const Args& args);

  std::shared_ptr<Script> filter_;
  std::shared_ptr<Script> render_;
  Logger* logger_ = nullptr;
};

}  // namespace rendezvous::webhooks
