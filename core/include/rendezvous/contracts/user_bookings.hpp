// A user's bookings as other plugins act on them. The bookings plugin provides this service as
// "bookings.user_bookings"; without it (bookings disabled) a user has no bookings to act on.
#pragma once

#include <cstdint>
#include <string>

#include "rendezvous/status.hpp"

namespace rendezvous {

// Thread-safe. Calls may throw DatabaseUnavailable.
class UserBookings {
 public:
  virtual ~UserBookings() = default;
  // Cancels every booking the user hosts that has not started (pending or accepted), each as
  // `POST /v2/bookings/{uid}/cancel` does it: one BOOKING_CANCELLED event each, with `reason`.
  // Returns how many it cancelled; a booking that changed meanwhile (cancelled by its attendee,
  // started) is left as it is.
  virtual Result<int64_t> CancelUpcoming(int64_t user_id, const std::string& reason) = 0;
};

}  // namespace rendezvous
