// Instants and time zones for the calendar plugin: RFC 3339 / ISO 8601 parsing and formatting in
// UTC, civil dates, and IANA time zones read from the system's zoneinfo files (TZif). Pure
// functions; TimeZone objects are immutable and safe to share between threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rendezvous::calendar {

// Seconds since the Unix epoch (UTC).
using UnixSeconds = int64_t;

// A civil date (proleptic Gregorian).
struct CivilDate {
  int year = 1970;
  int month = 1;
  int day = 1;
};

// Days since 1970-01-01 of a civil date, and back.
int64_t DaysFromCivil(const CivilDate& d);
CivilDate CivilFromDays(int64_t days);

// "YYYY-MM-DD" (exactly); nullopt when malformed or not a real date.
std::optional<CivilDate> ParseDate(std::string_view text);
// RFC 3339 timestamp with a zone designator: "2025-01-02T10:00:00Z", "...T10:00:00.123+02:00".
// nullopt when malformed or without an offset.
std::optional<UnixSeconds> ParseRfc3339(std::string_view text);
// "2025-01-02T10:00:00Z" (no fraction).
std::string FormatUtc(UnixSeconds t);

// An IANA time zone. Offsets come from the zoneinfo file's transitions; instants after the last
// transition keep the last offset (the system's files list transitions until 2037).
class TimeZone {
 public:
  // Loads `name` (e.g. "Europe/Berlin", "UTC") from /usr/share/zoneinfo; nullptr when the name is
  // not a valid zone. Results are cached; thread-safe.
  static std::shared_ptr<const TimeZone> Load(const std::string& name);
  // A fixed UTC zone (never fails).
  static std::shared_ptr<const TimeZone> Utc();

  const std::string& name() const { return name_; }
  // UTC offset in seconds at instant `t`.
  int OffsetAt(UnixSeconds t) const;
  // The instant of local wall-clock time `local` (seconds since the epoch as if the wall clock
  // were UTC). In a gap or overlap, the offset in force just before the transition wins.
  UnixSeconds LocalToUtc(int64_t local) const;
  // The start (00:00 local) of a civil date as an instant.
  UnixSeconds StartOfDay(const CivilDate& date) const { return LocalToUtc(DaysFromCivil(date) * 86400); }

  // Parses TZif data (exposed for tests).
  static std::shared_ptr<const TimeZone> FromTzif(const std::string& name, std::string_view data);

 private:
  std::string name_;
  std::vector<int64_t> transitions_;  // ascending
  std::vector<int> offsets_after_;    // offset in force from transitions_[i]
  int initial_offset_ = 0;            // before the first transition
};

}  // namespace rendezvous::calendar
