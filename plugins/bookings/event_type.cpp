#include "event_type.hpp"

#include <set>

#include "booking_fields.hpp"
#include "rendezvous/text.hpp"

namespace rendezvous::bookings {
namespace {

constexpr size_t kMaxAddressChars = 500;
constexpr size_t kMaxLinkChars = 2048;

const std::set<std::string>& KnownMembers() {
  static const std::set<std::string> kMembers = {"title",
                                                 "slug",
                                                 "lengthInMinutes",
                                                 "description",
                                                 "locations",
                                                 "requiresConfirmation",
                                                 "minimumBookingNotice",
                                                 "beforeEventBuffer",
                                                 "afterEventBuffer",
                                                 "slotInterval",
                                                 "scheduleId",
                                                 "bookingLimitsCount",
                                                 "disableGuests",
                                                 "lockTimeZoneToggleOnBookingPage",
                                                 "forwardParamsSuccessRedirect",
                                                 "successRedirectUrl",
                                                 "metadata",
                                                 "price",
                                                 "currency",
                                                 "isInstantEvent",
                                                 "recurrence",
                                                 "bookingFields"};
  return kMembers;
}

Status Unknown(const Json& body) {
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (!KnownMembers().count(it.key())) {
      if (it.key() == "id" || it.key() == "ownerId") return FieldInvalid(it.key(), "is read-only");
      return FieldInvalid(it.key(), "is not a member of an event type");
    }
  }
  return Status::Ok();
}

Status ReadText(const Json& v, const char* field, size_t max_chars, bool required, bool multiline,
                std::string& out) {
  if (!v.is_string()) return FieldInvalid(field, "must be a string");
  std::string value = multiline ? v.get<std::string>() : std::string(text::Trim(v.get<std::string>()));
  if (std::string problem = CheckText(value, max_chars, multiline); !problem.empty()) {
    return FieldInvalid(field, problem);
  }
  if (required && text::Trim(value).empty()) return FieldInvalid(field, "must not be empty");
  out = std::move(value);
  return Status::Ok();
}

Status ReadInt(const Json& v, const char* field, int min, int max, int& out) {
  if (!v.is_number_integer()) return FieldInvalid(field, "must be an integer");
  const auto n = v.get<int64_t>();
  if (n < min || n > max) {
    return FieldInvalid(field, "must be between " + std::to_string(min) + " and " + std::to_string(max));
  }
  out = static_cast<int>(n);
  return Status::Ok();
}

// null, {} or Cal.com's {"disabled": true} clears every limit; an object replaces them all
// (`"disabled": false` beside the periods is Cal.com's spelling of "these limits").
Status ReadBookingLimits(const Json& v, BookingLimits& out) {
  constexpr const char* kField = "bookingLimitsCount";
  BookingLimits limits;
  if (!v.is_null()) {
    if (!v.is_object()) return FieldInvalid(kField, "must be an object {day?, week?, month?, year?} or null");
    if (v.contains("disabled")) {
      if (!v["disabled"].is_boolean())
        return FieldInvalid(std::string(kField) + ".disabled", "must be true or false");
      if (v["disabled"].get<bool>()) {
        if (v.size() > 1) {
          return FieldInvalid(std::string(kField) + ".disabled",
                              "must not be true beside limits (true turns every limit off)");
        }
        out = limits;
        return Status::Ok();
      }
    }
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (it.key() == "disabled") continue;
      std::optional<int>* slot = it.key() == "day"     ? &limits.day
                                 : it.key() == "week"  ? &limits.week
                                 : it.key() == "month" ? &limits.month
                                 : it.key() == "year"  ? &limits.year
                                                       : nullptr;
      const std::string field = std::string(kField) + "." + it.key();
      if (slot == nullptr) return FieldInvalid(field, "is not a period; use day, week, month or year");
      if (it->is_null()) continue;
      int n = 0;
      if (Status e = ReadInt(*it, field.c_str(), 1, kMaxBookingLimit, n); !e.ok()) return e;
      *slot = n;
    }
  }
  out = limits;
  return Status::Ok();
}

