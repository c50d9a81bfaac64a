#include "ics.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "rendezvous/text.hpp"

namespace rendezvous::calendar {
namespace {

struct ContentLine {
  std::string name;                                         // upper-cased
  std::vector<std::pair<std::string, std::string>> params;  // names upper-cased, values unquoted
  std::string value;

  std::string Param(const std::string& key) const {
    for (const auto& [k, v] : params) {
      if (k == key) return v;
    }
    return "";
  }
};

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// Unfolds RFC 5545 lines (CRLF or LF, continuation lines start with a space or tab).
std::vector<std::string> Unfold(std::string_view text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty() && (line.front() == ' ' || line.front() == '\t') && !lines.empty()) {
      lines.back().append(line.substr(1));
    } else if (!line.empty()) {
      lines.emplace_back(line);
    }
  }
  return lines;
}

std::optional<ContentLine> ParseLine(const std::string& line) {
  ContentLine out;
  size_t i = 0;
  while (i < line.size() && line[i] != ';' && line[i] != ':') ++i;
  if (i == 0 || i == line.size()) return std::nullopt;
  out.name = Upper(line.substr(0, i));
  while (i < line.size() && line[i] == ';') {
    ++i;
    const size_t eq = line.find('=', i);
    if (eq == std::string::npos) return std::nullopt;
    std::string key = Upper(line.substr(i, eq - i));
    i = eq + 1;
    std::string value;
    if (i < line.size() && line[i] == '"') {
      const size_t close = line.find('"', i + 1);
      if (close == std::string::npos) return std::nullopt;
      value = line.substr(i + 1, close - i - 1);
      i = close + 1;
    } else {
      while (i < line.size() && line[i] != ';' && line[i] != ':' && line[i] != ',') ++i;
      value = line.substr(eq + 1, i - eq - 1);
    }
    while (i < line.size() && line[i] == ',') {  // multi-valued parameter: keep the first
      ++i;
      while (i < line.size() && line[i] != ';' && line[i] != ':') ++i;
    }
    out.params.emplace_back(std::move(key), std::move(value));
  }
  if (i >= line.size() || line[i] != ':') return std::nullopt;
  out.value = line.substr(i + 1);
  return out;
}

bool Num(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

std::optional<IcsTime> ParseIcsTime(const ContentLine& l) {
  IcsTime t;
  const std::string& v = l.value;
  int y = 0, mo = 0, d = 0;
  if (!Num(v, 0, 4, &y) || !Num(v, 4, 2, &mo) || !Num(v, 6, 2, &d)) return std::nullopt;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", y, mo, d);
  auto date = time::ParseDate(buf);
  if (!date) return std::nullopt;
  if (v.size() == 8) {
    t.all_day = true;
    t.date = *date;
    return t;
  }
  int hh = 0, mm = 0, ss = 0;
  if (v.size() < 15 || v[8] != 'T' || !Num(v, 9, 2, &hh) || !Num(v, 11, 2, &mm) || !Num(v, 13, 2, &ss) ||
      hh > 23 || mm > 59 || ss > 60)
    return std::nullopt;
  if (v.size() == 16 && (v[15] == 'Z' || v[15] == 'z')) {
    t.utc = true;
  } else if (v.size() != 15) {
    return std::nullopt;
  }
  t.local = time::DaysFromCivil(*date) * time::kMillisPerDay +
            ((hh * 60 + mm) * 60 + std::min(ss, 59)) * int64_t{1000};
  t.tzid = l.Param("TZID");
  return t;
}

// RFC 5545 DURATION: [+]P[nW] or P[nD][T[nH][nM][nS]]. Negative durations are refused.
std::optional<int64_t> ParseDuration(std::string_view v) {
  if (!v.empty() && v.front() == '+') v.remove_prefix(1);
  if (v.empty() || v.front() != 'P') return std::nullopt;
  v.remove_prefix(1);
  int64_t total = 0;
  int64_t n = 0;
  bool have_digits = false, in_time = false, any = false;
  for (char c : v) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (n > 100000000) return std::nullopt;
      n = n * 10 + (c - '0');
      have_digits = true;
      continue;
    }
    if (c == 'T') {
      if (have_digits || in_time) return std::nullopt;
      in_time = true;
      continue;
    }
    if (!have_digits) return std::nullopt;
    int64_t unit = 0;
    if (!in_time && c == 'W')
      unit = 7 * 86400;
    else if (!in_time && c == 'D')
      unit = 86400;
    else if (in_time && c == 'H')
      unit = 3600;
    else if (in_time && c == 'M')
      unit = 60;
    else if (in_time && c == 'S')
      unit = 1;
    else
      return std::nullopt;
    total += n * unit;
    n = 0;
    have_digits = false;
    any = true;
  }
  if (have_digits || !any) return std::nullopt;
  return total;
}

