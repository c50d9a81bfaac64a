// The bookings a user hosts that have not started, cancelled together
// (rendezvous/contracts/user_bookings.hpp; provided as "bookings.user_bookings"): when the user goes away (a
// managed user deleted by its client). Each cancellation is BookingFlow::Cancel, so each has its event.
// Thread-safe; may throw DatabaseUnavailable. The Database must outlive it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "booking_flow.hpp"
#include "rendezvous/contracts/user_bookings.hpp"
#include "rendezvous/database.hpp"

namespace rendezvous::bookings {

class UpcomingCancellations final : public UserBookings {
 public:
  UpcomingCancellations(Database& db, std::shared_ptr<BookingFlow> flow) : db_(db), flow_(std::move(flow)) {}

  // Reads the uids in batches of 500, at most 200 batches (100,000 bookings); past that it answers
  // kUnavailable so the caller can try again.
  Result<int64_t> CancelUpcoming(int64_t user_id, const std::string& reason) override;

 private:
  Database& db_;
  std::shared_ptr<BookingFlow> flow_;  // held: the service may outlive the plugin object
};

}  // namespace rendezvous::bookings
