// The webhooks plugin's wiring. Its config is checked here; subscriptions, the delivery engine
// and the Lua hooks are not built yet. Booking events reach it only through the outbox (topic
// "bookings"), so it starts whether or not the bookings plugin is enabled.
#include <memory>
#include <string>
#include <vector>

#include "rendezvous/plugin.hpp"

namespace rendezvous::webhooks {
namespace {

struct WebhooksConfig {
  bool allow_private_networks = false;
  long timeout = 10;
  std::vector<long> retry_schedule;
  long workers = 16;
  std::string filter_script;
  std::string render_script;
  LuaLimits lua;
};

class WebhooksPlugin final : public Plugin {
 public:
  explicit WebhooksPlugin(WebhooksConfig config) : config_(std::move(config)) {}
  Status Start() noexcept override { return Status::Ok(); }
  void Stop() noexcept override {}

 private:
  WebhooksConfig config_;
};

std::unique_ptr<Plugin> Create(PluginContext& ctx) {
  ConfigNode& c = ctx.config();
  WebhooksConfig config;
  config.allow_private_networks = c.Bool("allow_private_networks", false);
  config.timeout = c.Int("timeout", 10, 1, 300);
  config.retry_schedule = c.IntList("retry_schedule", {5, 300, 1800, 7200, 18000, 36000}, 1, 7 * 86400);
  config.workers = c.Int("workers", 16, 1, 1024);
  ConfigNode scripts = c.Child("scripts");
  config.filter_script = scripts.String("filter", "");
  config.render_script = scripts.String("render", "");
  scripts.RejectUnknown();
  ConfigNode lua = c.Child("lua");
  config.lua.instruction_limit = lua.Int("instruction_limit", 1000000, 1000, 1000000000);
  config.lua.memory_limit_bytes =
      static_cast<size_t>(lua.Int("memory_limit_bytes", 16777216, 65536, 1073741824));
  lua.RejectUnknown();
  c.RejectUnknown();
  return std::make_unique<WebhooksPlugin>(std::move(config));
}

}  // namespace
}  // namespace rendezvous::webhooks

RENDEZVOUS_DEFINE_PLUGIN("webhooks", &rendezvous::webhooks::Create)