time::Millis Resolve(const IcsTime& t, const time::Zone& feed_zone) {
  if (t.all_day) return feed_zone.StartOfDay(t.date);
  if (t.utc) return t.local;
  if (!t.tzid.empty()) {
    if (auto zone = time::Zone::Find(t.tzid)) return zone->FromLocal(t.local);
  }
  return feed_zone.FromLocal(t.local);
}

}  // namespace

std::optional<IcsCalendar> ParseIcs(std::string_view text, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<IcsCalendar> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF) text.remove_prefix(3);  // UTF-8 BOM
  std::vector<std::string> lines = Unfold(text);
  if (lines.empty() || Upper(lines.front()) != "BEGIN:VCALENDAR")
    return fail("the body is not an iCalendar object (no BEGIN:VCALENDAR)");
  IcsCalendar cal;
  std::vector<std::string> stack;
  std::optional<IcsEvent> current;
  bool closed = false;
  bool have_start = false;
  for (const std::string& raw : lines) {
    auto line = ParseLine(raw);
    if (!line) return fail("malformed iCalendar line");
    if (closed) return fail("content after END:VCALENDAR");
    if (line->name == "BEGIN") {
      const std::string what = Upper(line->value);
      if (stack.size() >= 8) return fail("components nested too deep");
      stack.push_back(what);
      if (what == "VEVENT" && stack.size() == 2) {
        if (cal.events.size() >= kMaxIcsEvents) return fail("too many events");
        current.emplace();
        have_start = false;
      }
      continue;
    }
    if (line->name == "END") {
      const std::string what = Upper(line->value);
      if (stack.empty() || stack.back() != what) return fail("mismatched END:" + what);
      stack.pop_back();
      if (what == "VEVENT" && current && stack.size() == 1) {
        if (!have_start) return fail("a VEVENT has no DTSTART");
        cal.events.push_back(std::move(*current));
        current.reset();
      }
      if (stack.empty()) closed = true;
      continue;
    }
    if (stack.size() == 1) {
      if (line->name == "X-WR-CALNAME") cal.name = text::TruncateUtf8(line->value, 255);
      if (line->name == "X-WR-TIMEZONE") cal.time_zone = text::TruncateUtf8(line->value, 64);
      continue;
    }
    if (!current || stack.size() != 2) continue;  // inside VALARM, VTIMEZONE, ...
    if (line->name == "DTSTART") {
      auto t = ParseIcsTime(*line);
      if (!t) return fail("a VEVENT has a malformed DTSTART");
      current->start = *t;
      have_start = true;
    } else if (line->name == "DTEND") {
      auto t = ParseIcsTime(*line);
      if (!t) return fail("a VEVENT has a malformed DTEND");
      current->end = *t;
    } else if (line->name == "DURATION") {
      auto d = ParseDuration(line->value);
      if (!d) return fail("a VEVENT has a malformed DURATION");
      current->duration_seconds = *d;
    } else if (line->name == "UID") {
      current->uid = text::TruncateUtf8(line->value, 255);
    } else if (line->name == "SUMMARY") {
      current->summary = text::TruncateUtf8(line->value, 255);
    } else if (line->name == "STATUS") {
      if (Upper(line->value) == "CANCELLED") current->busy = false;
    } else if (line->name == "TRANSP") {
      if (Upper(line->value) == "TRANSPARENT") current->busy = false;
    } else if (line->name == "RRULE" || line->name == "RDATE") {
      current->recurring = true;
    }
  }
  if (!closed) return fail("the iCalendar object is not closed (no END:VCALENDAR)");
  return cal;
}

std::vector<BusyInterval> IcsBusyTimes(const IcsCalendar& cal, time::Millis from, time::Millis to,
                                       const time::Zone& fallback_zone) {
  std::optional<time::Zone> feed_zone;
  if (!cal.time_zone.empty()) feed_zone = time::Zone::Find(cal.time_zone);
  const time::Zone& zone = feed_zone ? *feed_zone : fallback_zone;
  std::vector<BusyInterval> out;
  for (const IcsEvent& e : cal.events) {
    if (!e.busy) continue;
    const time::Millis start = Resolve(e.start, zone);
    time::Millis end = start;
    if (e.end) {
      end = Resolve(*e.end, zone);
    } else if (e.duration_seconds) {
      end = start + *e.duration_seconds * 1000;
    } else if (e.start.all_day) {
      end = zone.StartOfDay(time::CivilFromDays(time::DaysFromCivil(e.start.date) + 1));
    }
    if (end <= start || end <= from || start >= to) continue;
    out.push_back({start, end});
  }
  std::sort(out.begin(), out.end(),
            [](const BusyInterval& a, const BusyInterval& b) { return a.start < b.start; });
  return out;
}

}  // namespace rendezvous::calendar
