// Busy times from outside the bookings — a user's connected calendars — that the free slots of
// the user's event types must avoid. The calendar plugin provides a BusyTimeSource as
// "calendar.busy_times"; the bookings plugin finds it (PluginContext::Find, from Start() on) and
// asks it for slots. Absent (calendar disabled): only the bookings themselves are busy.
//
// A source that cannot be read (an outside service failing, too slow, or needing the user to
// reconnect) does not fail the caller: the answer carries the busy times that could be found and
// names what could not, so a booking page stays up while one of the host's calendars is down.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rendezvous/time.hpp"

namespace rendezvous {

// [start, end) in UTC.
struct BusyTime {
  time::Millis start = 0;
  time::Millis end = 0;
};

// A source that could not be read: what it is ("google_calendar", "ics_feed") and why, as an
// error code of status.hpp ("upstream_failed", "upstream_timeout", "reconnect_required").
struct BusySourceFailure {
  std::string source;
  std::string code;
};

struct BusyReport {
  std::vector<BusyTime> times;
  std::vector<BusySourceFailure> failures;
};

// Thread-safe: called from request threads at once.
class BusyTimeSource {
 public:
  virtual ~BusyTimeSource() = default;
  // The user's busy times overlapping [from, to) (a range of at most 64 days), in bounded time.
  // May throw DatabaseUnavailable; every other failure is a BusySourceFailure of the report.
  virtual BusyReport BusyTimes(int64_t user_id, time::Millis from, time::Millis to) = 0;
};

}  // namespace rendezvous
