// The owner's and the completion sweep's moves between booking states, and the booking event each
// one announces. Pure logic; thread-safe.
#pragma once

#include "booking.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::bookings {

// What can happen to an existing booking. (Creating one writes BOOKING_CREATED.)
enum class BookingAction {
  kConfirm,     // owner: pending -> accepted            BOOKING_CONFIRMED
  kDecline,     // owner: pending -> rejected            BOOKING_REJECTED
  kMarkAbsent,  // owner: accepted|completed, started; status unchanged   BOOKING_NO_SHOW
  kComplete,    // completion sweep: accepted, ended -> completed          BOOKING_COMPLETED
  kCancel,      // public: pending|accepted, not ended -> cancelled        BOOKING_CANCELLED
  kReschedule,  // public: pending|accepted, not ended -> cancelled, replaced by a new booking
                //   (the event, BOOKING_RESCHEDULED, is the new booking's)
  kReopen,      // owner: cancelled|rejected, not started -> accepted, or pending when the event
                //   type requires confirmation                           BOOKING_REOPENED
};

// Ok when `action` may be applied to a booking in `from` (`started`: its start has passed,
// `ended`: its end has passed); else a Conflict saying why not.
Status CheckTransition(BookingStatus from, BookingAction action, bool started, bool ended);
// The status after an allowed action (kReopen: accepted; the caller makes it pending when the
// event type requires confirmation).
BookingStatus StatusAfter(BookingStatus from, BookingAction action);
// The outbox event type (webhook trigger) of an action.
const char* TriggerFor(BookingAction action);

}  // namespace rendezvous::bookings
