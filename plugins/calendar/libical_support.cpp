#include "libical_support.hpp"

#include <mutex>

namespace rendezvous::calendar::ical {

void UseLibical() {
  static std::once_flag once;
  std::call_once(once, [] {
    icalerror_set_errors_are_fatal(0);
    for (int e = ICAL_BADARG_ERROR; e <= ICAL_UNKNOWN_ERROR; ++e)
      icalerror_set_error_state(static_cast<icalerrorenum>(e), ICAL_ERROR_NONFATAL);
    // libical fills two statics on first use: the UTC zone, and the year from which every zone's
    // table of changes is expanded. Fill both here, under the once flag.
    icaltimezone* utc = icaltimezone_get_utc_timezone();
    Component c(icalparser_parse_string(
        "BEGIN:VTIMEZONE\nTZID:warm-up\nBEGIN:STANDARD\nDTSTART:20000101T000000\nTZOFFSETFROM:+0100\n"
        "TZOFFSETTO:+0100\nEND:STANDARD\nEND:VTIMEZONE\n"));
    Timezone zone(icaltimezone_new());
    if (c && zone && icaltimezone_set_component(zone.get(), c.get())) {
      c.release();
      icaltimetype t = FloatingTime(0, false);
      icaltimezone_convert_time(&t, zone.get(), utc);
    }
  });
}

bool CivilDay(const icaltimetype& t, time::CivilDate* date) {
  if (t.year < 1 || t.year > 9999 || t.month < 1 || t.month > 12 || t.day < 1 || t.day > 31) return false;
  const time::CivilDate d{t.year, static_cast<unsigned>(t.month), static_cast<unsigned>(t.day)};
  if (!(time::CivilFromDays(time::DaysFromCivil(d)) == d)) return false;  // 30 February
  *date = d;
  return true;
}

bool WallClock(const icaltimetype& t, time::Millis* local) {
  time::CivilDate d;
  if (!CivilDay(t, &d)) return false;
  int hh = 0, mm = 0, ss = 0;
  if (!t.is_date) {
    hh = t.hour, mm = t.minute, ss = t.second;
    if (hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 60) return false;
  }
  // A leap second is read as the second before it.
  *local = time::DaysFromCivil(d) * time::kMillisPerDay +
           ((hh * 60 + mm) * 60 + (ss > 59 ? 59 : ss)) * int64_t{1000};
  return true;
}

icaltimetype FloatingTime(time::Millis local, bool date_only) {
  int64_t days = local / time::kMillisPerDay;
  if (local % time::kMillisPerDay < 0) --days;
  const int64_t seconds = (local - days * time::kMillisPerDay) / 1000;
  const time::CivilDate d = time::CivilFromDays(days);
  icaltimetype t = icaltime_null_time();
  t.year = d.year;
  t.month = static_cast<int>(d.month);
  t.day = static_cast<int>(d.day);
  t.is_date = date_only ? 1 : 0;
  if (!date_only) {
    t.hour = static_cast<int>(seconds / 3600);
    t.minute = static_cast<int>(seconds / 60 % 60);
    t.second = static_cast<int>(seconds % 60);
  }
  return t;
}

}  // namespace rendezvous::calendar::ical
