// Where a new booking or slot hold of a host may fall beyond the host's own bookings and holds:
// the busy times of sources outside the bookings (connected calendars) and the horizon
// (plugins.bookings.max_days_ahead); with the slot grid's rules of an event type and the time
// zone of a schedule. Shared by BookingFlow and ReservationFlow. Set before the server serves,
// read without a lock after.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "availability.hpp"
#include "event_type.hpp"
#include "rendezvous/contracts/busy_times.hpp"
#include "rendezvous/status.hpp"
#include "schedule.hpp"

namespace rendezvous::bookings {

// Busy times of a host from outside the bookings (connected calendars) that overlap [from, to),
// with the sources that could not be read (busy_times.hpp).
using BusySource = std::function<BusyReport(int64_t host_id, Millis from, Millis to)>;

// The slot grid's rules of an event type, and the time zone of a schedule (UTC when unknown).
SlotRules RulesOf(const EventType& et);
time::Zone ZoneOf(const Schedule& schedule);

class BookingWindow {
 public:
  // Busy times beyond the host's bookings that slots, bookings and holds must avoid; none by
  // default.
  void SetBusySource(BusySource source) { busy_source_ = std::move(source); }
  // plugins.bookings.max_days_ahead: a booking may start at most this many days from now;
  // 730 by default.
  void SetMaxDaysAhead(int days) { max_days_ahead_ = days; }

  // The busy source's blocks for starts in [from, to) (none without a source). The sources that
  // could not be read are left out (the calendar plugin logs and counts them) and, when
  // `failures` is given, named there.
  std::vector<BusyBlock> OutsideBusy(int64_t host_id, Millis from, Millis to,
                                     std::vector<BusySourceFailure>* failures = nullptr) const;
  // The latest start a booking made at `now` may have.
  Millis Horizon(Millis now) const;
  // A 400 naming start when `start` is further ahead than max_days_ahead.
  Status CheckHorizon(Millis start) const;

 private:
  BusySource busy_source_;
  int max_days_ahead_ = 730;
};

}  // namespace rendezvous::bookings
