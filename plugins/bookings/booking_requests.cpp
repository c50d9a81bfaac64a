#include "booking_requests.hpp"

#include <algorithm>
#include <initializer_list>

#include "field_checks.hpp"
#include "rendezvous/digits.hpp"
#include "rendezvous/list_page.hpp"
#include "rendezvous/text.hpp"

namespace rendezvous::bookings {
Result<ListQuery> ParseListQuery(const std::multimap<std::string, std::string>& query) {
  ListQuery out;
  if (Status e = RefuseRepeated(query, {"status", "afterStart", "beforeEnd", "eventTypeId", "skip", "take"});
      !e.ok()) {
    return e;
  }
  auto get = [&](const char* name) { return QueryParam(query, name); };
  auto time_param = [&](const char* name) { return QueryTimeParam(query, name); };
  if (auto v = get("status")) {
    if (v->size() > 200) return FieldInvalid("status", "is too long");
    size_t pos = 0;
    while (pos <= v->size()) {
      const size_t comma = std::min(v->find(',', pos), v->size());
      auto s = ParseStatus(text::Trim(std::string_view(*v).substr(pos, comma - pos)));
      if (!s) {
        return FieldInvalid(
            "status", "must be a comma-separated list of accepted, pending, cancelled, rejected, completed");
      }
      if (std::find(out.statuses.begin(), out.statuses.end(), *s) == out.statuses.end())
        out.statuses.push_back(*s);
      pos = comma + 1;
    }
  }
  if (auto v = time_param("afterStart")) {
    out.after_start = time::ParseIso(*v);
    if (!out.after_start)
      return FieldInvalid("afterStart",
                          "must be an ISO 8601 date-time with a zone, e.g. 2026-05-04T09:00:00Z");
  }
  if (auto v = time_param("beforeEnd")) {
    out.before_end = time::ParseIso(*v);
    if (!out.before_end)
      return FieldInvalid("beforeEnd",
                          "must be an ISO 8601 date-time with a zone, e.g. 2026-05-04T17:00:00Z");
  }
  if (auto v = get("eventTypeId")) {
    out.event_type_id = text::ParseDigits(*v, 1);
    if (!out.event_type_id) return FieldInvalid("eventTypeId", "must be a positive integer");
  }
  Result<ListPage> page = ParseListPage(query, {kDefaultTake, kMaxTake, kMaxSkip});
  if (!page.ok()) return page.status();
  out.skip = page->skip;
  out.take = static_cast<int>(page->take);
  return out;
}

Status ParseConfirmBody(const Json& body) {
  return OnlyMembers(body, {});
}

Result<std::optional<std::string>> ParseDeclineBody(const Json& body) {
  if (Status e = OnlyMembers(body, {"reason"}); !e.ok()) return e;
  std::optional<std::string> reason;
  if (!body.contains("reason") || body["reason"].is_null()) return reason;
  if (!body["reason"].is_string()) return FieldInvalid("reason", "must be a string");
  std::string trimmed(text::Trim(body["reason"].get<std::string>()));
  if (std::string p = CheckText(trimmed, kMaxReasonChars, true); !p.empty()) return FieldInvalid("reason", p);
  if (!trimmed.empty()) reason = std::move(trimmed);
  return reason;
}

Result<AbsentMarks> ParseMarkAbsentBody(const Json& body) {
  AbsentMarks out;
  if (Status e = OnlyMembers(body, {"host", "attendees"}); !e.ok()) return e;
  if (body.contains("host") && !body["host"].is_null()) {
    if (!body["host"].is_boolean()) return FieldInvalid("host", "must be true or false");
    out.host = body["host"].get<bool>();
  }
  if (body.contains("attendees") && !body["attendees"].is_null()) {
    const Json& list = body["attendees"];
    if (!list.is_array()) return FieldInvalid("attendees", "must be an array");
    if (list.size() > kMaxAbsentAttendees) {
      return FieldInvalid("attendees",
                          "must have at most " + std::to_string(kMaxAbsentAttendees) + " entries");
    }
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string at = "attendees[" + std::to_string(i) + "]";
      const Json& a = list[i];
      if (!a.is_object()) return FieldInvalid(at, "must be an object");
      for (auto it = a.begin(); it != a.end(); ++it) {
        if (it.key() != "email" && it.key() != "absent")
          return FieldInvalid(at + "." + it.key(), "is not accepted here");
      }
      if (!a.contains("email") || !a["email"].is_string() || !IsEmail(a["email"].get<std::string>())) {
        return FieldInvalid(at + ".email", "must be an e-mail address");
      }
      if (!a.contains("absent") || !a["absent"].is_boolean())
        return FieldInvalid(at + ".absent", "must be true or false");
      out.attendees.emplace_back(a["email"].get<std::string>(), a["absent"].get<bool>());
    }
  }
  if (!out.host && out.attendees.empty()) return FieldInvalid("body", "must give host, attendees or both");
  return out;
}

Result<bool> ApplyAbsentMarks(const AbsentMarks& marks, Booking& booking) {
  for (size_t i = 0; i < marks.attendees.size(); ++i) {
    const std::string& email = marks.attendees[i].first;
    if (std::none_of(booking.attendees.begin(), booking.attendees.end(),
                     [&](const Attendee& a) { return text::EqualsIgnoreCase(a.email, email); })) {
      return FieldInvalid("attendees[" + std::to_string(i) + "].email", "is not an attendee of this booking");
    }
  }
  bool marked_absent = false;
  for (const auto& [email, absent] : marks.attendees) {
    for (Attendee& a : booking.attendees) {
      if (text::EqualsIgnoreCase(a.email, email)) a.absent = absent;
    }
    marked_absent = marked_absent || absent;
  }
  if (marks.host) {
    booking.host_absent = *marks.host;
    marked_absent = marked_absent || *marks.host;
  }
  return marked_absent;
}

Status CheckAttendee(const std::string& name, const std::string& email) {
  if (text::Trim(name).empty()) return FieldInvalid("attendee-name", "must not be empty");
  if (std::string p = CheckText(name, kMaxNameChars, false); !p.empty())
    return FieldInvalid("attendee-name", p);
  if (!IsEmail(email)) return FieldInvalid("attendee-email", "must be an e-mail address");
  return Status::Ok();
}

}  // namespace rendezvous::bookings
