// The webhooks plugin's wiring (DESIGN §4, §6, §8): config, the subscription store, the service
// layer behind its API routes and its pages for people, the delivery queue fed by an outbox
// consumer on topic "bookings", the sender and its metrics. Booking events reach it only through
// the outbox, so it starts whether or not the bookings plugin is enabled; event types, for their
// webhooks, come from the bookings plugin's "bookings.event_types" when it is (without it, no event
// type exists). The plugin's command `lua check` runs one hook from the command line.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "client_link.hpp"
#include "delivery_queue.hpp"
#include "delivery_sender.hpp"
#include "lua_check_command.hpp"
#include "rendezvous/contracts/event_types.hpp"
#include "rendezvous/contracts/platform_clients.hpp"
#include "rendezvous/plugin.hpp"
#include "rendezvous/time.hpp"
#include "retry_policy.hpp"
#include "script_hooks.hpp"
#include "webhook_fields.hpp"
#include "webhook_metrics.hpp"
#include "webhook_migrations.hpp"
#include "webhook_pages.hpp"
#include "webhook_routes.hpp"
#include "webhook_service.hpp"
#include "webhook_store.hpp"

#ifndef RDV_VERSION
#define RDV_VERSION "0"
#endif

namespace rendezvous::webhooks {
namespace {

constexpr const char* kConsumer = "webhooks";
constexpr const char* kTopic = "bookings";
// How far the database's clock may be behind this server's for the sender's claims to find new
// deliveries at once whatever happens as they commit (beyond it, within the sender's
// full_claim_interval).
constexpr std::chrono::milliseconds kDueClockMargin{5};

struct WebhooksConfig {
  bool allow_private_networks = false;
  long timeout = 10;
  std::vector<long> retry_schedule;
  long disable_after = 432000;
  long delivery_retention = 2592000;
  long workers = 16;
  long workers_per_host = 8;
  long secret_rotation_grace = 86400;
  long max_event_bytes = 4194304;
  long max_rendered_bytes = 1048576;
  std::string filter_script;
  std::string render_script;
  LuaLimits lua;
};

WebhooksConfig ReadConfig(ConfigNode& c) {
  WebhooksConfig config;
  config.allow_private_networks = c.Bool("allow_private_networks", false);
  config.timeout = c.Int("timeout", 10, 1, 300);
  config.retry_schedule = c.IntList("retry_schedule", {5, 300, 1800, 7200, 18000, 36000}, 1, 7 * 86400);
  if (config.retry_schedule.size() > 20) c.Fail("retry_schedule", "must have at most 20 delays");
  config.disable_after = c.Int("disable_after", 432000, 1, 365L * 86400);
  config.delivery_retention = c.Int("delivery_retention", 2592000, 1, 3650L * 86400);
  config.workers = c.Int("workers", 16, 1, 1024);
  config.workers_per_host = c.Int("workers_per_host", 8, 1, 1024);
  config.secret_rotation_grace = c.Int("secret_rotation_grace", 86400, 0, 604800);
  // At its least, the rows of one user's 100 webhooks fit (kDeliveryRowBytes each).
  config.max_event_bytes = c.Int("max_event_bytes", 4194304, 65536, 1L << 30);
  // One delivery's body: rendered when sent, never stored (a request body of at most 64 MiB).
  config.max_rendered_bytes = c.Int("max_rendered_bytes", 1048576, 1024, 64L << 20);
  ConfigNode scripts = c.Child("scripts");
  config.filter_script = scripts.String("filter", "");
  config.render_script = scripts.String("render", "");
  scripts.RejectUnknown();
  ConfigNode lua = c.Child("lua");
  config.lua.instruction_limit = lua.Int("instruction_limit", 1000000, 1000, 1000000000);
  config.lua.memory_limit_bytes = static_cast<size_t>(lua.Int("memory_limit_bytes", 16777216, 65536, 1073741824));
  config.lua.time_limit_ms = lua.Int("time_limit_ms", 50, 1, 60000);
  lua.RejectUnknown();
  c.RejectUnknown();
  return config;
}

// The Lua hooks, loaded now so that a missing script or one that does not compile stops the start
// with the file and line. The core runtime reloads them on SIGHUP.
ScriptHooks LoadHooks(PluginContext& ctx, const WebhooksConfig& config) {
  auto resolve = [&ctx](const std::string& path) { return path.empty() ? path : ctx.ResolvePath(path); };
  Result<ScriptHooks> hooks = ScriptHooks::Load(ctx.scripts(), ctx.logger(), resolve(config.filter_script),
                                                resolve(config.render_script), config.lua);
  if (!hooks.ok()) ctx.config().Fail("scripts", "cannot load the Lua script " + hooks.status().message());
  return std::move(hooks).value();
}

class WebhooksPlugin final : public Plugin {
 public:
  WebhooksPlugin(PluginContext& ctx, std::shared_ptr<WebhookMetrics> metrics,
                 std::shared_ptr<WebhookStore> webhooks, std::shared_ptr<DeliveryQueue> queue,
                 std::shared_ptr<DeliverySender> sender, std::shared_ptr<ClientLink> clients)
      : ctx_(ctx),
        metrics_(std::move(metrics)),
        clients_(std::move(clients)),
        webhooks_(std::move(webhooks)),
        queue_(std::move(queue)),
        sender_(std::move(sender)) {}

