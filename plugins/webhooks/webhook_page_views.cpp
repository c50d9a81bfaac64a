#include "webhook_page_views.hpp"

#include <algorithm>

#include "rendezvous/pages.hpp"
#include "webhook_page_templates.hpp"

namespace rendezvous::webhooks {
namespace {

// Mustache renders a section for any string, even an empty one; null renders nothing.
Json Optional(const std::string& value) {
  return value.empty() ? Json(nullptr) : Json(value);
}

std::string Render(const std::string& tmpl, const Json& data) {
  auto out = rendezvous::RenderTemplate(tmpl, data);
  // The templates are constants covered by the tests; a failure here is a programming error, and
  // the page says so rather than showing half a form.
  return out.ok() ? *out : std::string("<p class=\"error\">This page could not be shown.</p>");
}

// `back`: a link to the list, on every page but the list.
std::string Nav(const PageFrame& frame, bool back = true) {
  return Render(templates::kNav,
                {{"back", back}, {"notice", Optional(frame.notice)}, {"error", Optional(frame.error)}});
}

std::string Page(const std::string& title, const std::string& body) {
  return RenderPage(title, std::string(templates::kStyle) + "\n" + body);
}

std::string JoinTriggers(const std::vector<std::string>& triggers) {
  std::string out;
  for (const std::string& t : triggers) out += (out.empty() ? "" : ", ") + t;
  return out;
}

// "2026-11-27T07:00:01.123Z" as "2026-11-27 07:00:01 UTC".
std::string TimeText(const std::string& iso) {
  if (iso.size() < 19 || iso[10] != 'T') return iso;
  return iso.substr(0, 10) + " " + iso.substr(11, 8) + " UTC";
}

std::string FieldsHtml(const WebhookForm& form, bool editing, bool has_secret) {
  Json triggers = Json::array();
  for (const std::string& t : AllTriggers()) {
    triggers.push_back(
        {{"name", t},
         {"checked", std::find(form.triggers.begin(), form.triggers.end(), t) != form.triggers.end()}});
  }
  return Render(templates::kFormFields, {{"editing", editing},
                                         {"has_secret", has_secret},
                                         {"form",
                                          {{"subscriber_url", form.subscriber_url},
                                           {"secret", form.secret},
                                           {"remove_secret", form.remove_secret},
                                           {"payload_template", form.payload_template},
                                           {"triggers", triggers},
                                           {"active", form.active}}}});
}

Json AttemptView(const Json& a) {
  const std::string at = a.value("at", "");
  std::string outcome = "no answer";
  if (a.contains("statusCode") && a["statusCode"].is_number_integer()) {
    outcome = "HTTP " + std::to_string(a["statusCode"].get<int64_t>());
  }
  Json error = nullptr;
  if (auto it = a.find("error"); it != a.end() && it->is_string() && !it->get<std::string>().empty() &&
                                 it->get<std::string>() != outcome) {
    error = *it;  // "HTTP 500" says no more than the status code already shown
  }
  if (a.contains("durationMs") && a["durationMs"].is_number_integer()) {
    outcome += " in " + std::to_string(a["durationMs"].get<int64_t>()) + " ms";
  }
  auto text = [&a](const char* name) {
    auto it = a.find(name);
    return it != a.end() && it->is_string() ? Optional(it->get<std::string>()) : Json(nullptr);
  };
  return {{"at", at},
          {"at_text", TimeText(at)},
          {"outcome", outcome},
          {"error", error},
          {"response", text("response")}};
}

Json DeliveryView(const Json& d, int64_t webhook_id) {
  const std::string status = d.value("status", "");
  Json attempts = Json::array();
  if (d.contains("attempts") && d["attempts"].is_array()) {
    for (const Json& a : d["attempts"]) attempts.push_back(AttemptView(a));
  }
  return {{"id", d.value("id", int64_t{0})},
          {"webhook_id", webhook_id},
          {"trigger", d.value("triggerEvent", "")},
          {"message_id", d.value("webhookId", "")},
          {"status", status},
          {"status_class", status == "succeeded" ? "ok"
                           : status == "failed"  ? "bad"
                                                 : "pending"},
          {"failed", status == "failed"},
          {"has_attempts", !attempts.empty()},
          {"attempts", attempts}};
}

}  // namespace

WebhookForm FormOf(const Webhook& webhook) {
  WebhookForm f;
  f.subscriber_url = webhook.subscriber_url;
  f.payload_template = webhook.payload_template.value_or("");
  f.triggers = webhook.triggers;
  f.active = webhook.active;
  return f;
}

std::string RenderWebhookListPage(const PageFrame& frame, const std::vector<Webhook>& webhooks,
                                  const WebhookForm& form, const std::vector<Webhook>& client_webhooks) {
  auto rows = [](const std::vector<Webhook>& of) {
    Json list = Json::array();
    for (const Webhook& w : of) {
      list.push_back({{"id", w.id},
                      {"subscriber_url", w.subscriber_url},
                      {"client_id", w.client_id.value_or("")},
                      {"triggers", JoinTriggers(w.triggers)},
                      {"active", w.active}});
    }
    return list;
  };
  Json list = rows(webhooks);
  Json of_clients = rows(client_webhooks);
  Json data = {{"nav", Nav(frame, false)},
               {"csrf_token", frame.csrf_token},
               {"webhooks", list},
               {"has_webhooks", !list.empty()},
               {"client_webhooks", of_clients},
               {"has_client_webhooks", !of_clients.empty()},
               {"fields", FieldsHtml(form, false, false)}};
  return Page("Webhooks", Render(templates::kListBody, data));
}

std::string RenderWebhookPage(const PageFrame& frame, const Webhook& webhook, const WebhookForm& form,
                              const DeliveryLogPage& log) {
  const bool has_secret = webhook.secret.has_value() || webhook.secret_unreadable;
  Json deliveries = Json::array();
  if (log.deliveries.is_array()) {
    for (const Json& d : log.deliveries) deliveries.push_back(DeliveryView(d, webhook.id));
  }
  const auto shown = static_cast<int64_t>(deliveries.size());
  std::string range = shown == 0 ? ""
                                 : "Deliveries " + std::to_string(log.skip + 1) + "–" +
                                       std::to_string(log.skip + shown) + " of " + std::to_string(log.total) +
                                       ", newest first.";
  const int64_t newer = std::max<int64_t>(0, log.skip - log.take);
  Json data = {{"nav", Nav(frame)},
               {"csrf_token", frame.csrf_token},
               {"webhook",
                {{"id", webhook.id},
                 {"subscriber_url", webhook.subscriber_url},
                 {"active", webhook.active},
                 {"triggers", JoinTriggers(webhook.triggers)},
                 {"has_secret", has_secret},
                 {"event_type_id", webhook.event_type_id ? Json(*webhook.event_type_id) : Json(nullptr)},
                 {"client_id", webhook.client_id ? Json(*webhook.client_id) : Json(nullptr)}}},
               {"deliveries", deliveries},
               {"has_deliveries", shown > 0},
               {"range", range},
               {"newer", log.skip > 0 && newer > 0 ? Json(newer) : Json(nullptr)},
               {"first_page", log.skip > 0 && newer == 0},
               {"older", log.skip + shown < log.total ? Json(log.skip + shown) : Json(nullptr)},
               {"fields", FieldsHtml(form, true, has_secret)}};
  return Page("Webhook " + webhook.subscriber_url, Render(templates::kWebhookBody, data));
}

std::string RenderWebhookMessagePage(const PageFrame& frame, const std::string& title,
                                     const std::string& message) {
  return Page(title,
              Render(templates::kMessageBody, {{"nav", Nav(frame)}, {"title", title}, {"message", message}}));
}

}  // namespace rendezvous::webhooks
