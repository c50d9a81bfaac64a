#include "booking_fields.hpp"

#include <algorithm>
#include <set>
#include <vector>

#include "field_checks.hpp"
#include "rendezvous/text.hpp"

namespace rendezvous::bookings {
namespace {

constexpr size_t kMaxBookingFieldEntries =
    kMaxBookingFields + 8;  // the custom ones and the defaults read back
constexpr size_t kMaxResponses = kMaxBookingFields + 8;

// Cal.com's custom kinds: whether a field of the kind has a placeholder and options.
struct Kind {
  const char* name;
  bool placeholder;
  bool options;
};
constexpr Kind kKinds[] = {{"text", true, false},  {"textarea", true, false},    {"number", true, false},
                           {"phone", true, false}, {"address", true, false},     {"multiemail", true, false},
                           {"select", true, true}, {"multiselect", false, true}, {"checkbox", false, true},
                           {"radio", false, true}, {"boolean", false, false}};

const Kind* FindKind(const std::string& name) {
  for (const Kind& k : kKinds) {
    if (name == k.name) return &k;
  }
  return nullptr;
}

// The default fields' slugs; custom fields may not take them.
const std::set<std::string>& DefaultSlugs() {
  static const std::set<std::string> kSlugs = {
      "name", "email", "location", "notes", "guests", "rescheduleReason", "title"};
  return kSlugs;
}

const char* const kKindList =
    "text, textarea, number, phone, address, multiemail, select, multiselect, checkbox, radio, boolean "
    "(or name, email for the default fields)";

// "<at>.<member>": the name of a member of the entry at `at`.
std::string MemberOf(const std::string& at, const std::string& member) {
  return std::string(at).append(".").append(member);
}

bool IsFieldSlug(const std::string& s) {
  if (s.empty() || s.size() > kMaxFieldSlugChars) return false;
  if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

bool IsPhoneAnswer(const std::string& s) {
  if (s.size() < 7 || s.size() > 16 || s[0] != '+' || s[1] < '1' || s[1] > '9') return false;
  return std::all_of(s.begin() + 1, s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Status ReadLine(const Json& v, const std::string& field, size_t max_chars, bool required, std::string& out) {
  if (!v.is_string()) return FieldInvalid(field, "must be a string");
  std::string value(text::Trim(v.get<std::string>()));
  if (std::string p = CheckText(value, max_chars, false); !p.empty()) return FieldInvalid(field, p);
  if (required && value.empty()) return FieldInvalid(field, "must not be empty");
  out = std::move(value);
  return Status::Ok();
}

Status ReadFlag(const Json& entry, const char* member, const std::string& at, bool& out) {
  if (!entry.contains(member) || entry[member].is_null()) return Status::Ok();
  if (!entry[member].is_boolean()) return FieldInvalid(at + "." + member, "must be true or false");
  out = entry[member].get<bool>();
  return Status::Ok();
}

Result<Json> ReadOptions(const Json& entry, const std::string& at) {
  const std::string field = at + ".options";
  if (!entry.contains("options") || entry["options"].is_null()) return FieldInvalid(field, "is required");
  const Json& v = entry["options"];
  if (!v.is_array() || v.empty() || v.size() > kMaxFieldOptions) {
    return FieldInvalid(field, "must be an array of 1 to " + std::to_string(kMaxFieldOptions) + " strings");
  }
  Json out = Json::array();
  std::set<std::string> seen;
  for (size_t i = 0; i < v.size(); ++i) {
    std::string option;
    const std::string item = field + "[" + std::to_string(i) + "]";
    if (Status e = ReadLine(v[i], item, kMaxFieldOptionChars, true, option); !e.ok()) return e;
    if (!seen.insert(option).second) return FieldInvalid(item, "repeats another option");
    out.push_back(std::move(option));
  }
  return out;
}

// Cal.com's name and email inputs: a new label or placeholder for the default field.
Result<Json> ReadDefaultInput(const Json& entry, const std::string& type, const std::string& at) {
  Json out = {{"type", type}};
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    const std::string& k = it.key();
    const std::string field = MemberOf(at, k);
    if (k == "type" || it->is_null()) continue;
    if (k == "slug") {
      if (*it != type)
        return FieldInvalid(
            field,
            std::string("must be \"").append(type).append("\" for the ").append(type).append(" field"));
    } else if (k == "isDefault") {
      if (*it != true) return FieldInvalid(field, "must be true for the " + type + " field");
    } else if (k == "required") {
      if (*it != true) return FieldInvalid(field, "must be true: the " + type + " field is always required");
    } else if (k == "label" || k == "placeholder") {
      std::string text;
      if (Status e = ReadLine(*it, field, k == "label" ? kMaxFieldLabelChars : kMaxFieldPlaceholderChars,
                              false, text);
          !e.ok())
        return e;
      if (!text.empty()) out[k] = std::move(text);
    } else if (k == "disableOnPrefill") {
      if (!it->is_boolean()) return FieldInvalid(field, "must be true or false");
      out[k] = it->get<bool>();
    } else {
      return FieldInvalid(field, "is not a member of the " + type + " field");
    }
  }
  return out;
}

Result<Json> ReadCustom(const Json& entry, const Kind& kind, const std::string& at) {
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    const std::string& k = it.key();
    const bool known = k == "type" || k == "slug" || k == "label" || k == "required" || k == "hidden" ||
                       k == "disableOnPrefill" || k == "isDefault" ||
                       (k == "placeholder" && kind.placeholder) || (k == "options" && kind.options);
    if (!known)
      return FieldInvalid(MemberOf(at, k),
                          std::string("is not a member of a ").append(kind.name).append(" field"));
  }
  Json out = {{"type", kind.name}};
  if (!entry.contains("slug") || entry["slug"].is_null()) return FieldInvalid(at + ".slug", "is required");
  if (!entry["slug"].is_string() || !IsFieldSlug(entry["slug"].get<std::string>())) {
    return FieldInvalid(at + ".slug", "must be 1 to " + std::to_string(kMaxFieldSlugChars) +
                                          " letters, digits, '-' and '_', starting with a letter");
  }
  const std::string slug = entry["slug"].get<std::string>();
  if (DefaultSlugs().count(slug))
    return FieldInvalid(at + ".slug", "\"" + slug + "\" is a default field's slug");
  out["slug"] = slug;
  if (!entry.contains("label") || entry["label"].is_null()) return FieldInvalid(at + ".label", "is required");
  std::string label;
  if (Status e = ReadLine(entry["label"], at + ".label", kMaxFieldLabelChars, true, label); !e.ok()) return e;
  out["label"] = std::move(label);
  bool required = false, hidden = false, prefill = false, is_default = false;
  if (Status e = ReadFlag(entry, "required", at, required); !e.ok()) return e;
  if (Status e = ReadFlag(entry, "hidden", at, hidden); !e.ok()) return e;
  if (Status e = ReadFlag(entry, "disableOnPrefill", at, prefill); !e.ok()) return e;
  if (Status e = ReadFlag(entry, "isDefault", at, is_default); !e.ok()) return e;
  if (is_default) return FieldInvalid(at + ".isDefault", "must be false for a custom field");
  out["required"] = required;
  out["hidden"] = hidden;
  out["disableOnPrefill"] = prefill;
  if (kind.placeholder && entry.contains("placeholder") && !entry["placeholder"].is_null()) {
    std::string placeholder;
    if (Status e = ReadLine(entry["placeholder"], at + ".placeholder", kMaxFieldPlaceholderChars, false,
                            placeholder);
        !e.ok())
      return e;
    if (!placeholder.empty()) out["placeholder"] = std::move(placeholder);
  }
  if (kind.options) {
    Result<Json> options = ReadOptions(entry, at);
    if (!options.ok()) return options.status();
    out["options"] = std::move(options).value();
  }
  return out;
}

// The stored name or email input (null when there is none).
Json StoredDefault(const Json& stored, const char* type) {
  if (stored.is_array()) {
    for (const Json& f : stored) {
      if (f.is_object() && f.value("type", "") == type) return f;
    }
  }
  return nullptr;
}

Json DefaultField(const char* slug, const char* type, const char* label, bool required) {
  return Json{{"type", type},         {"slug", slug},    {"label", label},
              {"required", required}, {"hidden", false}, {"disableOnPrefill", false},
              {"isDefault", true}};
}

Json Relabelled(Json field, const Json& input) {
  if (!input.is_object()) return field;
  for (const char* k : {"label", "placeholder", "disableOnPrefill"}) {
    if (input.contains(k)) field[k] = input[k];
  }
  return field;
}

bool Answered(const Json& v) {
  return !(v.is_null() || (v.is_string() && v.get_ref<const std::string&>().empty()) ||
           (v.is_array() && v.empty()));
}

// `v` checked as an answer of `kind` (options: the field's); the value to store (strings trimmed).
Result<Json> CheckAnswer(const Json& v, const std::string& kind, const Json& options,
                         const std::string& field) {
  auto is_option = [&](const Json& s) {
    return std::find(options.begin(), options.end(), s) != options.end();
  };
  if (kind == "text" || kind == "textarea" || kind == "phone" || kind == "address") {
    if (!v.is_string()) return FieldInvalid(field, "must be a string");
    std::string s = kind == "textarea" ? v.get<std::string>() : std::string(text::Trim(v.get<std::string>()));
    if (std::string p =
            CheckText(s, kind == "textarea" ? kMaxLongAnswerChars : kMaxTextAnswerChars, kind == "textarea");
        !p.empty())
      return FieldInvalid(field, p);
    if (kind == "phone" && !s.empty() && !IsPhoneAnswer(s)) {
      return FieldInvalid(field, "must be a phone number in E.164 form, e.g. +14155550123");
    }
    return Json(std::move(s));
  }
  if (kind == "number") {
    if (!v.is_number()) return FieldInvalid(field, "must be a number");
    return v;
  }
  if (kind == "boolean") {
    if (!v.is_boolean()) return FieldInvalid(field, "must be true or false");
    return v;
  }
  if (kind == "select" || kind == "radio") {
    if (!v.is_string() || !is_option(v)) return FieldInvalid(field, "must be one of the field's options");
    return v;
  }
  if (kind == "multiselect" || kind == "checkbox") {
    if (!v.is_array()) return FieldInvalid(field, "must be an array of the field's options");
    Json out = Json::array();
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string item = field + "[" + std::to_string(i) + "]";
      if (!v[i].is_string() || !is_option(v[i]))
        return FieldInvalid(item, "must be one of the field's options");
      if (std::find(out.begin(), out.end(), v[i]) != out.end())
        return FieldInvalid(item, "repeats another answer");
      out.push_back(v[i]);
    }
    return out;
  }
  if (kind == "multiemail") {
    if (!v.is_array() || v.size() > kMaxEmailAnswers) {
      return FieldInvalid(
          field, "must be an array of at most " + std::to_string(kMaxEmailAnswers) + " e-mail addresses");
    }
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string() ||
          !text::IsEmailAddress(v[i].get<std::string>(), text::kMaxStoredEmailAddressBytes)) {
        return FieldInvalid(field + "[" + std::to_string(i) + "]", "must be an e-mail address");
      }
    }
    return v;
  }
  return FieldInvalid(field, "has a field kind this server does not know");
}