  Status Start() noexcept override {
    try {
      // An event type's webhooks go with it, in its deletion's transaction. The listener holds the
      // store weakly: the store holds the directory.
      if (auto event_types = ctx_.Find<EventTypeDirectory>("bookings.event_types")) {
        webhooks_->AttachEventTypes(event_types);
        event_types->OnDelete([store = std::weak_ptr<WebhookStore>(webhooks_)](DbConnection& tx, int64_t id) {
          if (auto s = store.lock()) s->DeleteOfEventType(tx, id);
        });
      }
      // OAuth clients, for their webhooks, are the oauth plugin's (without it, none exists).
      clients_->Attach(ctx_.Find<PlatformClients>("oauth.platform_clients"));
      sender_->Start();
    } catch (const std::exception& e) {
      return Status(ErrorCode::kInternal, std::string("the webhook sender did not start: ") + e.what());
    }
    return Status::Ok();
  }
  void Stop() noexcept override { sender_->Stop(); }

 private:
  PluginContext& ctx_;
  // Before the sender, which reports to it until it is gone.
  std::shared_ptr<WebhookMetrics> metrics_;
  std::shared_ptr<ClientLink> clients_;
  std::shared_ptr<WebhookStore> webhooks_;
  std::shared_ptr<DeliveryQueue> queue_;
  std::shared_ptr<DeliverySender> sender_;
};

std::unique_ptr<Plugin> Create(PluginContext& ctx) {
  const WebhooksConfig config = ReadConfig(ctx.config());
  ctx.AddCommand("lua", [&scripts = ctx.scripts(), limits = config.lua](
                            const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    return RunLuaCheck(scripts, limits, args, out, err);
  });

  auto webhooks = std::make_shared<WebhookStore>(ctx.db(), ctx.encryption_key());
  QueueOptions queue_options;
  queue_options.max_event_bytes = static_cast<size_t>(config.max_event_bytes);
  queue_options.max_rendered_bytes = static_cast<size_t>(config.max_rendered_bytes);
  queue_options.logger = &ctx.logger();
  auto clients = std::make_shared<ClientLink>();
  queue_options.managing_client = [clients](int64_t user_id) { return clients->ManagingClient(user_id); };
  auto queue = std::make_shared<DeliveryQueue>(*webhooks, LoadHooks(ctx, config), queue_options);

  auto metrics = std::make_shared<WebhookMetrics>(ctx.metrics());

  SenderOptions options;
  options.allow_private_networks = config.allow_private_networks;
  options.timeout = std::chrono::seconds(config.timeout);
  options.retry_schedule = config.retry_schedule;
  options.max_in_flight = static_cast<size_t>(config.workers);
  options.max_per_host = static_cast<size_t>(config.workers_per_host);
  options.disable_after_seconds = config.disable_after;
  options.retention_seconds = config.delivery_retention;
  options.user_agent = std::string("Rendezvous-Webhooks/") + RDV_VERSION;
  SenderHooks hooks;
  hooks.metrics = metrics.get();
  hooks.notify_owner = [&identity = ctx.identity(), &mailer = ctx.mailer(), disable_after = config.disable_after](
                           DbConnection& tx, const Webhook& w) {
    std::optional<User> owner = identity.FindUser(w.user_id);
    if (!owner) return;
    mailer.Send(tx, Mail{owner->email, "Your webhook was turned off",
                         "Every delivery to your webhook " + std::to_string(w.id) + " (" + w.subscriber_url +
                             ") has failed for " + std::to_string(disable_after) +
                             " seconds, so it was set inactive and receives no more events.\n"
                             "Its delivery log shows why. Fix the receiver, then set the webhook active again"
                             " (PATCH /v2/webhooks/" + std::to_string(w.id) + " with {\"active\": true}).\n"});
  };
  auto sender = std::make_shared<DeliverySender>(ctx.db(), *queue, ctx.logger(), options, std::move(hooks));

  ctx.AddMigrations(WebhookMigrations());

  // The sender is woken once the new deliveries have committed (woken earlier, its claim would
  // not see them yet), with the time they are due from: the handler's start by this clock, less
  // kDueClockMargin for the database's (their due time is the database's time of their insert);
  // the earliest such start since the last wake-up, when several transactions committed in
  // between (events handled one by one). A claim that ran while they committed may have skipped
  // some (still locked) and taken later ones; the sender's next claim then starts before them
  // again (DeliverySender::WakeFrom).
  auto created_since = std::make_shared<std::atomic<int64_t>>(0);  // 0: nothing created
  ctx.outbox().Subscribe(
      kConsumer, {kTopic},
      [queue, metrics, created_since](DbConnection& tx, const std::vector<OutboxEvent>& batch) {
        const int64_t started_ms = time::Now();
        const size_t n = queue->Enqueue(tx, batch);
        if (n > 0) {
          metrics->DeliveriesCreated(n);
          int64_t none = 0;
          created_since->compare_exchange_strong(none, started_ms);  // keeps an earlier start
        }
      },
      [sender, created_since] {
        const int64_t since = created_since->exchange(0);
        if (since > 0) sender->WakeFrom(since - kDueClockMargin.count());
      },
      OutboxPayload::kText);  // the routing members are read from the text (DeliveryQueue::Enqueue)
  // A delivery of the built-in body refers to its event's text in the outbox (DeliveryQueue::
  // Enqueue), which keeps it for a delivery's whole life (its retries at their longest) and the
  // delivery log's retention after that, a day to spare. A delivery queued again later takes a copy
  // of the text (Retry, Recover).
  ctx.outbox().KeepEvents(kTopic,
                          std::chrono::seconds(config.delivery_retention +
                                               LongestRetryWaitSeconds(config.retry_schedule) + 86400));
  ServiceOptions service_options;
  service_options.allow_private_networks = config.allow_private_networks;
  service_options.send = options;
  service_options.wake_sender = [weak = std::weak_ptr<DeliverySender>(sender)] {
    if (auto s = weak.lock()) s->Wake();
  };
  auto service =
      std::make_shared<WebhookService>(ctx.db(), *webhooks, *queue, ctx.identity(), service_options);
  RouteOptions route_options;
  route_options.wake_sender = service_options.wake_sender;
  route_options.retention_seconds = config.delivery_retention;
  route_options.secret_rotation_grace = config.secret_rotation_grace;
  RegisterWebhookRoutes(ctx, service, webhooks, queue, route_options);
  RegisterClientWebhookRoutes(ctx, service, clients);
  RegisterWebhookPages(ctx, service);
  return std::make_unique<WebhooksPlugin>(ctx, std::move(metrics), std::move(webhooks), std::move(queue),
                                          std::move(sender), std::move(clients));
}

}  // namespace
}  // namespace rendezvous::webhooks

RENDEZVOUS_DEFINE_PLUGIN("webhooks", &rendezvous::webhooks::Create)
