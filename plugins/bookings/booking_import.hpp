// `admin booking import`: stores a booking brought over from another system. No event is written
// (it brings history over); an accepted booking that has already ended is later completed by the
// sweep without a BOOKING_COMPLETED event. The booking is written as a HostWrites change, under the
// host's lock as a booking made through the API is, and the slots' cache is told. Thread-safe;
// calls may throw DatabaseUnavailable. The UserDirectory must outlive it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "booking.hpp"
#include "host_writes.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/user.hpp"

namespace rendezvous::bookings {

struct ImportRequest {
  int64_t user_id = 0;
  int64_t event_type_id = 0;
  Millis start = 0;
  std::string attendee_name;
  std::string attendee_email;
  BookingStatus status = BookingStatus::kAccepted;
};

class BookingImport {
 public:
  // `writes`: the host changes shared with BookingFlow (and the booked times the slots read).
  BookingImport(UserDirectory& users, std::shared_ptr<HostWrites> writes);

  // Answers the booking as the API shows it. NotFound for an unknown user or an event type that
  // is not the user's; Invalid naming start for a start from 9999-01-01 on (max_days_ahead is the
  // public API's rule: imports bring far-future bookings over too).
  Result<Json> Import(const ImportRequest& request);

 private:
  UserDirectory& users_;
  std::shared_ptr<HostWrites> writes_;
};

}  // namespace rendezvous::bookings
