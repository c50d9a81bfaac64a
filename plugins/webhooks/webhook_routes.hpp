// The webhook API (spec §4.6, §4.7, §5.1; DESIGN §9): create, update, list, get and delete
// subscriptions, the delivery log and a manual retry. API keys only; a caller sees only their own
// webhooks (another user's id answers 404). DESIGN §6 adds: the same five routes for an event
// type's webhooks under /v2/event-types/{eventTypeId}/webhooks (another user's event type: 404);
// a ping, sent at once, signed like a delivery and logged with trigger PING; a secret rotation
// with a grace period; and the recovery of a window's failed deliveries. The delivery log, retry,
// ping, rotation and recovery routes under /v2/webhooks/{id} serve every level. DESIGN §10 adds
// DELETE /v2/event-types/{eventTypeId}/webhooks: all that event type's webhooks. The routes call
// the service layer the webhook pages call too (WebhookService).
#pragma once

#include <functional>
#include <memory>

#include "client_link.hpp"
#include "delivery_queue.hpp"
#include "rendezvous/plugin.hpp"
#include "webhook_service.hpp"
#include "webhook_store.hpp"

namespace rendezvous::webhooks {

struct RouteOptions {
  std::function<void()> wake_sender;      // a recovery made deliveries due
  int64_t retention_seconds = 2592000;    // the delivery log's: a recovery reaches no further back
  int64_t secret_rotation_grace = 86400;  // seconds, when a rotation names none
};

void RegisterWebhookRoutes(PluginContext& ctx, const std::shared_ptr<WebhookService>& service,
                           const std::shared_ptr<WebhookStore>& webhooks,
                           const std::shared_ptr<DeliveryQueue>& deliveries, const RouteOptions& options);

// Cal.com's OAuth-client webhooks (DESIGN §10): create, list, get, update, delete and delete all
// under /v2/oauth-clients/{clientId}/webhooks, authenticated by the client's own credentials
// (PlatformClients::Authenticate: 401, 403), the same bodies as a user's webhooks plus
// oAuthClientId. They are the client owner's webhooks of the client's level: the delivery log,
// retry, ping, rotation and recovery routes under /v2/webhooks/{id} serve them to the owner.
void RegisterClientWebhookRoutes(PluginContext& ctx, const std::shared_ptr<WebhookService>& service,
                                 const std::shared_ptr<ClientLink>& link);

}  // namespace rendezvous::webhooks
