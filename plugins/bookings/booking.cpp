#include "booking.hpp"

#include "booking_fields.hpp"

namespace rendezvous::bookings {
namespace {

Json OptionalText(const std::optional<std::string>& v) {
  return v ? Json(*v) : Json(nullptr);
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

std::string BookingTitle(std::string_view event_type_title, std::string_view organizer_name,
                         std::string_view attendee_name) {
  std::string t(event_type_title);
  t += " between ";
  t += organizer_name;
  t += " and ";
  t += attendee_name;
  return t;
}

Json BookingPayloadJson(const Booking& b, const User& host) {
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
              {"start", time::FormatIso(b.start)},
              {"end", time::FormatIso(b.end)},
              {"duration", b.duration},
              {"eventTypeId", b.event_type_id},
              {"attendees", std::move(attendees)},
              {"hosts", std::move(hosts)},
              {"location", OptionalText(b.location)},
              {"metadata", b.metadata.is_object() ? b.metadata : Json::object()},
              {"cancellationReason", OptionalText(b.cancellation_reason)},
              {"rescheduledFromUid", OptionalText(b.rescheduled_from_uid)},
              {"rescheduledToUid", OptionalText(b.rescheduled_to_uid)},
              {"createdAt", time::FormatIso(b.created_at)}};
}

Json BookingJson(const Booking& b, const User& host) {
  Json j = BookingPayloadJson(b, host);
  for (const char* optional : {"location", "cancellationReason", "rescheduledFromUid", "rescheduledToUid"}) {
    if (j[optional].is_null()) j.erase(optional);
  }
  j["eventType"] = {{"id", b.event_type_id}, {"slug", b.event_type_slug}};
  j["absentHost"] = b.host_absent;
  j["hosts"][0]["username"] = host.username;
  j["guests"] = GuestEmails(b);
  const Attendee booker = b.attendees.empty() ? Attendee{} : b.attendees.front();
  j["bookingFieldsResponses"] =
      BookingResponsesJson(booker.name, booker.email, j["guests"], b.description, b.responses);
  return j;
}

Json GuestEmails(const Booking& b) {
  Json guests = Json::array();
  for (size_t i = 1; i < b.attendees.size(); ++i) guests.push_back(b.attendees[i].email);
  return guests;
}

}  // namespace rendezvous::bookings
