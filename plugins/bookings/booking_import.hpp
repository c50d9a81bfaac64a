// `admin booking import`: stores a booking brought over from another system. No event is written
// (it brings history over); an accepted booking that has already ended is later completed by the
// sweep without a BOOKING_COMPLETED event. The host's booked times change under its lock, as a
// booking made through the API changes them, and the slots' cache is told. Thread-safe; calls may
// throw DatabaseUnavailable. The Database, UserDirectory and cache must outlive it.
#pragma once

#include <cstdint>
#include <string>

#include "booked_times_cache.hpp"
#include "booking.hpp"
#include "rendezvous/database.hpp"
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
  // `booked_times`: the cache the slots read (BookingFlow::booked_times()).
  BookingImport(Database& db, UserDirectory& users, BookedTimesCache& booked_times);

  // Answers the booking as the API shows it. NotFound for an unknown user or an event type that
  // is not the user's; Invalid naming start for a start from 9999-01-01 on (max_days_ahead is the
  // public API's rule: imports bring far-future bookings over too).
  Result<Json> Import(const ImportRequest& request);

 private:
  Database& db_;
  UserDirectory& users_;
  BookedTimesCache& booked_times_;
};

}  // namespace rendezvous::bookings
