// What a webhook subscription is made of (spec §2.4) and the checks on a create or update body:
// trigger names, the subscriber URL's form, the template's and the secret's bounds. Whether the
// URL's host resolves to public addresses is checked apart (address_guard.hpp). The same checks
// serve the webhook pages' form (WebhookForm). Pure logic; thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rendezvous/status.hpp"
#include "rendezvous/url.hpp"

namespace rendezvous::webhooks {

using Json = nlohmann::json;

inline constexpr const char* kWebhookVersion = "2021-10-20";
inline constexpr size_t kMaxTemplateBytes = 64 * 1024;
inline constexpr size_t kMaxSecretBytes = 256;

// The trigger names of spec §2.4, in the specification's order.
const std::vector<std::string>& AllTriggers();
bool IsTrigger(std::string_view name);

// A parsed create or update body. An unset member was absent; for the two clearable members the
// inner optional is empty when the client sent null or "" (clear it).
struct WebhookFields {
  std::optional<bool> active;
  std::optional<std::string> subscriber_url;
  std::optional<net::Url> subscriber;  // subscriber_url parsed (ParseSubscriberUrl), with it
  std::optional<std::vector<std::string>> triggers;
  std::optional<std::optional<std::string>> payload_template;
  std::optional<std::optional<std::string>> secret;
};

// Checks a body. `create` requires active, subscriberUrl and triggers. Unknown members, wrong
// types, unknown or duplicate triggers, no trigger, a malformed URL, a template over 64 KiB, a
// secret over 256 bytes or with control characters, a version other than 2021-10-20: 400 naming
// the field.
Result<WebhookFields> ParseWebhookFields(const Json& body, bool create);

// What the webhook form of the pages shows, or what was submitted with it, as typed: a form with
// an error shows back exactly that. Its fields: subscriber_url, secret, remove_secret (edit),
// payload_template, one checkbox trigger_<NAME> per trigger, active.
struct WebhookForm {
  std::string subscriber_url;
  std::string secret;          // "" keeps the current secret (edit) or sets none (create)
  bool remove_secret = false;  // edit: send deliveries unsigned from now on
  std::string payload_template;
  std::vector<std::string> triggers;  // in the specification's order
  bool active = true;
};

// Reads a submitted form; unknown fields and trigger names are ignored.
WebhookForm ReadWebhookForm(const std::map<std::string, std::string>& form);

// The fields a form asks for, through ParseWebhookFields, with messages written for the form's
// labels ("Subscriber URL must not be empty", "Choose at least one trigger"). An empty template
// clears it; the browser's CRLF line breaks are kept as LF.
Result<WebhookFields> FieldsFromForm(const WebhookForm& form, bool create);

// A message of these checks or of the store, which name JSON members, written for the form's
// person: "subscriberUrl must not be empty" becomes "Subscriber URL must not be empty".
std::string FormMessage(std::string message);

}  // namespace rendezvous::webhooks