bool IsSlug(const std::string& s) {
  if (s.empty() || s.size() > kMaxSlugChars || s.front() == '-' || s.back() == '-') return false;
  char prev = 0;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    if (!ok || (c == '-' && prev == '-')) return false;
    prev = c;
  }
  return true;
}

bool IsHttpUrl(const std::string& s) {
  if (s.size() > kMaxLinkChars) return false;
  const size_t scheme = s.rfind("https://", 0) == 0 ? 8 : s.rfind("http://", 0) == 0 ? 7 : 0;
  if (scheme == 0 || s.size() <= scheme || s[scheme] == '/') return false;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f) return false;
  }
  return true;
}

// Cal.com's metadata: any JSON object, bounded in members and size.
Status ReadMetadata(const Json& v, Json& out) {
  if (v.is_null()) {
    out = Json::object();
    return Status::Ok();
  }
  if (!v.is_object()) return FieldInvalid("metadata", "must be a JSON object");
  if (v.size() > kMaxEventTypeMetadataKeys) {
    return FieldInvalid("metadata",
                        "must have at most " + std::to_string(kMaxEventTypeMetadataKeys) + " keys");
  }
  if (v.dump().size() > kMaxEventTypeMetadataBytes) {
    return FieldInvalid("metadata",
                        "must be at most " + std::to_string(kMaxEventTypeMetadataBytes) + " bytes as JSON");
  }
  out = v;
  return Status::Ok();
}

Status ReadBool(const Json& v, const char* field, bool& out) {
  if (!v.is_boolean()) return FieldInvalid(field, "must be true or false");
  out = v.get<bool>();
  return Status::Ok();
}

// The refusals of what needs features the service does not have (DESIGN §10): a price (no
// booking is ever created unpaid), instant meetings and recurring bookings. The values that ask
// for none of them are accepted.
Status ReadPrice(const Json& v) {
  if (!v.is_number()) return FieldInvalid("price", "must be a number");
  if (v.get<double>() < 0) return FieldInvalid("price", "must not be negative");
  if (v.get<double>() > 0) {
    return FieldInvalid("price", "must be 0: paid event types are not supported")
        .WithReason("payments_not_supported");
  }
  return Status::Ok();
}

Status ReadInstant(const Json& v) {
  if (!v.is_boolean()) return FieldInvalid("isInstantEvent", "must be true or false");
  if (v.get<bool>()) {
    return FieldInvalid("isInstantEvent", "must be false: instant events are not supported")
        .WithReason("instant_not_supported");
  }
  return Status::Ok();
}

// null or Cal.com's {"disabled": true}: no recurrence; anything else asks for one.
Status ReadRecurrence(const Json& v) {
  const bool none =
      v.is_null() || (v.is_object() && v.size() == 1 && v.contains("disabled") && v["disabled"] == true);
  if (none) return Status::Ok();
  return FieldInvalid("recurrence", "must be null: recurring event types are not supported")
      .WithReason("recurrence_not_supported");
}

Status ReadCurrency(const Json& v, std::string& out) {
  if (!v.is_string()) return FieldInvalid("currency", "must be a string");
  std::string code = v.get<std::string>();
  bool letters = code.size() == 3;
  for (char& c : code) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    letters = letters && c >= 'a' && c <= 'z';
  }
  if (!letters) return FieldInvalid("currency", "must be a three-letter ISO 4217 code, e.g. \"usd\"");
  out = std::move(code);
  return Status::Ok();
}

