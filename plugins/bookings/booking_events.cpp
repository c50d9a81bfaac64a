#include "booking_events.hpp"

#include "booking_fields.hpp"

namespace rendezvous::bookings {

Json EventPayload(const Booking& b, const User& host, const EventType& et) {
  Json p = BookingPayloadJson(b, host);
  p["organizer"] = {{"id", host.id}, {"name", host.name}, {"email", host.email}, {"timeZone", host.time_zone}};
  p["bookingId"] = b.id;
  p["startTime"] = p["start"];
  p["endTime"] = p["end"];
  p["type"] = et.fields.slug;
  p["eventTitle"] = et.fields.title;
  p["length"] = b.duration;
  const Attendee booker = b.attendees.empty() ? Attendee{} : b.attendees.front();
  p["responses"] =
      PayloadResponsesJson(booker.name, booker.email, GuestEmails(b), b.description, b.responses);
  p["userFieldsResponses"] = b.responses.is_object() ? b.responses : Json::object();
  return p;
}

Json RescheduledPayload(const Booking& b, const Booking& old, const User& host, const EventType& et) {
  Json p = EventPayload(b, host, et);
  p["rescheduleUid"] = old.uid;
  p["rescheduleStartTime"] = time::FormatIso(old.start);
  p["rescheduleEndTime"] = time::FormatIso(old.end);
  return p;
}

Json EventEnvelope(std::string_view trigger, Millis created_at, const Json& payload) {
  return Json{{"triggerEvent", std::string(trigger)}, {"createdAt", time::FormatIso(created_at)}, {"payload", payload}};
}

}  // namespace rendezvous::bookings