// Where the request carries the default fields other than notes.
const char* AnsweredElsewhere(const std::string& slug) {
  if (slug == "name") return "is given as attendee.name";
  if (slug == "email") return "is given as attendee.email";
  if (slug == "guests") return "is given as guests";
  if (slug == "location") return "is given as location";
  if (slug == "rescheduleReason") return "is given as the reschedule's reschedulingReason";
  if (slug == "title") return "is not answered by the booker: the title is made from the event type";
  return nullptr;
}

}  // namespace

Result<Json> ParseBookingFields(const Json& value) {
  constexpr const char* kField = "bookingFields";
  if (value.is_null()) return Json::array();
  if (!value.is_array()) return FieldInvalid(kField, "must be an array of booking fields");
  if (value.size() > kMaxBookingFieldEntries) {
    return FieldInvalid(kField, "must have at most " + std::to_string(kMaxBookingFields) + " custom fields");
  }
  Json out = Json::array();
  std::set<std::string> slugs, defaults;
  size_t custom = 0;
  for (size_t i = 0; i < value.size(); ++i) {
    const Json& entry = value[i];
    const std::string at = std::string(kField) + "[" + std::to_string(i) + "]";
    if (!entry.is_object()) return FieldInvalid(at, "must be an object");
    if (!entry.contains("type") || !entry["type"].is_string())
      return FieldInvalid(at + ".type", "is required");
    const std::string type = entry["type"].get<std::string>();
    const bool read_back = entry.contains("isDefault") && entry["isDefault"] == true;
    if (type == "name" || type == "email") {
      if (!defaults.insert(type).second)
        return FieldInvalid(at + ".type", "gives the " + type + " field twice");
      Result<Json> input = ReadDefaultInput(entry, type, at);
      if (!input.ok()) return input.status();
      if (input->size() > 1) out.push_back(std::move(input).value());
      continue;
    }
    if (read_back) {
      // A default field of the output form (location, notes, guests, rescheduleReason, title).
      const Json slug = entry.value("slug", Json());
      if (!slug.is_string() || !DefaultSlugs().count(slug.get<std::string>())) {
        return FieldInvalid(at + ".isDefault",
                            "is true only for the default fields (name, email, location, notes, "
                            "guests, rescheduleReason, title)");
      }
      if (!defaults.insert(slug.get<std::string>()).second) {
        return FieldInvalid(at + ".slug", "gives the " + slug.get<std::string>() + " field twice");
      }
      continue;
    }
    const Kind* kind = FindKind(type);
    if (kind == nullptr) return FieldInvalid(at + ".type", std::string("must be one of ") + kKindList);
    Result<Json> field = ReadCustom(entry, *kind, at);
    if (!field.ok()) return field.status();
    if (!slugs.insert((*field)["slug"].get<std::string>()).second) {
      return FieldInvalid(at + ".slug", "repeats another field's slug");
    }
    if (++custom > kMaxBookingFields) {
      return FieldInvalid(at,
                          "is one custom field too many (at most " + std::to_string(kMaxBookingFields) + ")");
    }
    out.push_back(std::move(field).value());
  }
  if (out.dump().size() > kMaxBookingFieldsBytes) {
    return FieldInvalid(kField,
                        "must be at most " + std::to_string(kMaxBookingFieldsBytes) + " bytes as JSON");
  }
  return out;
}

