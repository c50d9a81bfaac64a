#include "booking_requests.hpp"

#include <algorithm>
#include <initializer_list>

#include "field_checks.hpp"
#include "rendezvous/digits.hpp"
#include "rendezvous/pagination.hpp"
#include "rendezvous/text.hpp"

namespace rendezvous::bookings {
namespace {

constexpr const char* kStatusProblem =
    "must be a comma-separated list of accepted, pending, cancelled, rejected, completed, upcoming, "
    "unconfirmed, past, recurring";

std::optional<ListPeriod> ParsePeriod(std::string_view name) {
  if (name == "upcoming") return ListPeriod::kUpcoming;
  if (name == "unconfirmed") return ListPeriod::kUnconfirmed;
  if (name == "past") return ListPeriod::kPast;
  if (name == "recurring") return ListPeriod::kRecurring;
  return std::nullopt;
}

// The trimmed items of a list parameter given as `name` or `name[]`, each value a comma list, as
// Cal.com's clients send arrays (repeated, bracketed or comma-joined). An empty item, a value
// longer than kMaxListParamChars or more than `max_items` items is 400 naming `name`.
Result<std::vector<std::string>> ListItems(const std::multimap<std::string, std::string>& query,
                                           const std::string& name, size_t max_items,
                                           const std::string& problem) {
  std::vector<std::string> items;
  for (const std::string& key : {name, name + "[]"}) {
    auto [from, to] = query.equal_range(key);
    for (auto it = from; it != to; ++it) {
      const std::string& v = it->second;
      if (v.size() > kMaxListParamChars) return FieldInvalid(name, "is too long");
      size_t pos = 0;
      while (pos <= v.size()) {
        const size_t comma = std::min(v.find(',', pos), v.size());
        const std::string_view item = text::Trim(std::string_view(v).substr(pos, comma - pos));
        if (item.empty()) return FieldInvalid(name, problem);
        if (items.size() == max_items)
          return FieldInvalid(name, "must have at most " + std::to_string(max_items) + " entries");
        items.emplace_back(item);
        pos = comma + 1;
      }
    }
  }
  return items;
}

template <typename T>
void AddOnce(std::vector<T>& list, T value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

Result<std::optional<SortOrder>> SortParam(const std::multimap<std::string, std::string>& query,
                                           const char* name) {
  std::optional<SortOrder> out;
  if (auto v = QueryParam(query, name)) {
    if (*v == "asc") {
      out = SortOrder::kAsc;
    } else if (*v == "desc") {
      out = SortOrder::kDesc;
    } else {
      return FieldInvalid(name, "must be asc or desc");
    }
  }
  return out;
}

// A trimmed text parameter of at most max_chars characters; nullopt when absent or blank.
Result<std::optional<std::string>> TextParam(const std::multimap<std::string, std::string>& query,
                                             const char* name, size_t max_chars) {
  std::optional<std::string> out;
  auto v = QueryParam(query, name);
  if (!v) return out;
  if (v->size() > 4 * max_chars)
    return FieldInvalid(name, "must be at most " + std::to_string(max_chars) + " characters");
  const std::string_view trimmed = text::Trim(*v);
  if (std::string p = CheckText(trimmed, max_chars, false); !p.empty()) return FieldInvalid(name, p);
  if (!trimmed.empty()) out = std::string(trimmed);
  return out;
}

}  // namespace

Result<ListQuery> ParseListQuery(const std::multimap<std::string, std::string>& query) {
  ListQuery out;
  if (Status e =
          RefuseRepeated(query, {"afterStart", "beforeEnd", "eventTypeId", "attendeeEmail", "attendeeName",
                                 "sortStart", "sortEnd", "sortCreated", "skip", "take"});
      !e.ok()) {
    return e;
  }
  auto get = [&](const char* name) { return QueryParam(query, name); };
  auto time_param = [&](const char* name) { return QueryTimeParam(query, name); };
  Result<std::vector<std::string>> statuses = ListItems(query, "status", kMaxListStatuses, kStatusProblem);
  if (!statuses.ok()) return statuses.status();
  for (const std::string& name : *statuses) {
    if (auto s = ParseStatus(name)) {
      AddOnce(out.statuses, *s);
    } else if (auto p = ParsePeriod(name)) {
      AddOnce(out.periods, *p);
    } else {
      return FieldInvalid("status", kStatusProblem);
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
  constexpr const char* kIdsProblem = "must be a comma-separated list of positive integers";
  Result<std::vector<std::string>> ids = ListItems(query, "eventTypeIds", kMaxListEventTypeIds, kIdsProblem);
  if (!ids.ok()) return ids.status();
  for (const std::string& item : *ids) {
    std::optional<int64_t> id = text::ParseDigits(item, 1);
    if (!id) return FieldInvalid("eventTypeIds", kIdsProblem);
    AddOnce(out.event_type_ids, *id);
  }
  Result<std::optional<std::string>> email = TextParam(query, "attendeeEmail", kMaxEmailChars);
  if (!email.ok()) return email.status();
  out.attendee_email = std::move(*email);
  Result<std::optional<std::string>> name = TextParam(query, "attendeeName", kMaxNameChars);
  if (!name.ok()) return name.status();
  out.attendee_name = std::move(*name);
  for (auto [param, field] :
       {std::pair{"sortStart", &ListQuery::sort_start}, std::pair{"sortEnd", &ListQuery::sort_end},
        std::pair{"sortCreated", &ListQuery::sort_created}}) {
    Result<std::optional<SortOrder>> order = SortParam(query, param);
    if (!order.ok()) return order.status();
    out.*field = *order;
  }
  Result<Pagination> page = ParsePagination(query, {kDefaultTake, kMaxTake, kMaxSkip});
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
      if (!a.contains("email") || !a["email"].is_string() ||
          !text::IsEmailAddress(a["email"].get<std::string>(), text::kMaxStoredEmailAddressBytes)) {
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
  if (!text::IsEmailAddress(email, text::kMaxStoredEmailAddressBytes))
    return FieldInvalid("attendee-email", "must be an e-mail address");
  return Status::Ok();
}

}  // namespace rendezvous::bookings
