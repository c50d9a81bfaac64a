#include "public_requests.hpp"

#include <algorithm>

#include "booking_requests.hpp"
#include "field_checks.hpp"
#include "rendezvous/digits.hpp"
#include "rendezvous/text.hpp"

namespace rendezvous::bookings {
namespace {

const char* const kIsoHint = "must be an ISO 8601 date-time with a zone, e.g. 2026-05-04T09:00:00Z";
const char* const kZoneHint = "must be an IANA time zone, e.g. Europe/Berlin";

Result<time::Millis> StartMember(const Json& body) {
  if (!Present(body, "start")) return FieldInvalid("start", "is required");
  const Json& v = body["start"];
  if (!v.is_string() || v.get_ref<const std::string&>().size() > 64) return FieldInvalid("start", kIsoHint);
  auto t = time::ParseIso(v.get<std::string>());
  if (!t) return FieldInvalid("start", kIsoHint);
  return *t;
}

Result<std::optional<std::string>> ReasonMember(const Json& body, const char* name) {
  std::optional<std::string> out;
  if (!Present(body, name)) return out;
  if (!body[name].is_string()) return FieldInvalid(name, "must be a string");
  std::string text(text::Trim(body[name].get<std::string>()));
  if (std::string p = CheckText(text, kMaxReasonChars, true); !p.empty()) return FieldInvalid(name, p);
  if (!text.empty()) out = std::move(text);
  return out;
}

bool IsLanguageTag(const std::string& s) {
  if (s.size() < 2 || s.size() > kMaxLanguageChars || s.front() == '-' || s.back() == '-') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

Result<Attendee> AttendeeMember(const Json& body) {
  if (!Present(body, "attendee")) return FieldInvalid("attendee", "is required");
  const Json& a = body["attendee"];
  if (Status e = OnlyMembers(a, {"name", "email", "timeZone", "language"}, "attendee"); !e.ok()) return e;
  Attendee out;
  if (!Present(a, "name")) return FieldInvalid("attendee.name", "is required");
  if (!a["name"].is_string()) return FieldInvalid("attendee.name", "must be a string");
  out.name = std::string(text::Trim(a["name"].get<std::string>()));
  if (out.name.empty()) return FieldInvalid("attendee.name", "must not be empty");
  if (std::string p = CheckText(out.name, kMaxNameChars, false); !p.empty())
    return FieldInvalid("attendee.name", p);
  if (!Present(a, "email")) return FieldInvalid("attendee.email", "is required");
  if (!a["email"].is_string() ||
      !text::IsEmailAddress(a["email"].get<std::string>(), text::kMaxStoredEmailAddressBytes)) {
    return FieldInvalid("attendee.email", "must be an e-mail address");
  }
  out.email = a["email"].get<std::string>();
  if (!Present(a, "timeZone")) return FieldInvalid("attendee.timeZone", "is required");
  if (!a["timeZone"].is_string() || a["timeZone"].get_ref<const std::string&>().size() > 64 ||
      !time::Zone::Find(a["timeZone"].get<std::string>())) {
    return FieldInvalid("attendee.timeZone", kZoneHint);
  }
  out.time_zone = a["timeZone"].get<std::string>();
  if (Present(a, "language") &&
      (!a["language"].is_string() || !IsLanguageTag(a["language"].get<std::string>()))) {
    return FieldInvalid("attendee.language", "must be a language tag such as en or pt-BR");
  }
  return out;
}

Result<std::vector<std::string>> GuestsMember(const Json& body, const std::string& attendee_email) {
  std::vector<std::string> out;
  if (!Present(body, "guests")) return out;
  const Json& g = body["guests"];
  if (!g.is_array()) return FieldInvalid("guests", "must be an array of e-mail addresses");
  if (g.size() > kMaxGuests) {
    return FieldInvalid("guests", "must have at most " + std::to_string(kMaxGuests) + " entries");
  }
  std::vector<std::string> seen{text::AsciiLower(attendee_email)};
  for (size_t i = 0; i < g.size(); ++i) {
    const std::string at = "guests[" + std::to_string(i) + "]";
    if (!g[i].is_string() ||
        !text::IsEmailAddress(g[i].get<std::string>(), text::kMaxStoredEmailAddressBytes))
      return FieldInvalid(at, "must be an e-mail address");
    std::string lower = text::AsciiLower(g[i].get<std::string>());
    if (std::find(seen.begin(), seen.end(), lower) != seen.end()) {
      return FieldInvalid(at, "repeats the attendee's or another guest's e-mail");
    }
    seen.push_back(std::move(lower));
    out.push_back(g[i].get<std::string>());
  }
  return out;
}

Result<Json> MetadataMember(const Json& body) {
  if (!Present(body, "metadata")) return Json::object();
  const Json& m = body["metadata"];
  if (!m.is_object()) return FieldInvalid("metadata", "must be an object");
  if (m.size() > kMaxMetadataKeys) {
    return FieldInvalid("metadata", "must have at most " + std::to_string(kMaxMetadataKeys) + " keys");
  }
  for (auto it = m.begin(); it != m.end(); ++it) {
    if (it.key().empty() || !CheckText(it.key(), kMaxMetadataKeyChars, false).empty()) {
      return FieldInvalid("metadata", "keys must be 1-" + std::to_string(kMaxMetadataKeyChars) +
                                          " characters without control characters");
    }
    const std::string at = "metadata." + it.key();
    const Json& v = it.value();
    if (v.is_string()) {
      if (std::string p = CheckText(v.get<std::string>(), kMaxMetadataValueChars, true); !p.empty()) {
        return FieldInvalid(at, p);
      }
    } else if (!v.is_boolean() && !v.is_number()) {
      return FieldInvalid(at, "must be a string, a number or a boolean");
    }
  }
  return m;
}

}  // namespace

Result<SlotsQuery> ParseSlotsQuery(const std::multimap<std::string, std::string>& query) {
  if (Status e = RefuseRepeated(query, {"eventTypeId", "start", "end", "timeZone"}); !e.ok()) return e;
  SlotsQuery out;
  auto id = QueryParam(query, "eventTypeId");
  if (!id) return FieldInvalid("eventTypeId", "is required");
  auto parsed_id = text::ParseDigits(*id, 1);
  if (!parsed_id) return FieldInvalid("eventTypeId", "must be a positive integer");
  out.event_type_id = *parsed_id;
  if (auto name = QueryParam(query, "timeZone")) {
    auto zone = name->size() <= 64 ? time::Zone::Find(*name) : std::nullopt;
    if (!zone) return FieldInvalid("timeZone", kZoneHint);
    out.zone = *zone;
  }
  const char* const hint = "must be a date (YYYY-MM-DD) or an ISO 8601 date-time with a zone";
  auto instant = [&](const char* name, bool is_end) -> Result<time::Millis> {
    auto v = QueryTimeParam(query, name);
    if (!v) return FieldInvalid(name, "is required");
    if (v->size() > 64) return FieldInvalid(name, hint);
    if (auto day = time::ParseDate(*v)) {
      if (!is_end) return out.zone.StartOfDay(*day);
      return out.zone.StartOfDay(time::CivilFromDays(time::DaysFromCivil(*day) + 1));
    }
    auto t = time::ParseIso(*v);
    if (!t) return FieldInvalid(name, hint);
    return *t;
  };
  Result<time::Millis> from = instant("start", false);
  if (!from.ok()) return from.status();
  Result<time::Millis> to = instant("end", true);
  if (!to.ok()) return to.status();
  if (*to <= *from) return FieldInvalid("end", "must be after start");
  if (*to - *from > kMaxSlotRangeDays * time::kMillisPerDay) {
    return FieldInvalid("end", "must be at most " + std::to_string(kMaxSlotRangeDays) + " days after start");
  }
  out.from = *from;
  out.to = *to;
  return out;
}

Result<CreateRequest> ParseCreateBody(const Json& body) {
  if (Status e = OnlyMembers(body, {"start", "eventTypeId", "attendee", "guests", "metadata", "location",
                                    "bookingFieldsResponses", "reservationUid"});
      !e.ok()) {
    return e;
  }
  CreateRequest out;
  Result<time::Millis> start = StartMember(body);
  if (!start.ok()) return start.status();
  out.start = *start;
  if (!Present(body, "eventTypeId")) return FieldInvalid("eventTypeId", "is required");
  const Json& id = body["eventTypeId"];
  if (!id.is_number_integer() || id.get<int64_t>() <= 0)
    return FieldInvalid("eventTypeId", "must be a positive integer");
  out.event_type_id = id.get<int64_t>();
  Result<Attendee> attendee = AttendeeMember(body);
  if (!attendee.ok()) return attendee.status();
  out.attendee = std::move(*attendee);
  Result<std::vector<std::string>> guests = GuestsMember(body, out.attendee.email);
  if (!guests.ok()) return guests.status();
  out.guests = std::move(*guests);
  Result<Json> metadata = MetadataMember(body);
  if (!metadata.ok()) return metadata.status();
  out.metadata = std::move(*metadata);
  if (Present(body, "location")) {
    if (!body["location"].is_string()) return FieldInvalid("location", "must be a string");
    std::string loc(text::Trim(body["location"].get<std::string>()));
    if (loc.empty()) return FieldInvalid("location", "must not be empty");
    if (std::string p = CheckText(loc, kMaxLocationChars, false); !p.empty())
      return FieldInvalid("location", p);
    out.location = std::move(loc);
  }
  if (Present(body, "bookingFieldsResponses")) {
    if (!body["bookingFieldsResponses"].is_object()) {
      return FieldInvalid("bookingFieldsResponses", "must be an object of booking field slugs to answers");
    }
    out.booking_fields_responses = body["bookingFieldsResponses"];
  }
  if (Present(body, "reservationUid")) {
    const Json& uid = body["reservationUid"];
    if (!uid.is_string() || uid.get_ref<const std::string&>().empty() ||
        uid.get_ref<const std::string&>().size() > 255) {
      return FieldInvalid("reservationUid", "must be the reservationUid of POST /v2/slots/reservations");
    }
    out.reservation_uid = uid.get<std::string>();
  }
  return out;
}

Result<std::optional<std::string>> ParseCancelBody(const Json& body) {
  if (Status e = OnlyMembers(body, {"cancellationReason"}); !e.ok()) return e;
  return ReasonMember(body, "cancellationReason");
}

Result<RescheduleRequest> ParseRescheduleBody(const Json& body) {
  if (Status e = OnlyMembers(body, {"start", "reschedulingReason"}); !e.ok()) return e;
  RescheduleRequest out;
  Result<time::Millis> start = StartMember(body);
  if (!start.ok()) return start.status();
  out.start = *start;
  Result<std::optional<std::string>> reason = ReasonMember(body, "reschedulingReason");
  if (!reason.ok()) return reason.status();
  out.reason = std::move(*reason);
  return out;
}

Status CheckIdempotencyKey(const std::string& key) {
  if (key.empty() || key.size() > kMaxIdempotencyKeyChars ||
      !std::all_of(key.begin(), key.end(), [](char c) { return c > 0x20 && c < 0x7f; })) {
    return Status::Invalid("Idempotency-Key",
                           "the Idempotency-Key header must be 1-255 visible ASCII characters");
  }
  return Status::Ok();
}

}  // namespace rendezvous::bookings
