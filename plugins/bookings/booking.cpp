#include "booking.hpp"

#include <algorithm>
#include <cctype>

namespace rendezvous::bookings {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Json OptionalText(const std::optional<std::string>& v) {
  return v ? Json(*v) : Json(nullptr);
}

std::optional<FieldError> OnlyMembers(const Json& body, std::initializer_list<const char*> allowed) {
  if (!body.is_object()) return FieldError{"body", "must be a JSON object"};
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return it.key() == a; })) {
      return FieldError{it.key(), "is not accepted here"};
    }
  }
  return std::nullopt;
}

}  // namespace

std::string_view StatusName(BookingStatus status) {
  switch (status) {
    case BookingStatus::kAccepted:
      return "accepted";
    case BookingStatus::kPending:
      return "pending";
    case BookingStatus::kCancelled:
      return "cancelled";
    case BookingStatus::kRejected:
      return "rejected";
    case BookingStatus::kCompleted:
      return "completed";
  }
  return "accepted";
}

std::optional<BookingStatus> ParseStatus(std::string_view name) {
  for (BookingStatus s : {BookingStatus::kAccepted, BookingStatus::kPending, BookingStatus::kCancelled,
                          BookingStatus::kRejected, BookingStatus::kCompleted}) {
    if (StatusName(s) == name) return s;
  }
  return std::nullopt;
}

std::optional<std::string> CheckTransition(BookingStatus from, BookingAction action, bool started,
                                           bool ended) {
  const std::string is = "the booking is " + std::string(StatusName(from));
  switch (action) {
    case BookingAction::kConfirm:
      if (from != BookingStatus::kPending) return is + "; only a pending booking can be confirmed";
      return std::nullopt;
    case BookingAction::kDecline:
      if (from != BookingStatus::kPending) return is + "; only a pending booking can be declined";
      return std::nullopt;
    case BookingAction::kMarkAbsent:
      if (from != BookingStatus::kAccepted && from != BookingStatus::kCompleted) {
        return is + "; absence can only be recorded for an accepted or completed booking";
      }
      if (!started) return "the booking has not started yet; absence can be recorded once it has started";
      return std::nullopt;
    case BookingAction::kComplete:
      if (from != BookingStatus::kAccepted) return is + "; only an accepted booking can be completed";
      if (!ended) return "the booking has not ended yet";
      return std::nullopt;
  }
  return "unknown action";
}

BookingStatus StatusAfter(BookingStatus from, BookingAction action) {
  switch (action) {
    case BookingAction::kConfirm:
      return BookingStatus::kAccepted;
    case BookingAction::kDecline:
      return BookingStatus::kRejected;
    case BookingAction::kMarkAbsent:
      return from;
    case BookingAction::kComplete:
      return BookingStatus::kCompleted;
  }
  return from;
}

const char* TriggerFor(BookingAction action) {
  switch (action) {
    case BookingAction::kConfirm:
      return "BOOKING_CONFIRMED";
    case BookingAction::kDecline:
      return "BOOKING_REJECTED";
    case BookingAction::kMarkAbsent:
      return "BOOKING_NO_SHOW";
    case BookingAction::kComplete:
      return "BOOKING_COMPLETED";
  }
  return "BOOKING_UPDATED";
}

std::string BookingTitle(std::string_view event_type_title, std::string_view organizer_name,
                         std::string_view attendee_name) {
  std::string t(event_type_title);
  t += " between ";
  t += organizer_name;
  t += " and ";
  t += attendee_name;
  return t;
}

