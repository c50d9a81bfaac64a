#include "iso_time.hpp"

#include <chrono>
#include <cstdio>

namespace rendezvous::bookings {
namespace {

constexpr int64_t kMillisPerDay = 86400000;

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void CivilFromDays(int64_t z, int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
}

bool IsLeap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

unsigned DaysInMonth(int64_t y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// Reads exactly `n` digits at `pos`.
bool Digits(std::string_view s, size_t pos, size_t n, int64_t& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

// Date and time fields of "YYYY-MM-DD?HH:MM[:SS[.f...]]" with `sep` between date and time;
// `pos` is left after them.
std::optional<Millis> ParseDateTime(std::string_view s, char sep, bool seconds_required, size_t& pos) {
  int64_t y, mo, d, h, mi, sec = 0, ms = 0;
  if (!Digits(s, 0, 4, y) || s.size() < 16 || s[4] != '-' || !Digits(s, 5, 2, mo) || s[7] != '-' ||
      !Digits(s, 8, 2, d) || s[10] != sep || !Digits(s, 11, 2, h) || s[13] != ':' || !Digits(s, 14, 2, mi)) {
    return std::nullopt;
  }
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
  if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > DaysInMonth(y, static_cast<unsigned>(mo)) ||
      h > 23 || mi > 59 || sec > 59) {
    return std::nullopt;
  }
  return DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * kMillisPerDay +
         ((h * 60 + mi) * 60 + sec) * 1000 + ms;
}

std::string Format(Millis t, char sep, const char* suffix) {
  int64_t days = t / kMillisPerDay;
  int64_t rest = t % kMillisPerDay;
  if (rest < 0) {
    rest += kMillisPerDay;
    --days;
  }
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, y, m, d);
  const int64_t ms = rest % 1000;
  const int64_t secs = rest / 1000;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u%c%02lld:%02lld:%02lld.%03lld%s", static_cast<long long>(y),
                m, d, sep, static_cast<long long>(secs / 3600), static_cast<long long>(secs / 60 % 60),
                static_cast<long long>(secs % 60), static_cast<long long>(ms), suffix);
  return buf;
}

}  // namespace

std::optional<Millis> ParseIsoTime(std::string_view text) {
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
  const int64_t offset = (oh * 60 + om) * 60000;
  const Millis utc = zone[0] == '+' ? *local - offset : *local + offset;
  if (utc < 0 || utc >= DaysFromCivil(10000, 1, 1) * kMillisPerDay) return std::nullopt;
  return utc;
}

std::string FormatIsoTime(Millis t) {
  return Format(t, 'T', "Z");
}

std::string FormatSqlTime(Millis t) {
  return Format(t, ' ', "");
}

std::optional<Millis> ParseSqlTime(std::string_view text) {
  size_t pos = 0;
  auto t = ParseDateTime(text, ' ', true, pos);
  if (!t || pos != text.size()) return std::nullopt;
  return t;
}

Millis NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace rendezvous::bookings
