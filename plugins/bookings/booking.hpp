// Bookings (DESIGN §9): their states, the title, and the JSON the API (and every booking event)
// shows. Pure logic; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rendezvous/time.hpp"
#include "rendezvous/user.hpp"

namespace rendezvous::bookings {

using Json = nlohmann::json;
using time::Millis;

enum class BookingStatus { kAccepted, kPending, kCancelled, kRejected, kCompleted };

std::string_view StatusName(BookingStatus status);
std::optional<BookingStatus> ParseStatus(std::string_view name);
// Accepted and pending bookings hold their time: no other booking of the host may overlap them.
inline bool BlocksTime(BookingStatus status) {
  return status == BookingStatus::kAccepted || status == BookingStatus::kPending;
}

struct Attendee {
  std::string name;
  std::string email;
  std::string time_zone = "UTC";
  bool absent = false;
};

struct Booking {
  int64_t id = 0;
  std::string uid;
  int64_t event_type_id = 0;
  std::string event_type_slug;  // the event type's slug, as the API shows it (not stored with the booking)
  int64_t host_id = 0;  // the event type's owner when the booking was made
  std::string title;
  std::string description;
  BookingStatus status = BookingStatus::kAccepted;
  Millis start = 0;
  Millis end = 0;
  int duration = 0;  // minutes
  std::vector<Attendee> attendees;
  std::optional<std::string> location;
  Json metadata = Json::object();
  std::optional<std::string> cancellation_reason;  // also the decline reason of a rejected booking
  std::optional<std::string> rescheduled_from_uid;
  std::optional<std::string> rescheduled_to_uid;
  bool host_absent = false;  // recorded by mark-absent
  Millis created_at = 0;
  // The answers to the event type's custom booking questions: {slug: {label, value}}, the label as
  // it was when the booking was made (CheckBookingResponses). The default fields' answers are the
  // booking's own (attendee, guests; notes is the description).
  Json responses = Json::object();
};

// "<event type title> between <organizer name> and <attendee name>".
std::string BookingTitle(std::string_view event_type_title, std::string_view organizer_name,
                         std::string_view attendee_name);

// The booking as the API shows it (DESIGN §9, Cal.com's BookingOutput): `{id, uid, title,
// description, status, start, end, duration, eventTypeId, eventType:{id, slug}, attendees:[{name,
// email, timeZone, absent}], hosts:[{id, name, email, timeZone}], location?, metadata,
// cancellationReason?, rescheduledFromUid?, rescheduledToUid?, absentHost, createdAt}` with Cal.com's
// `hosts[].username`, `guests` (the e-mails of the attendees after the first, who booked) and
// `bookingFieldsResponses` (BookingResponsesJson); an optional field without a value is omitted.
// `host` is the user of booking.host_id.
Json BookingJson(const Booking& booking, const User& host);

// The booking as webhook payloads carry it: the fields of BookingJson without `eventType` and
// `absentHost`, every optional field present (null without a value).
Json BookingPayloadJson(const Booking& booking, const User& host);
// The e-mails of the booking's guests (the attendees after the first, who booked).
Json GuestEmails(const Booking& booking);

}  // namespace rendezvous::bookings