Json BookingFieldsJson(const Json& stored) {
  Json name = {{"type", "name"},
               {"slug", "name"},
               {"label", "Your name"},
               {"required", true},
               {"disableOnPrefill", false},
               {"isDefault", true}};
  Json email = {{"type", "email"},  {"slug", "email"},           {"label", "Email address"},
                {"required", true}, {"disableOnPrefill", false}, {"isDefault", true}};
  Json location = {{"type", "radioInput"}, {"slug", "location"}, {"label", "Location"},
                   {"required", false},    {"hidden", false},    {"isDefault", true}};
  Json out = Json::array({Relabelled(std::move(name), StoredDefault(stored, "name")),
                          Relabelled(std::move(email), StoredDefault(stored, "email")), std::move(location),
                          DefaultField("notes", "textarea", "Additional notes", false),
                          DefaultField("guests", "multiemail", "Add guests", false),
                          DefaultField("rescheduleReason", "textarea", "Reason for reschedule", false)});
  if (stored.is_array()) {
    for (const Json& f : stored) {
      if (!f.is_object() || !f.contains("slug")) continue;
      Json field = f;
      field["isDefault"] = false;
      out.push_back(std::move(field));
    }
  }
  return out;
}

Result<CheckedResponses> CheckBookingResponses(const Json& stored_fields, const Json& responses) {
  constexpr const char* kField = "bookingFieldsResponses";
  CheckedResponses out;
  if (!responses.is_null() && !responses.is_object()) {
    return FieldInvalid(kField, "must be an object of booking field slugs to answers");
  }
  if (responses.is_object() && responses.size() > kMaxResponses) {
    return FieldInvalid(kField, "must have at most " + std::to_string(kMaxResponses) + " answers");
  }
  std::vector<const Json*> fields;
  if (stored_fields.is_array()) {
    for (const Json& f : stored_fields) {
      if (f.is_object() && f.contains("slug")) fields.push_back(&f);
    }
  }
  if (responses.is_object()) {
    for (auto it = responses.begin(); it != responses.end(); ++it) {
      const std::string& slug = it.key();
      if (!IsFieldSlug(slug)) {
        return FieldInvalid(kField, "has a member that is not a booking field slug (1 to " +
                                        std::to_string(kMaxFieldSlugChars) +
                                        " letters, digits, '-' and '_', starting with a letter)");
      }
      const std::string field = std::string(kField) + "." + slug;
      if (slug == "notes") {
        if (it->is_null()) continue;
        if (!it->is_string()) return FieldInvalid(field, "must be a string");
        std::string notes(text::Trim(it->get<std::string>()));
        if (std::string p = CheckText(notes, kMaxLongAnswerChars, true); !p.empty())
          return FieldInvalid(field, p);
        if (!notes.empty()) out.notes = std::move(notes);
        continue;
      }
      if (const char* elsewhere = AnsweredElsewhere(slug)) return FieldInvalid(field, elsewhere);
      auto def =
          std::find_if(fields.begin(), fields.end(), [&](const Json* f) { return (*f)["slug"] == slug; });
      if (def == fields.end()) return FieldInvalid(field, "is not a booking field of this event type");
      if (it->is_null()) continue;
      const Json& f = **def;
      Result<Json> value = CheckAnswer(*it, f.value("type", ""), f.value("options", Json::array()), field);
      if (!value.ok()) return value.status();
      if (!Answered(*value)) continue;
      out.answers[slug] = {{"label", f.value("label", slug)}, {"value", std::move(value).value()}};
    }
  }
  for (const Json* f : fields) {
    if (!f->value("required", false) || f->value("hidden", false)) continue;
    const std::string slug = (*f)["slug"].get<std::string>();
    if (!out.answers.contains(slug)) {
      return FieldInvalid(std::string(kField) + "." + slug,
                          "is required (\"" + f->value("label", slug) + "\")");
    }
  }
  if (out.answers.dump().size() > kMaxResponsesBytes) {
    return FieldInvalid(kField, "must be at most " + std::to_string(kMaxResponsesBytes) + " bytes as JSON");
  }
  return out;
}

Json BookingResponsesJson(const std::string& name, const std::string& email, const Json& guests,
                          const std::string& notes, const Json& answers) {
  Json out = {{"name", name}, {"email", email}, {"guests", guests}};
  if (!notes.empty()) out["notes"] = notes;
  if (answers.is_object()) {
    for (auto it = answers.begin(); it != answers.end(); ++it) {
      if (it->is_object() && it->contains("value")) out[it.key()] = (*it)["value"];
    }
  }
  return out;
}

Json PayloadResponsesJson(const std::string& name, const std::string& email, const Json& guests,
                          const std::string& notes, const Json& answers) {
  Json out = {{"name", {{"label", "Your name"}, {"value", name}}},
              {"email", {{"label", "Email address"}, {"value", email}}},
              {"guests", {{"label", "Add guests"}, {"value", guests}}}};
  if (!notes.empty()) out["notes"] = {{"label", "Additional notes"}, {"value", notes}};
  if (answers.is_object()) {
    for (auto it = answers.begin(); it != answers.end(); ++it) {
      if (it->is_object() && it->contains("value")) out[it.key()] = *it;
    }
  }
  return out;
}

}  // namespace rendezvous::bookings
