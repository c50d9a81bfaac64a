// Booking events (DESIGN §6): the payload every booking event carries and its outbox envelope.
// Pure logic; thread-safe.
#pragma once

#include <string_view>

#include "booking.hpp"
#include "event_type.hpp"

namespace rendezvous::bookings {

constexpr const char* kOutboxTopic = "bookings";

// The booking as the API shows it, plus `organizer: {id, name, email, timeZone}` and the original
// service's names: `bookingId`, `startTime`, `endTime`, `type` (the event type's slug),
// `eventTitle` and `length` (minutes), and Cal.com's `responses` (every answered booking field,
// default ones included, as {slug: {label, value}}: PayloadResponsesJson) and
// `userFieldsResponses` (the custom ones alone). `host` is the booking's host, `event_type` its
// event type.
Json EventPayload(const Booking& booking, const User& host, const EventType& event_type);
// BOOKING_RESCHEDULED's payload: the new booking's, plus `rescheduleUid`, `rescheduleStartTime` and
// `rescheduleEndTime` of the booking it replaces.
Json RescheduledPayload(const Booking& booking, const Booking& old, const User& host, const EventType& event_type);
// {"triggerEvent", "createdAt", "payload"}.
Json EventEnvelope(std::string_view trigger, Millis created_at, const Json& payload);

}  // namespace rendezvous::bookings
