// The HTML of the webhook pages (the list with the create form, one webhook's page with its
// deliveries, its settings and deletion, a message page). Plain data in, HTML out; no HTTP,
// database or plugin API. Every value is escaped by the template engine. Pure functions,
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "webhook_fields.hpp"
#include "webhook_store.hpp"

namespace rendezvous::webhooks {

// Common to every page: the user's CSRF token for the page's forms, an optional notice (success)
// and error message.
struct PageFrame {
  std::string csrf_token;
  std::string notice;
  std::string error;
};

// One page of a webhook's delivery log: DESIGN §9's delivery objects, newest first.
struct DeliveryLogPage {
  Json deliveries = Json::array();
  int64_t total = 0;
  int64_t skip = 0;
  int64_t take = 0;
};

// The settings of an existing webhook, as its edit form starts (the secret is never shown).
WebhookForm FormOf(const Webhook& webhook);

// /settings/developer/webhooks: the user's webhooks, the create form showing `form`, and the
// webhooks of the user's OAuth clients (a section of their own when there are any).
std::string RenderWebhookListPage(const PageFrame& frame, const std::vector<Webhook>& webhooks,
                                  const WebhookForm& form, const std::vector<Webhook>& client_webhooks = {});

// /settings/developer/webhooks/:id: summary, "Send test event", the delivery log with "Retry" on
// failed deliveries, the edit form showing `form`, deletion.
std::string RenderWebhookPage(const PageFrame& frame, const Webhook& webhook, const WebhookForm& form,
                              const DeliveryLogPage& log);

// A page with a title and one sentence (403, 404, errors without a form to show again).
std::string RenderWebhookMessagePage(const PageFrame& frame, const std::string& title,
                                     const std::string& message);

}  // namespace rendezvous::webhooks