bool IsPhone(const std::string& s) {
  if (s.size() < 7 || s.size() > 16 || s[0] != '+' || s[1] < '1' || s[1] > '9') return false;
  for (size_t i = 2; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

Status Apply(const Json& body, EventTypeFields& f, bool create) {
  if (!body.is_object()) return FieldInvalid("body", "must be a JSON object");
  if (Status e = Unknown(body); !e.ok()) return e;
  auto has = [&](const char* k) { return body.contains(k); };
  auto present = [&](const char* k) { return body.contains(k) && !body.at(k).is_null(); };
  if (create) {
    for (const char* k : {"title", "slug", "lengthInMinutes"}) {
      if (!present(k)) return FieldInvalid(k, "is required");
    }
  }
  if (has("title")) {
    if (Status e = ReadText(body["title"], "title", kMaxTitleChars, true, false, f.title); !e.ok()) return e;
  }
  if (has("slug")) {
    if (!body["slug"].is_string()) return FieldInvalid("slug", "must be a string");
    std::string slug = body["slug"].get<std::string>();
    if (!IsSlug(slug)) {
      return FieldInvalid(
          "slug", "must be 1 to 100 lower-case letters, digits and single hyphens (e.g. \"intro-call\")");
    }
    f.slug = std::move(slug);
  }
  if (has("lengthInMinutes")) {
    if (Status e =
            ReadInt(body["lengthInMinutes"], "lengthInMinutes", 1, kMaxLengthMinutes, f.length_minutes);
        !e.ok())
      return e;
  }
  if (has("description")) {
    if (body["description"].is_null()) {
      f.description.clear();
    } else if (Status e = ReadText(body["description"], "description", kMaxDescriptionChars, false, true,
                                   f.description);
               !e.ok()) {
      return e;
    }
  }
  if (has("locations")) {
    if (body["locations"].is_null()) {
      f.locations = Json::array();
    } else {
      Result<Json> parsed = ParseLocations(body["locations"]);
      if (!parsed.ok()) return parsed.status();
      f.locations = std::move(parsed).value();
    }
  }
  if (has("requiresConfirmation")) {
    if (!body["requiresConfirmation"].is_boolean())
      return FieldInvalid("requiresConfirmation", "must be true or false");
    f.requires_confirmation = body["requiresConfirmation"].get<bool>();
  }
  if (has("minimumBookingNotice")) {
    if (Status e = ReadInt(body["minimumBookingNotice"], "minimumBookingNotice", 0, kMaxBookingNoticeMinutes,
                           f.minimum_booking_notice);
        !e.ok()) {
      return e;
    }
  }
  if (has("beforeEventBuffer")) {
    if (Status e = ReadInt(body["beforeEventBuffer"], "beforeEventBuffer", 0, kMaxBufferMinutes,
                           f.before_event_buffer);
        !e.ok()) {
      return e;
    }
  }
  if (has("afterEventBuffer")) {
    if (Status e =
            ReadInt(body["afterEventBuffer"], "afterEventBuffer", 0, kMaxBufferMinutes, f.after_event_buffer);
        !e.ok()) {
      return e;
    }
  }
  if (has("slotInterval")) {
    if (body["slotInterval"].is_null()) {
      f.slot_interval.reset();
    } else {
      int v = 0;
      if (Status e = ReadInt(body["slotInterval"], "slotInterval", 1, kMaxLengthMinutes, v); !e.ok())
        return e;
      f.slot_interval = v;
    }
  }
  if (has("bookingLimitsCount")) {
    if (Status e = ReadBookingLimits(body["bookingLimitsCount"], f.booking_limits); !e.ok()) return e;
  }
  // Whether the schedule is the owner's is checked where the schedules are (EventTypeService).
  if (has("scheduleId")) {
    const Json& v = body["scheduleId"];
    if (v.is_null()) {
      f.schedule_id.reset();
    } else if (!v.is_number_integer() || v.get<int64_t>() < 1) {
      return FieldInvalid("scheduleId", "must be the id of one of your schedules, or null for your default");
    } else {
      f.schedule_id = v.get<int64_t>();
    }
  }
  // Cal.com's settings.
  if (has("disableGuests")) {
    if (Status e = ReadBool(body["disableGuests"], "disableGuests", f.disable_guests); !e.ok()) return e;
  }
  if (has("lockTimeZoneToggleOnBookingPage")) {
    if (Status e = ReadBool(body["lockTimeZoneToggleOnBookingPage"], "lockTimeZoneToggleOnBookingPage",
                            f.lock_time_zone_toggle);
        !e.ok())
      return e;
  }
  if (has("forwardParamsSuccessRedirect")) {
    if (body["forwardParamsSuccessRedirect"].is_null()) {
      f.forward_params_success_redirect = true;
    } else if (Status e = ReadBool(body["forwardParamsSuccessRedirect"], "forwardParamsSuccessRedirect",
                                   f.forward_params_success_redirect);
               !e.ok()) {
      return e;
    }
  }
  if (has("successRedirectUrl")) {
    const Json& v = body["successRedirectUrl"];
    if (v.is_null() || (v.is_string() && v.get<std::string>().empty())) {
      f.success_redirect_url.reset();
    } else if (!v.is_string() || !IsHttpUrl(v.get<std::string>()) ||
               v.get<std::string>().size() > kMaxRedirectUrlChars) {
      return FieldInvalid("successRedirectUrl", "must be an http or https URL of at most " +
                                                    std::to_string(kMaxRedirectUrlChars) +
                                                    " characters, or null");
    } else {
      f.success_redirect_url = v.get<std::string>();
    }
  }
  if (has("metadata")) {
    if (Status e = ReadMetadata(body["metadata"], f.metadata); !e.ok()) return e;
  }
  if (has("currency")) {
    if (Status e = ReadCurrency(body["currency"], f.currency); !e.ok()) return e;
  }
  if (has("price")) {
    if (Status e = ReadPrice(body["price"]); !e.ok()) return e;
  }
  if (has("isInstantEvent")) {
    if (Status e = ReadInstant(body["isInstantEvent"]); !e.ok()) return e;
  }
  if (has("recurrence")) {
    if (Status e = ReadRecurrence(body["recurrence"]); !e.ok()) return e;
  }
  if (has("bookingFields")) {
    Result<Json> fields = ParseBookingFields(body["bookingFields"]);
    if (!fields.ok()) return fields.status();
    f.booking_fields = std::move(fields).value();
  }
  return Status::Ok();
}

Json BookingLimitsJson(const BookingLimits& limits) {
  Json out = Json::object();
  if (limits.day) out["day"] = *limits.day;
  if (limits.week) out["week"] = *limits.week;
  if (limits.month) out["month"] = *limits.month;
  if (limits.year) out["year"] = *limits.year;
  return out;
}

}  // namespace

Result<Json> ParseLocations(const Json& value) {
  if (!value.is_array()) return FieldInvalid("locations", "must be an array");
  if (value.size() > kMaxLocations) {
    return FieldInvalid("locations", "must have at most " + std::to_string(kMaxLocations) + " entries");
  }
  Json out = Json::array();
  for (size_t i = 0; i < value.size(); ++i) {
    const Json& loc = value[i];
    const std::string at = "locations[" + std::to_string(i) + "]";
    if (!loc.is_object()) return FieldInvalid(at, "must be an object");
    if (!loc.contains("type") || !loc["type"].is_string()) return FieldInvalid(at + ".type", "is required");
    const std::string type = loc["type"].get<std::string>();
    std::set<std::string> allowed = {"type"};
    Json norm = {{"type", type}};
    if (type == "integration") {
      allowed.insert("integration");
      if (!loc.contains("integration") || loc["integration"] != "google-meet") {
        return FieldInvalid(at + ".integration", "must be \"google-meet\"");
      }
      norm["integration"] = "google-meet";
    } else if (type == "address" || type == "link" || type == "phone") {
      allowed.insert({type, "public"});
      if (!loc.contains(type) || !loc[type].is_string()) return FieldInvalid(at + "." + type, "is required");
      const std::string v(text::Trim(loc[type].get<std::string>()));
      if (type == "address") {
        if (v.empty()) return FieldInvalid(at + ".address", "must not be empty");
        if (std::string p = CheckText(v, kMaxAddressChars, false); !p.empty())
          return FieldInvalid(at + ".address", p);
      } else if (type == "link" && !IsHttpUrl(v)) {
        return FieldInvalid(at + ".link", "must be an http or https URL of at most 2048 characters");
      } else if (type == "phone" && !IsPhone(v)) {
        return FieldInvalid(at + ".phone", "must be a phone number in E.164 form, e.g. +14155550123");
      }
      norm[type] = v;
      bool is_public = true;
      if (loc.contains("public")) {
        if (!loc["public"].is_boolean()) return FieldInvalid(at + ".public", "must be true or false");
        is_public = loc["public"].get<bool>();
      }
      norm["public"] = is_public;
    } else {
      return FieldInvalid(at + ".type", "must be one of integration, address, link, phone");
    }
    for (auto it = loc.begin(); it != loc.end(); ++it) {
      if (!allowed.count(it.key()))
        return FieldInvalid(at + "." + it.key(), "is not a member of a " + type + " location");
    }
    out.push_back(std::move(norm));
  }
  return out;
}

Result<EventTypeFields> ParseEventTypeCreate(const Json& body) {
  EventTypeFields fields;
  if (Status e = Apply(body, fields, true); !e.ok()) return e;
  return fields;
}

Status ApplyEventTypePatch(const Json& body, EventTypeFields& fields) {
  return Apply(body, fields, false);
}

Json EventTypeJson(const EventType& et, const std::string& owner_username) {
  const EventTypeFields& f = et.fields;
  return Json{{"id", et.id},
              {"title", f.title},
              {"slug", f.slug},
              {"lengthInMinutes", f.length_minutes},
              {"description", f.description},
              {"locations", f.locations},
              {"requiresConfirmation", f.requires_confirmation},
              {"minimumBookingNotice", f.minimum_booking_notice},
              {"beforeEventBuffer", f.before_event_buffer},
              {"afterEventBuffer", f.after_event_buffer},
              {"slotInterval", f.slot_interval ? Json(*f.slot_interval) : Json(nullptr)},
              {"scheduleId", f.schedule_id ? Json(*f.schedule_id) : Json(nullptr)},
              {"bookingLimitsCount", BookingLimitsJson(f.booking_limits)},
              {"ownerId", et.owner_id},
              {"disableGuests", f.disable_guests},
              {"lockTimeZoneToggleOnBookingPage", f.lock_time_zone_toggle},
              {"forwardParamsSuccessRedirect", f.forward_params_success_redirect},
              {"successRedirectUrl", f.success_redirect_url ? Json(*f.success_redirect_url) : Json(nullptr)},
              {"metadata", f.metadata},
              {"price", 0},
              {"currency", f.currency},
              {"isInstantEvent", false},
              {"recurrence", nullptr},
              {"users", owner_username.empty() ? Json::array() : Json::array({owner_username})},
              {"bookingFields", BookingFieldsJson(f.booking_fields)}};
}

std::optional<std::string> BookingLocation(const Json& locations) {
  if (!locations.is_array() || locations.empty() || !locations[0].is_object()) return std::nullopt;
  const Json& first = locations[0];
  const std::string type = first.value("type", "");
  if (type == "integration" && first.value("integration", "") == "google-meet")
    return "integrations:google:meet";
  if ((type == "address" || type == "link" || type == "phone") && first.contains(type) &&
      first[type].is_string()) {
    return first[type].get<std::string>();
  }
  return std::nullopt;
}

}  // namespace rendezvous::bookings
