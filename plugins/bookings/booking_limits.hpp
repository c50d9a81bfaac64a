// An event type's booking limits per period (bookingLimitsCount, DESIGN §9): the day, week, month
// and year of the host's time zone that hold an instant (weeks begin on the host's weekStart), and
// which of them are full. Pure logic; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "event_type.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/time.hpp"
#include "schedule.hpp"

namespace rendezvous::bookings {

enum class LimitPeriod { kDay, kWeek, kMonth, kYear };

// The host's calendar: its time zone and the ISO weekday its weeks begin on (1 = Monday).
struct HostCalendar {
  time::Zone zone = time::Zone::Utc();
  unsigned week_start = 1;
};
// From a user's timeZone and weekStart ("Monday" .. "Sunday"); UTC and Monday when unknown.
HostCalendar HostCalendarOf(const std::string& time_zone, const std::string& week_start);

// The period of `kind` holding `t`.
TimeRange PeriodOf(LimitPeriod kind, time::Millis t, const HostCalendar& calendar);

// The span that holds every limited period touching [from, to): what must be counted.
TimeRange LimitedSpan(const BookingLimits& limits, time::Millis from, time::Millis to, const HostCalendar& calendar);

// Ok when one more booking may start at `start`, given the starts already booked (any order) in
// LimitedSpan(start, start + 1); else a 409 with reason "booking_limit_reached" naming the period.
Status CheckBookingLimits(const BookingLimits& limits, time::Millis start, const std::vector<time::Millis>& booked,
                          const HostCalendar& calendar);

// `starts` (ascending) without those in a full period, given the starts already booked (any order)
// in LimitedSpan of their range.
std::vector<time::Millis> WithinBookingLimits(const BookingLimits& limits, std::vector<time::Millis> starts,
                                              const std::vector<time::Millis>& booked, const HostCalendar& calendar);

}  // namespace rendezvous::bookings
