// The webhook pages on the app host ({app_url}), DESIGN §4:
//   GET  /settings/developer/webhooks                      the user's webhooks + create form
//   POST /settings/developer/webhooks                      create
//   GET  /settings/developer/webhooks/:id                  deliveries (?skip=N), edit form, delete
//   POST /settings/developer/webhooks/:id                  update
//   POST /settings/developer/webhooks/:id/ping             "Send test event"
//   POST /settings/developer/webhooks/:id/delete           delete (the form's confirm box ticked)
//   POST /settings/developer/webhooks/:id/deliveries/:delivery_id/retry
// Every route needs a session; every POST checks the form's CSRF token first (403, nothing
// changed). Another user's webhook is 404, as in the API. Pages answer with the page headers
// (never cached, never framed). They call the service layer the API calls (WebhookService).
#pragma once

#include <memory>

#include "rendezvous/plugin.hpp"
#include "webhook_service.hpp"

namespace rendezvous::webhooks {

// Registers the routes above (call from the plugin's factory). The handlers are thread-safe.
void RegisterWebhookPages(PluginContext& ctx, std::shared_ptr<WebhookService> service);

}  // namespace rendezvous::webhooks
