// The iCalendar (RFC 5545) reader of ICS feeds, on libical 3, and the busy times taken from a
// feed.
//
// ParseIcs reads a feed into plain values (no libical object outlives the call): each VEVENT's
// DTSTART/DTEND/DURATION (UTC, TZID, floating and all-day DATE values), STATUS, TRANSP, its
// RRULE/RDATE/EXDATE and RECURRENCE-ID, and the feed's VTIMEZONE blocks whose TZID is not an IANA
// name (Outlook's "W. Europe Standard Time").
//
// IcsBusyTimes expands recurring events (RRULE with libical's iterator, RDATE added, EXDATE and
// RECURRENCE-ID overrides removed; an override counts as the event it is) and answers the busy
// intervals overlapping [from, to). Cancelled and transparent events are free. Times are resolved
// so that recurrences keep their wall-clock time across DST changes: an IANA TZID through
// rendezvous::time, another TZID through the feed's VTIMEZONE for it, and floating, all-day and
// unknown-zone values in the feed's X-WR-TIMEZONE, else the caller's fallback zone.
//
// Bounded for input from outside: the caller caps the input size; ParseIcs caps events and
// nesting; IcsBusyTimes caps occurrences per event and per call and the iterator work per event
// and per call (a rule that reaches a cap counts only the occurrences found until then; the rules
// that would make libical search without a bound are not expanded: see docs/calendar.md).
// Pure functions, safe to call from several threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/time.hpp"

namespace rendezvous::calendar {

struct IcsTime {
  bool all_day = false;    // a DATE value
  time::CivilDate date;    // all_day
  time::Millis local = 0;  // wall clock (for TZID and floating values)
  std::string tzid;        // TZID parameter ("" when absent)
  bool utc = false;        // ends in Z: `local` is already UTC
};

// An RDATE: a start, and for a PERIOD value its own end or duration.
struct IcsRecurrenceDate {
  IcsTime start;
  std::optional<IcsTime> end;
  std::optional<int64_t> duration_seconds;
};

struct IcsEvent {
  std::string uid;
  std::string summary;
  IcsTime start;
  std::optional<IcsTime> end;
  std::optional<int64_t> duration_seconds;
  bool busy = true;                 // false for cancelled or transparent events
  bool recurring = false;           // has an RRULE or RDATE
  std::vector<std::string> rrules;  // RRULE values (normally one)
  std::vector<IcsRecurrenceDate> rdates;
  std::vector<IcsTime> exdates;
  // Set on an override of one occurrence of the recurring event `uid`: the occurrence it replaces.
  std::optional<IcsTime> recurrence_id;
};

struct IcsCalendar {
  std::string name;       // X-WR-CALNAME
  std::string time_zone;  // X-WR-TIMEZONE
  std::vector<IcsEvent> events;
  // TZID -> its VTIMEZONE block (iCalendar text), for the TZIDs that are not IANA names.
  std::map<std::string, std::string> vtimezones;
};

constexpr size_t kMaxIcsEvents = 50000;
// Per IcsBusyTimes call: busy intervals of recurring events, per event and in all.
constexpr size_t kMaxIcsOccurrencesPerEvent = 2000;
constexpr size_t kMaxIcsOccurrences = 10000;
// Per IcsBusyTimes call: recurrence iterator steps (a candidate produced; a monthly or yearly rule
// is charged more for each month or year libical went through), per event and in all.
constexpr size_t kMaxIcsStepsPerEvent = 20000;
constexpr size_t kMaxIcsSteps = 100000;

// nullopt (with `error` set) when `text` is not an iCalendar object (no BEGIN:VCALENDAR ...
// END:VCALENDAR, mismatched or too deeply nested components, a malformed line or a malformed
// time or recurrence property in a VEVENT, a VEVENT without DTSTART, too many events).
std::optional<IcsCalendar> ParseIcs(std::string_view text, std::string* error);

struct BusyInterval {
  time::Millis start = 0;
  time::Millis end = 0;
};

// What IcsBusyTimes did, for callers that log or test it.
struct IcsExpansionReport {
  size_t occurrences = 0;  // busy intervals from recurring events
  size_t steps = 0;
  bool capped = false;      // a cap stopped an expansion: later occurrences are missing
  size_t not_expanded = 0;  // RRULEs outside what is expanded (only DTSTART and RDATEs count)
};

// Busy intervals of `cal` overlapping [from, to), sorted by start. All-day and floating times are
// read in the feed's X-WR-TIMEZONE, else in `fallback_zone`; unknown TZIDs without a VTIMEZONE
// likewise.
std::vector<BusyInterval> IcsBusyTimes(const IcsCalendar& cal, time::Millis from, time::Millis to,
                                       const time::Zone& fallback_zone, IcsExpansionReport* report = nullptr);

// A feed as kept between requests: the events whose busy interval is the same whatever the range
// and zone asked (not recurring and not overridden, times in UTC or an IANA TZID) as plain
// intervals (16 bytes each instead of a parsed event), the other events as parsed. Free events
// that override nothing are dropped.
struct CompactIcs {
  IcsCalendar rest;
  std::vector<BusyInterval> fixed;  // sorted by start
  time::Millis longest = 0;         // the longest of `fixed`
};
CompactIcs CompactIcsCalendar(IcsCalendar cal);
// The memory a kept feed holds (its vectors' and strings' allocations included), as the feed cache
// counts it against plugins.calendar.ics_memory_bytes.
size_t HeldBytes(const CompactIcs& feed);
// IcsBusyTimes of the feed `feed` was made from.
std::vector<BusyInterval> IcsBusyTimes(const CompactIcs& feed, time::Millis from, time::Millis to,
                                       const time::Zone& fallback_zone, IcsExpansionReport* report = nullptr);

}  // namespace rendezvous::calendar
