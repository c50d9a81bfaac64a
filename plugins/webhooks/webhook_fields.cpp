#include "webhook_fields.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "address_guard.hpp"
#include "rendezvous/text.hpp"

namespace rendezvous::webhooks {
namespace {

std::string TriggerList() {
  std::string out;
  for (const std::string& t : AllTriggers()) out += (out.empty() ? "" : ", ") + t;
  return out;
}

// A clearable text member: null or "" clears it.
Status ReadClearable(const Json& body, const char* name, size_t max_bytes, bool single_line,
                     std::optional<std::optional<std::string>>& out) {
  auto it = body.find(name);
  if (it == body.end()) return Status::Ok();
  if (it->is_null()) {
    out = std::optional<std::string>();
    return Status::Ok();
  }
  if (!it->is_string()) return Status::Invalid(name, std::string(name) + " must be a string or null");
  const std::string value = it->get<std::string>();
  if (value.size() > max_bytes) {
    return Status::Invalid(name, std::string(name) + " must be at most " + std::to_string(max_bytes) + " bytes");
  }
  if (!text::IsValidUtf8(value)) return Status::Invalid(name, std::string(name) + " must be valid UTF-8");
  if (text::HasControlCharacters(value) ||
      (single_line && value.find_first_of("\t\r\n") != std::string::npos)) {
    return Status::Invalid(name, std::string(name) + " must not contain control characters");
  }
  out = value.empty() ? std::optional<std::string>() : std::optional<std::string>(value);
  return Status::Ok();
}

}  // namespace

const std::vector<std::string>& AllTriggers() {
  static const std::vector<std::string> kTriggers = {
      "BOOKING_CREATED",  "BOOKING_RESCHEDULED", "BOOKING_CANCELLED", "BOOKING_CONFIRMED",
      "BOOKING_REJECTED", "BOOKING_COMPLETED",   "BOOKING_NO_SHOW",   "BOOKING_REOPENED"};
  return kTriggers;
}

bool IsTrigger(std::string_view name) {
  const auto& all = AllTriggers();
  return std::find(all.begin(), all.end(), name) != all.end();
}

Result<WebhookFields> ParseWebhookFields(const Json& body, bool create) {
  if (!body.is_object()) return Status::Invalid("body", "the body must be a JSON object");
  static const std::set<std::string> kKnown = {"active", "subscriberUrl", "triggers", "payloadTemplate", "secret",
                                               "version"};
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (kKnown.count(it.key()) == 0) return Status::Invalid(it.key(), it.key() + " is not a webhook field");
  }
  if (create) {
    for (const char* required : {"active", "subscriberUrl", "triggers"}) {
      if (!body.contains(required) || body[required].is_null()) {
        return Status::Invalid(required, std::string(required) + " is required");
      }
    }
  }
  WebhookFields out;
  if (auto it = body.find("version"); it != body.end() && !it->is_null()) {
    if (!it->is_string() || it->get<std::string>() != kWebhookVersion) {
      return Status::Invalid("version", std::string("version must be \"") + kWebhookVersion + "\"");
    }
  }
  if (auto it = body.find("active"); it != body.end()) {
    if (!it->is_boolean()) return Status::Invalid("active", "active must be a boolean");
    out.active = it->get<bool>();
  }
  if (auto it = body.find("subscriberUrl"); it != body.end()) {
    if (!it->is_string()) return Status::Invalid("subscriberUrl", "subscriberUrl must be a string");
    const std::string url = it->get<std::string>();
    Result<net::Url> parsed = ParseSubscriberUrl(url);
    if (!parsed.ok()) return parsed.status();
    out.subscriber_url = url;
    out.subscriber = std::move(*parsed);
  }
  if (auto it = body.find("triggers"); it != body.end()) {
    if (!it->is_array()) return Status::Invalid("triggers", "triggers must be an array of trigger names");
    if (it->empty()) return Status::Invalid("triggers", "triggers must name at least one trigger");
    std::vector<std::string> triggers;
    for (size_t i = 0; i < it->size(); ++i) {
      const Json& t = (*it)[i];
      const std::string field = "triggers[" + std::to_string(i) + "]";
      if (!t.is_string() || !IsTrigger(t.get<std::string>())) {
        return Status::Invalid(field, field + " must be one of " + TriggerList());
      }
      if (std::find(triggers.begin(), triggers.end(), t.get<std::string>()) != triggers.end()) {
        return Status::Invalid(field, field + " repeats " + t.get<std::string>());
      }
      triggers.push_back(t.get<std::string>());
    }
    out.triggers = std::move(triggers);
  }
  if (Status s = ReadClearable(body, "payloadTemplate", kMaxTemplateBytes, false, out.payload_template); !s.ok()) {
    return s;
  }
  if (Status s = ReadClearable(body, "secret", kMaxSecretBytes, true, out.secret); !s.ok()) return s;
  return out;
}

WebhookForm ReadWebhookForm(const std::map<std::string, std::string>& form) {
  auto field = [&form](const std::string& name) {
    auto it = form.find(name);
    return it == form.end() ? std::string() : it->second;
  };
  WebhookForm out;
  out.subscriber_url = field("subscriber_url");
  out.secret = field("secret");
  out.remove_secret = form.count("remove_secret") != 0;
  out.payload_template = field("payload_template");
  for (const std::string& t : AllTriggers()) {
    if (form.count("trigger_" + t) != 0) out.triggers.push_back(t);
  }
  out.active = form.count("active") != 0;
  return out;
}

std::string FormMessage(std::string message) {
  for (const auto& [member, label] : {std::pair<std::string, std::string>{"subscriberUrl", "subscriber URL"},
                                      {"payloadTemplate", "payload template"}}) {
    for (size_t at = message.find(member); at != std::string::npos;
         at = message.find(member, at + label.size())) {
      message.replace(at, member.size(), label);
    }
  }
  if (!message.empty() && message[0] >= 'a' && message[0] <= 'z')
    message[0] = static_cast<char>(message[0] - 'a' + 'A');
  return message;
}

Result<WebhookFields> FieldsFromForm(const WebhookForm& form, bool create) {
  if (form.triggers.empty()) return Status::Invalid("triggers", "Choose at least one trigger.");
  std::string tmpl;
  tmpl.reserve(form.payload_template.size());
  for (size_t i = 0; i < form.payload_template.size(); ++i) {
    if (form.payload_template[i] == '\r' && i + 1 < form.payload_template.size() &&
        form.payload_template[i + 1] == '\n') {
      continue;
    }
    tmpl.push_back(form.payload_template[i]);
  }
  Json body = {{"subscriberUrl", std::string(text::Trim(form.subscriber_url))},
               {"triggers", form.triggers},
               {"active", form.active},
               {"payloadTemplate", tmpl.empty() ? Json() : Json(tmpl)}};
  if (!form.secret.empty()) {
    body["secret"] = form.secret;
  } else if (create || form.remove_secret) {
    body["secret"] = nullptr;
  }
  Result<WebhookFields> fields = ParseWebhookFields(body, create);
  if (fields.ok()) return fields;
  return Status::Invalid(fields.status().field(), FormMessage(fields.status().message()));
}

}  // namespace rendezvous::webhooks
