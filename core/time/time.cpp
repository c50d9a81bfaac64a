#include "rendezvous/time.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>

#include <date/date.h>
#include <date/tz.h>

namespace rendezvous::time {
namespace {

using std::chrono::milliseconds;
using SysMillis = date::sys_time<milliseconds>;
using LocalMillis = date::local_time<milliseconds>;

bool Digits(std::string_view s, size_t pos, size_t n, int64_t& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

// "YYYY-MM-DD<sep>HH:MM[:SS[.f...]]" from the start of `s`; `pos` is left after it.
std::optional<Millis> ParseDateTime(std::string_view s, char sep, bool seconds_required, size_t& pos) {
  int64_t y, mo, d, h, mi, sec = 0, ms = 0;
  if (s.size() < 16 || !Digits(s, 0, 4, y) || s[4] != '-' || !Digits(s, 5, 2, mo) || s[7] != '-' ||
      !Digits(s, 8, 2, d) || s[10] != sep || !Digits(s, 11, 2, h) || s[13] != ':' || !Digits(s, 14, 2, mi))
    return std::nullopt;
  pos = 16;
  if (pos < s.size() && s[pos] == ':') {
    if (!Digits(s, pos + 1, 2, sec)) return std::nullopt;
    pos += 3;
    if (pos < s.size() && s[pos] == '.') {
      ++pos;
      size_t n = 0;
      int64_t scale = 100;
      while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
        if (n >= 9) return std::nullopt;
        ms += (s[pos] - '0') * scale;
        scale /= 10;
        ++pos;
        ++n;
      }
      if (n == 0) return std::nullopt;
    }
  } else if (seconds_required) {
    return std::nullopt;
  }
  date::year_month_day ymd{date::year(static_cast<int>(y)), date::month(static_cast<unsigned>(mo)),
                           date::day(static_cast<unsigned>(d))};
  if (y < 1970 || y > 9999 || !ymd.ok() || h > 23 || mi > 59 || sec > 59) return std::nullopt;
  return date::sys_days(ymd).time_since_epoch().count() * kMillisPerDay + ((h * 60 + mi) * 60 + sec) * 1000 +
         ms;
}

// Writes `value` as `width` decimal digits (zero-padded) at `out`; returns the end.
char* PutDigits(char* out, unsigned value, int width) {
  for (int i = width - 1; i >= 0; --i) {
    out[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  return out + width;
}

// "YYYY-MM-DD" of a civil date at `out` (years 0..9999); returns the end. Hand-written: dates and
// times are formatted for every slot and row, and snprintf showed in profiles.
char* WriteDate(char* out, int year, unsigned month, unsigned day) {
  out = PutDigits(out, static_cast<unsigned>(year), 4);
  *out++ = '-';
  out = PutDigits(out, month, 2);
  *out++ = '-';
  return PutDigits(out, day, 2);
}

std::string Format(Millis t, char sep, bool fraction, const char* suffix) {
  SysMillis tp{milliseconds(t)};
  auto day = date::floor<date::days>(tp);
  date::year_month_day ymd(day);
  date::hh_mm_ss<milliseconds> hms(tp - day);
  char buf[32];
  char* p = WriteDate(buf, static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                      static_cast<unsigned>(ymd.day()));
  *p++ = sep;
  p = PutDigits(p, static_cast<unsigned>(hms.hours().count()), 2);
  *p++ = ':';
  p = PutDigits(p, static_cast<unsigned>(hms.minutes().count()), 2);
  *p++ = ':';
  p = PutDigits(p, static_cast<unsigned>(hms.seconds().count()), 2);
  if (fraction) {
    *p++ = '.';
    p = PutDigits(p, static_cast<unsigned>(hms.subseconds().count()), 3);
  }
  std::string out(buf, p);
  out += suffix;
  return out;
}

const date::time_zone* Tz(const void* zone) {
  return static_cast<const date::time_zone*>(zone);
}

constexpr std::string_view kDayNames[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr std::string_view kMonthNames[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// "Sun, 06 Nov 1994 08:49:37 " followed by `zone`.
std::string FormatImfDate(Millis t, std::string_view zone) {
  SysMillis tp{milliseconds(t)};
  auto day = date::floor<date::days>(tp);
  date::year_month_day ymd(day);
  date::hh_mm_ss<milliseconds> hms(tp - day);
  char buf[40];
  char* p = buf;
  const std::string_view day_name = kDayNames[date::weekday(day).c_encoding()];
  const std::string_view month_name = kMonthNames[static_cast<unsigned>(ymd.month()) - 1];
  p = std::copy(day_name.begin(), day_name.end(), p);
  *p++ = ',';
  *p++ = ' ';
  p = PutDigits(p, static_cast<unsigned>(ymd.day()), 2);
  *p++ = ' ';
  p = std::copy(month_name.begin(), month_name.end(), p);
  *p++ = ' ';
  p = PutDigits(p, static_cast<unsigned>(static_cast<int>(ymd.year())), 4);
  *p++ = ' ';
  p = PutDigits(p, static_cast<unsigned>(hms.hours().count()), 2);
  *p++ = ':';
  p = PutDigits(p, static_cast<unsigned>(hms.minutes().count()), 2);
  *p++ = ':';
  p = PutDigits(p, static_cast<unsigned>(hms.seconds().count()), 2);
  *p++ = ' ';
  std::string out(buf, p);
  out += zone;
  return out;
}

}  // namespace

Millis Now() {
  return std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::optional<Millis> ParseIso(std::string_view text) {
  if (text.size() > 40) return std::nullopt;
  size_t pos = 0;
  auto local = ParseDateTime(text, 'T', false, pos);
  if (!local) return std::nullopt;
  const std::string_view zone = text.substr(pos);
  if (zone == "Z" || zone == "z") return *local;
  if (zone.empty() || (zone[0] != '+' && zone[0] != '-')) return std::nullopt;
  int64_t oh, om;
  if (zone.size() == 6 && zone[3] == ':') {
    if (!Digits(zone, 1, 2, oh) || !Digits(zone, 4, 2, om)) return std::nullopt;
  } else if (zone.size() == 5) {
    if (!Digits(zone, 1, 2, oh) || !Digits(zone, 3, 2, om)) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (oh > 23 || om > 59) return std::nullopt;
  const int64_t offset = (oh * 60 + om) * kMillisPerMinute;
  const Millis utc = zone[0] == '+' ? *local - offset : *local + offset;
  if (utc < 0 || utc >= DaysFromCivil({10000, 1, 1}) * kMillisPerDay) return std::nullopt;
  return utc;
}

std::string FormatIso(Millis t) {
  return Format(t, 'T', true, "Z");
}
std::string FormatIsoSeconds(Millis t) {
  return Format(t, 'T', false, "Z");
}
std::string FormatSql(Millis t) {
  return Format(t, ' ', true, "");
}

std::optional<Millis> ParseSql(std::string_view text) {
  size_t pos = 0;
  auto t = ParseDateTime(text, ' ', true, pos);
  if (!t || pos != text.size()) return std::nullopt;
  return t;
}

std::string FormatHttpDate(Millis t) {
  return FormatImfDate(t, "GMT");
}

std::string FormatMailDate(Millis t) {
  return FormatImfDate(t, "+0000");
}

std::optional<Millis> ParseHttpDate(std::string_view text) {
  // "Sun, 06 Nov 1994 08:49:37 GMT": 29 bytes, every field at a fixed place.
  if (text.size() != 29 || text.substr(3, 2) != ", " || text[7] != ' ' || text[11] != ' ' ||
      text[16] != ' ' || text[19] != ':' || text[22] != ':' || text.substr(25) != " GMT") {
    return std::nullopt;
  }
  if (std::find(std::begin(kDayNames), std::end(kDayNames), text.substr(0, 3)) == std::end(kDayNames)) {
    return std::nullopt;
  }
  const auto month = std::find(std::begin(kMonthNames), std::end(kMonthNames), text.substr(8, 3));
  if (month == std::end(kMonthNames)) return std::nullopt;
  int64_t d, y, h, mi, sec;
  if (!Digits(text, 5, 2, d) || !Digits(text, 12, 4, y) || !Digits(text, 17, 2, h) ||
      !Digits(text, 20, 2, mi) || !Digits(text, 23, 2, sec)) {
    return std::nullopt;
  }
  const date::year_month_day ymd{date::year(static_cast<int>(y)),
                                 date::month(static_cast<unsigned>(month - std::begin(kMonthNames) + 1)),
                                 date::day(static_cast<unsigned>(d))};
  if (y < 1970 || !ymd.ok() || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  // A leap second (":60") is the second after ":59".
  return date::sys_days(ymd).time_since_epoch().count() * kMillisPerDay + ((h * 60 + mi) * 60 + sec) * 1000;
}

std::optional<CivilDate> ParseDate(std::string_view text) {
  int64_t y, m, d;
  if (text.size() != 10 || !Digits(text, 0, 4, y) || text[4] != '-' || !Digits(text, 5, 2, m) ||
      text[7] != '-' || !Digits(text, 8, 2, d))
    return std::nullopt;
  CivilDate date{static_cast<int>(y), static_cast<unsigned>(m), static_cast<unsigned>(d)};
  if (!date::year_month_day(date::year(date.year), date::month(date.month), date::day(date.day)).ok())
    return std::nullopt;
  return date;
}

std::string FormatDate(const CivilDate& d) {
  char buf[16];
  return std::string(buf, WriteDate(buf, d.year, d.month, d.day));
}

int64_t DaysFromCivil(const CivilDate& d) {
  return date::sys_days(date::year(d.year) / date::month(d.month) / date::day(d.day))
      .time_since_epoch()
      .count();
}

CivilDate CivilFromDays(int64_t days) {
  date::year_month_day ymd{date::sys_days(date::days(days))};
  return {static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day())};
}

unsigned IsoWeekday(const CivilDate& d) {
  return date::weekday(date::sys_days(date::year(d.year) / date::month(d.month) / date::day(d.day)))
      .iso_encoding();
}

std::optional<Zone> Zone::Find(std::string_view name) {
  if (name.empty() || name.size() > 64) return std::nullopt;
  try {
    return Zone(date::locate_zone(std::string(name)));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

Zone Zone::Utc() {
  static const date::time_zone* utc = date::locate_zone("UTC");
  return Zone(utc);
}

std::string Zone::name() const {
  return std::string(Tz(zone_)->name());
}

int Zone::OffsetSeconds(Millis t) const {
  return static_cast<int>(
      Tz(zone_)
          ->get_info(date::sys_seconds(date::floor<std::chrono::seconds>(milliseconds(t))))
          .offset.count());
}

Millis Zone::ToLocal(Millis t) const {
  return t + OffsetSeconds(t) * int64_t{1000};
}

Millis Zone::FromLocal(Millis local) const {
  LocalMillis tp{milliseconds(local)};
  date::local_info info = Tz(zone_)->get_info(date::floor<std::chrono::seconds>(tp));
  // Unique: first is the offset. Ambiguous: first is the earlier (summer) offset. Nonexistent:
  // first is the offset in force before the gap.
  return local - info.first.offset.count() * int64_t{1000};
}

Millis Zone::StartOfDay(const CivilDate& date) const {
  return FromLocal(DaysFromCivil(date) * kMillisPerDay);
}

CivilDate Zone::DateAt(Millis t) const {
  Millis local = ToLocal(t);
  int64_t days = local / kMillisPerDay;
  if (local % kMillisPerDay < 0) --days;
  return CivilFromDays(days);
}

}  // namespace rendezvous::time