Json BookingJson(const Booking& b, const User& host) {
  Json attendees = Json::array();
  for (const Attendee& a : b.attendees) {
    attendees.push_back(
        {{"name", a.name}, {"email", a.email}, {"timeZone", a.time_zone}, {"absent", a.absent}});
  }
  Json hosts = Json::array();
  hosts.push_back(
      {{"id", host.id}, {"name", host.name}, {"email", host.email}, {"timeZone", host.time_zone}});
  return Json{{"id", b.id},
              {"uid", b.uid},
              {"title", b.title},
              {"description", b.description},
              {"status", std::string(StatusName(b.status))},
              {"start", FormatIsoTime(b.start)},
              {"end", FormatIsoTime(b.end)},
              {"duration", b.duration},
              {"eventTypeId", b.event_type_id},
              {"attendees", std::move(attendees)},
              {"hosts", std::move(hosts)},
              {"location", OptionalText(b.location)},
              {"metadata", b.metadata.is_object() ? b.metadata : Json::object()},
              {"cancellationReason", OptionalText(b.cancellation_reason)},
              {"rescheduledFromUid", OptionalText(b.rescheduled_from_uid)},
              {"rescheduledToUid", OptionalText(b.rescheduled_to_uid)},
              {"createdAt", FormatIsoTime(b.created_at)}};
}

Json EventEnvelope(std::string_view trigger, Millis created_at, const Json& booking_json) {
  return Json{{"triggerEvent", std::string(trigger)},
              {"createdAt", FormatIsoTime(created_at)},
              {"payload", booking_json}};
}

std::optional<FieldError> ParseListQuery(const std::multimap<std::string, std::string>& query,
                                         ListQuery& out) {
  out = ListQuery{};
  for (const char* name : {"status", "afterStart", "beforeEnd", "eventTypeId", "skip", "take"}) {
    if (query.count(name) > 1) return FieldError{name, "must be given at most once"};
  }
  auto get = [&](const char* name) -> std::optional<std::string> {
    auto it = query.find(name);
    if (it == query.end()) return std::nullopt;
    return it->second;
  };
  // An unencoded "+" of a zone offset arrives as a space (form decoding); read it as "+".
  auto time_param = [&](const char* name) -> std::optional<std::string> {
    auto v = get(name);
    if (v && v->size() > 19 && v->find(' ', 16) != std::string::npos) (*v)[v->find(' ', 16)] = '+';
    return v;
  };
  if (auto v = get("status")) {
    if (v->size() > 200) return FieldError{"status", "is too long"};
    size_t pos = 0;
    while (pos <= v->size()) {
      const size_t comma = std::min(v->find(',', pos), v->size());
      const std::string word = Trim(std::string_view(*v).substr(pos, comma - pos));
      auto s = ParseStatus(word);
      if (!s)
        return FieldError{
            "status", "must be a comma-separated list of accepted, pending, cancelled, rejected, completed"};
      if (std::find(out.statuses.begin(), out.statuses.end(), *s) == out.statuses.end())
        out.statuses.push_back(*s);
      pos = comma + 1;
    }
  }
  if (auto v = time_param("afterStart")) {
    out.after_start = ParseIsoTime(*v);
    if (!out.after_start)
      return FieldError{"afterStart", "must be an ISO 8601 date-time with a zone, e.g. 2026-05-04T09:00:00Z"};
  }
  if (auto v = time_param("beforeEnd")) {
    out.before_end = ParseIsoTime(*v);
    if (!out.before_end)
      return FieldError{"beforeEnd", "must be an ISO 8601 date-time with a zone, e.g. 2026-05-04T17:00:00Z"};
  }
  if (auto v = get("eventTypeId")) {
    out.event_type_id = ParsePositiveId(*v);
    if (!out.event_type_id) return FieldError{"eventTypeId", "must be a positive integer"};
  }
  auto number = [](const std::string& text) -> std::optional<int64_t> {
    if (text.empty() || text.size() > 9) return std::nullopt;
    int64_t n = 0;
    for (char c : text) {
      if (c < '0' || c > '9') return std::nullopt;
      n = n * 10 + (c - '0');
    }
    return n;
  };
  if (auto v = get("skip")) {
    auto n = number(*v);
    if (!n || *n > kMaxSkip)
      return FieldError{"skip", "must be an integer between 0 and " + std::to_string(kMaxSkip)};
    out.skip = *n;
  }
  if (auto v = get("take")) {
    auto n = number(*v);
    if (!n || *n < 1 || *n > kMaxTake)
      return FieldError{"take", "must be an integer between 1 and " + std::to_string(kMaxTake)};
    out.take = static_cast<int>(*n);
  }
  return std::nullopt;
}

