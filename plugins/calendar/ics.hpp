// A small iCalendar (RFC 5545) reader for busy times: VEVENT DTSTART/DTEND/DURATION with UTC,
// TZID and floating date-times and all-day DATE values; STATUS:CANCELLED and TRANSP:TRANSPARENT
// events are not busy. RRULE/RDATE/EXDATE are NOT expanded: a recurring event counts only as its
// first occurrence. Pure and bounded (input size and event count).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/time.hpp"

namespace rendezvous::calendar {

struct IcsTime {
  bool all_day = false;  // a DATE value
  time::CivilDate date;  // all_day
  time::Millis local = 0;  // wall clock (for TZID and floating values)
  std::string tzid;      // TZID parameter ("" when absent)
  bool utc = false;      // ends in Z: `local` is already UTC
};

struct IcsEvent {
  std::string uid;
  std::string summary;
  IcsTime start;
  std::optional<IcsTime> end;
  std::optional<int64_t> duration_seconds;
  bool busy = true;        // false for cancelled or transparent events
  bool recurring = false;  // had an RRULE/RDATE (only the first occurrence is used)
};

struct IcsCalendar {
  std::string name;       // X-WR-CALNAME
  std::string time_zone;  // X-WR-TIMEZONE
  std::vector<IcsEvent> events;
};

constexpr size_t kMaxIcsEvents = 50000;

// nullopt (with `error` set) when `text` is not an iCalendar object (no BEGIN:VCALENDAR ...
// END:VCALENDAR, malformed VEVENT, too many events).
std::optional<IcsCalendar> ParseIcs(std::string_view text, std::string* error);

struct BusyInterval {
  time::Millis start = 0;
  time::Millis end = 0;
};

// Busy intervals of `cal` overlapping [from, to). All-day and floating times are read in the
// feed's X-WR-TIMEZONE, else in `fallback_zone`; unknown TZIDs likewise.
std::vector<BusyInterval> IcsBusyTimes(const IcsCalendar& cal, time::Millis from, time::Millis to,
                                       const time::Zone& fallback_zone);

}  // namespace rendezvous::calendar
