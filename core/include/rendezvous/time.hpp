// Instants, civil dates and IANA time zones for the host and plugins: ISO 8601 / RFC 3339 text for
// the API, DATETIME(3) text for MariaDB, and time zones from the system's time zone database
// (/usr/share/zoneinfo, read through Howard Hinnant's date library — the one time library of the
// project). Pure functions; Zone is a small handle, cheap to copy and safe to share between threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rendezvous::time {

// An instant: milliseconds since the Unix epoch (UTC).
using Millis = int64_t;
constexpr Millis kMillisPerMinute = 60 * 1000;
constexpr Millis kMillisPerDay = 24 * 60 * kMillisPerMinute;

// A date on the proleptic Gregorian calendar.
struct CivilDate {
  int year = 1970;
  unsigned month = 1;
  unsigned day = 1;
  friend bool operator==(const CivilDate& a, const CivilDate& b) {
    return a.year == b.year && a.month == b.month && a.day == b.day;
  }
};

Millis Now();

// "YYYY-MM-DDTHH:MM[:SS[.fraction]]" followed by "Z" or an offset "+HH:MM" / "-HHMM", years
// 1970..9999. nullopt for anything else, impossible dates included.
std::optional<Millis> ParseIso(std::string_view text);
// "YYYY-MM-DDTHH:MM:SS.mmmZ".
std::string FormatIso(Millis t);
// "YYYY-MM-DDTHH:MM:SSZ" (whole seconds).
std::string FormatIsoSeconds(Millis t);
// DATETIME(3) text in UTC: "YYYY-MM-DD HH:MM:SS.mmm"; and back ("YYYY-MM-DD HH:MM:SS[.fff]").
std::string FormatSql(Millis t);
std::optional<Millis> ParseSql(std::string_view text);

// HTTP dates, IMF-fixdate (RFC 9110 §5.6.7): "Sun, 06 Nov 1994 08:49:37 GMT", the whole second
// at or before `t` (years 1970..9999). The one HTTP-date formatter of the host and the plugins
// (Date, Expires, Last-Modified, cookies' Expires).
std::string FormatHttpDate(Millis t);
// IMF-fixdate exactly as above: English day and month abbreviations as written there, a two-digit
// day, a real date and time, "GMT"; the day name is not checked against the date (RFC 9110 lets a
// recipient ignore it). The obsolete RFC 850 and asctime forms are not accepted. nullopt otherwise.
std::optional<Millis> ParseHttpDate(std::string_view text);
// The same date as RFC 5322 §3.3 wants it in a mail's Date header: "Sun, 06 Nov 1994 08:49:37 +0000".
std::string FormatMailDate(Millis t);

// "YYYY-MM-DD", a real date; nullopt otherwise.
std::optional<CivilDate> ParseDate(std::string_view text);
std::string FormatDate(const CivilDate& date);
// Days since 1970-01-01, and back.
int64_t DaysFromCivil(const CivilDate& date);
CivilDate CivilFromDays(int64_t days);
// 1 = Monday ... 7 = Sunday (ISO 8601).
unsigned IsoWeekday(const CivilDate& date);

// An IANA time zone ("Europe/Berlin", "America/New_York", "UTC").
class Zone {
 public:
  // nullopt when `name` is not a zone of the database.
  static std::optional<Zone> Find(std::string_view name);
  static Zone Utc();

  std::string name() const;
  // The offset from UTC in force at `t`, in seconds.
  int OffsetSeconds(Millis t) const;
  // Local wall-clock time (milliseconds since the epoch as if the wall clock were UTC) at `t`.
  Millis ToLocal(Millis t) const;
  // The instant of a local wall-clock time. A time that does not exist (the gap of a change to
  // summer time) or exists twice (the overlap of a change back) is read with the offset in force
  // before the change: 02:30 on a spring-forward day is 03:30; on a fall-back day, the first 02:30.
  Millis FromLocal(Millis local) const;
  // 00:00 local on `date`, as an instant (read as FromLocal does).
  Millis StartOfDay(const CivilDate& date) const;
  // The local date at `t`.
  CivilDate DateAt(Millis t) const;

 private:
  explicit Zone(const void* zone) : zone_(zone) {}
  const void* zone_;  // the library's time zone, owned by its database for the process's life
};

}  // namespace rendezvous::time