std::optional<FieldError> ParseConfirmBody(const Json& body) {
  return OnlyMembers(body, {});
}

std::optional<FieldError> ParseDeclineBody(const Json& body, std::optional<std::string>& reason) {
  reason.reset();
  if (auto e = OnlyMembers(body, {"reason"})) return e;
  if (!body.contains("reason") || body["reason"].is_null()) return std::nullopt;
  if (!body["reason"].is_string()) return FieldError{"reason", "must be a string"};
  std::string text = Trim(body["reason"].get<std::string>());
  if (std::string p = CheckText(text, kMaxReasonChars, true); !p.empty()) return FieldError{"reason", p};
  if (!text.empty()) reason = std::move(text);
  return std::nullopt;
}

std::optional<FieldError> ParseMarkAbsentBody(const Json& body, AbsentMarks& out) {
  out = AbsentMarks{};
  if (auto e = OnlyMembers(body, {"host", "attendees"})) return e;
  if (body.contains("host") && !body["host"].is_null()) {
    if (!body["host"].is_boolean()) return FieldError{"host", "must be true or false"};
    out.host = body["host"].get<bool>();
  }
  if (body.contains("attendees") && !body["attendees"].is_null()) {
    const Json& list = body["attendees"];
    if (!list.is_array()) return FieldError{"attendees", "must be an array"};
    if (list.size() > kMaxAbsentAttendees) {
      return FieldError{"attendees", "must have at most " + std::to_string(kMaxAbsentAttendees) + " entries"};
    }
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string at = "attendees[" + std::to_string(i) + "]";
      const Json& a = list[i];
      if (!a.is_object()) return FieldError{at, "must be an object"};
      for (auto it = a.begin(); it != a.end(); ++it) {
        if (it.key() != "email" && it.key() != "absent")
          return FieldError{at + "." + it.key(), "is not accepted here"};
      }
      if (!a.contains("email") || !a["email"].is_string() || !IsEmail(a["email"].get<std::string>())) {
        return FieldError{at + ".email", "must be an e-mail address"};
      }
      if (!a.contains("absent") || !a["absent"].is_boolean())
        return FieldError{at + ".absent", "must be true or false"};
      out.attendees.emplace_back(a["email"].get<std::string>(), a["absent"].get<bool>());
    }
  }
  if (!out.host && out.attendees.empty()) return FieldError{"body", "must give host, attendees or both"};
  return std::nullopt;
}

std::optional<FieldError> ApplyAbsentMarks(const AbsentMarks& marks, Booking& booking, bool& marked_absent) {
  marked_absent = false;
  for (size_t i = 0; i < marks.attendees.size(); ++i) {
    const std::string email = Lower(marks.attendees[i].first);
    auto it = std::find_if(booking.attendees.begin(), booking.attendees.end(),
                           [&](const Attendee& a) { return Lower(a.email) == email; });
    if (it == booking.attendees.end()) {
      return FieldError{"attendees[" + std::to_string(i) + "].email", "is not an attendee of this booking"};
    }
  }
  for (const auto& [email, absent] : marks.attendees) {
    const std::string lower = Lower(email);
    for (Attendee& a : booking.attendees) {
      if (Lower(a.email) == lower) a.absent = absent;
    }
    marked_absent = marked_absent || absent;
  }
  if (marks.host) {
    booking.host_absent = *marks.host;
    marked_absent = marked_absent || *marks.host;
  }
  return std::nullopt;
}

std::optional<FieldError> CheckAttendee(const std::string& name, const std::string& email) {
  if (Trim(name).empty()) return FieldError{"attendee-name", "must not be empty"};
  if (std::string p = CheckText(name, kMaxNameChars, false); !p.empty())
    return FieldError{"attendee-name", p};
  if (!IsEmail(email)) return FieldError{"attendee-email", "must be an e-mail address"};
  return std::nullopt;
}

}  // namespace rendezvous::bookings
