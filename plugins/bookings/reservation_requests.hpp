// Slot reservations (docs/bookings.md "Holding a slot"): the settings
// (plugins.bookings.reservations), the body of POST /v2/slots/reservations and of its PATCH, and
// a reservation as the API shows it (Cal.com's ReserveSlotOutput_2024_09_04). Errors are 400
// statuses naming the field as the client wrote it. Pure logic; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "booking.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::bookings {

// plugins.bookings.reservations: how long an anonymous hold lasts, the longest hold an event
// type's owner may ask for (minutes), and the holds one client address may have open at once.
struct ReservationSettings {
  int minutes = 5;
  int max_minutes = 15;
  int per_address = 10;
};

// `{eventTypeId, slotStart, slotDuration?, reservationDuration?}` (both routes).
struct ReserveRequest {
  int64_t event_type_id = 0;
  time::Millis slot_start = 0;
  std::optional<int> slot_duration;        // minutes; the event type's length when given
  std::optional<int> reservation_minutes;  // 1..max_minutes; the owner's only
};
Result<ReserveRequest> ParseReserveBody(const Json& body, int max_minutes);

// A hold as stored.
struct SlotReservation {
  int64_t id = 0;
  std::string uid;
  int64_t event_type_id = 0;
  int64_t host_id = 0;
  time::Millis start = 0;
  time::Millis end = 0;
  int minutes = 0;  // how long it is held from its creation or last change
  time::Millis until = 0;
};
// {eventTypeId, slotStart, slotEnd, slotDuration, reservationUid, reservationDuration,
// reservationUntil}, times in ISO 8601 UTC.
Json ReservationJson(const SlotReservation& r);

// Whether `uid` can be a reservation's uid (1..64 of [A-Za-z0-9_-]).
bool IsReservationUid(const std::string& uid);

}  // namespace rendezvous::bookings
