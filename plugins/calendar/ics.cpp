#include "ics.hpp"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "libical_support.hpp"
#include "rendezvous/text.hpp"

namespace rendezvous::calendar {
namespace {

constexpr size_t kMaxNesting = 8;
// The feed's own time zones that are kept (for TZIDs that are not IANA names), and what one may
// hold: libical expands a zone's rules into a table of changes from each rule's start up to a few
// decades ahead, so a zone is kept only when that table stays small.
constexpr size_t kMaxFeedZones = 10;
constexpr size_t kMaxZoneRules = 8;
constexpr size_t kMaxZoneDates = 64;
constexpr int kMinZoneYear = 1583;

// The component structure, checked before libical sees the text: libical accepts an END that
// names another component, drops unclosed ones, and frees nested components recursively (so a
// deep nesting would exhaust the stack). Lines end at CR or LF as libical reads them; a line
// starting with a space or tab continues the previous one. Counts the events on the way.
std::optional<std::string> CheckStructure(std::string_view text, size_t* events) {
  std::vector<std::string> stack;
  bool first = true, closed = false;
  std::string line;
  auto check = [&](const std::string& l) -> std::optional<std::string> {
    const size_t colon = l.find(':');
    const size_t name_end = std::min(colon, l.find(';'));
    const std::string name = text::AsciiLower(text::Trim(std::string_view(l).substr(0, name_end)));
    const bool begin = name == "begin", end = name == "end";
    if (first && !begin) return "the body is not an iCalendar object (no BEGIN:VCALENDAR)";
    if (!begin && !end) {
      if (closed) return "content after END:VCALENDAR";
      return std::nullopt;
    }
    if (colon == std::string::npos) return "malformed iCalendar line";
    const std::string_view value = text::Trim(std::string_view(l).substr(colon + 1));
    const std::string what = text::AsciiLower(value);
    if (first && what != "vcalendar") return "the body is not an iCalendar object (no BEGIN:VCALENDAR)";
    first = false;
    if (closed) return "content after END:VCALENDAR";
    if (begin) {
      if (stack.size() >= kMaxNesting) return "components nested too deep";
      stack.push_back(what);
      if (what == "vevent" && stack.size() == 2 && ++*events > kMaxIcsEvents) return "too many events";
      return std::nullopt;
    }
    if (stack.empty() || stack.back() != what) return "mismatched END:" + std::string(value);
    stack.pop_back();
    closed = stack.empty();
    return std::nullopt;
  };
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find_first_of("\r\n", pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view l = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (l.empty()) continue;
    if ((l.front() == ' ' || l.front() == '\t') && !line.empty()) {
      line.append(l.substr(1));
      continue;
    }
    if (!line.empty()) {
      if (auto why = check(line)) return why;
    }
    line.assign(l);
  }
  if (!line.empty()) {
    if (auto why = check(line)) return why;
  }
  if (first) return "the body is not an iCalendar object (no BEGIN:VCALENDAR)";
  if (!closed) return "the iCalendar object is not closed (no END:VCALENDAR)";
  return std::nullopt;
}

std::string TzidOf(icalproperty* p) {
  icalparameter* tz = icalproperty_get_first_parameter(p, ICAL_TZID_PARAMETER);
  const char* id = tz ? icalparameter_get_tzid(tz) : nullptr;
  return id ? text::TruncateUtf8(id, 255) : "";
}

std::optional<IcsTime> ToIcsTime(const icaltimetype& v, const std::string& tzid) {
  if (icaltime_is_null_time(v)) return std::nullopt;
  IcsTime t;
  if (v.is_date) {
    if (!ical::CivilDay(v, &t.date)) return std::nullopt;
    t.all_day = true;
    return t;
  }
  if (!ical::WallClock(v, &t.local)) return std::nullopt;
  t.utc = icaltime_is_utc(v);
  if (!t.utc) t.tzid = tzid;
  return t;
}

std::optional<int64_t> Seconds(const icaldurationtype& d) {
  if (d.is_neg || icaldurationtype_is_bad_duration(d)) return std::nullopt;
  return ((int64_t{d.weeks} * 7 + d.days) * 24 + d.hours) * 3600 + int64_t{d.minutes} * 60 + d.seconds;
}

// libical drops a property whose value it cannot read and leaves an X-LIC-ERROR in its place.
// A malformed line anywhere (see MalformedLine), or an unreadable time or recurrence in an event,
// fails the feed: a busy time read wrong would offer a time that is taken.
std::optional<std::string> ParseError(icalcomponent* c, bool in_event) {
  for (icalproperty* p = icalcomponent_get_first_property(c, ICAL_XLICERROR_PROPERTY); p;
       p = icalcomponent_get_next_property(c, ICAL_XLICERROR_PROPERTY)) {
    icalparameter* type = icalproperty_get_first_parameter(p, ICAL_XLICERRORTYPE_PARAMETER);
    if (!type) continue;
    const icalparameter_xlicerrortype kind = icalparameter_get_xlicerrortype(type);
    const char* what = icalproperty_get_xlicerror(p);
    const std::string message = what ? what : "";
    if (kind == ICAL_XLICERRORTYPE_COMPONENTPARSEERROR) return "malformed iCalendar line";
    if (!in_event || kind != ICAL_XLICERRORTYPE_VALUEPARSEERROR) continue;
    for (const char* name : {"DTSTART", "DTEND", "DURATION", "RRULE", "RDATE", "EXDATE", "RECURRENCE-ID"}) {
      if (message.find(std::string(" in ") + name + " property") != std::string::npos)
        return std::string("a VEVENT has a malformed ") + name;
    }
  }
  return std::nullopt;
}

// Nesting is at most kMaxNesting deep (CheckStructure), so is this recursion.
std::optional<std::string> MalformedLine(icalcomponent* c) {
  if (auto why = ParseError(c, false)) return why;
  for (icalcomponent* sub = icalcomponent_get_first_component(c, ICAL_ANY_COMPONENT); sub;
       sub = icalcomponent_get_next_component(c, ICAL_ANY_COMPONENT)) {
    if (auto why = MalformedLine(sub)) return why;
  }
  return std::nullopt;
}

std::optional<std::string> ReadEvent(icalcomponent* ev, IcsEvent& e) {
  if (auto why = ParseError(ev, true)) return why;
  icalproperty* start = icalcomponent_get_first_property(ev, ICAL_DTSTART_PROPERTY);
  if (!start) return "a VEVENT has no DTSTART";
  auto s = ToIcsTime(icalproperty_get_dtstart(start), TzidOf(start));
  if (!s) return "a VEVENT has a malformed DTSTART";
  e.start = *s;
  if (icalproperty* p = icalcomponent_get_first_property(ev, ICAL_DTEND_PROPERTY)) {
    e.end = ToIcsTime(icalproperty_get_dtend(p), TzidOf(p));
    if (!e.end) return "a VEVENT has a malformed DTEND";
  }
  if (icalproperty* p = icalcomponent_get_first_property(ev, ICAL_DURATION_PROPERTY)) {
    e.duration_seconds = Seconds(icalproperty_get_duration(p));
    if (!e.duration_seconds) return "a VEVENT has a malformed DURATION";
  }
  if (icalproperty* p = icalcomponent_get_first_property(ev, ICAL_UID_PROPERTY)) {
    if (const char* v = icalproperty_get_uid(p)) e.uid = text::TruncateUtf8(v, 255);
  }
  if (icalproperty* p = icalcomponent_get_first_property(ev, ICAL_SUMMARY_PROPERTY)) {
    if (const char* v = icalproperty_get_summary(p)) e.summary = text::TruncateUtf8(v, 255);
  }
  if (icalproperty* p = icalcomponent_get_first_property(ev, ICAL_STATUS_PROPERTY)) {
    if (icalproperty_get_status(p) == ICAL_STATUS_CANCELLED) e.busy = false;
  }
  if (icalproperty* p = icalcomponent_get_first_property(ev, ICAL_TRANSP_PROPERTY)) {
    const icalproperty_transp t = icalproperty_get_transp(p);
    if (t == ICAL_TRANSP_TRANSPARENT || t == ICAL_TRANSP_TRANSPARENTNOCONFLICT) e.busy = false;
  }
  if (icalproperty* p = icalcomponent_get_first_property(ev, ICAL_RECURRENCEID_PROPERTY)) {
    e.recurrence_id = ToIcsTime(icalproperty_get_recurrenceid(p), TzidOf(p));
    if (!e.recurrence_id) return "a VEVENT has a malformed RECURRENCE-ID";
  }
  for (icalproperty* p = icalcomponent_get_first_property(ev, ICAL_RRULE_PROPERTY); p;
       p = icalcomponent_get_next_property(ev, ICAL_RRULE_PROPERTY)) {
    e.rrules.push_back(ical::Take(icalproperty_get_value_as_string_r(p)));
  }
  for (icalproperty* p = icalcomponent_get_first_property(ev, ICAL_RDATE_PROPERTY); p;
       p = icalcomponent_get_next_property(ev, ICAL_RDATE_PROPERTY)) {
    const icaldatetimeperiodtype v = icalproperty_get_rdate(p);
    const std::string tzid = TzidOf(p);
    IcsRecurrenceDate r;
    if (!icaltime_is_null_time(v.time)) {
      auto t = ToIcsTime(v.time, tzid);
      if (!t) return "a VEVENT has a malformed RDATE";
      r.start = *t;
    } else {
      auto t = ToIcsTime(v.period.start, tzid);
      if (!t) return "a VEVENT has a malformed RDATE";
      r.start = *t;
      if (!icaltime_is_null_time(v.period.end)) {
        r.end = ToIcsTime(v.period.end, tzid);
        if (!r.end) return "a VEVENT has a malformed RDATE";
      } else {
        r.duration_seconds = Seconds(v.period.duration);
        if (!r.duration_seconds) return "a VEVENT has a malformed RDATE";
      }
    }
    e.rdates.push_back(std::move(r));
  }
  for (icalproperty* p = icalcomponent_get_first_property(ev, ICAL_EXDATE_PROPERTY); p;
       p = icalcomponent_get_next_property(ev, ICAL_EXDATE_PROPERTY)) {
    auto t = ToIcsTime(icalproperty_get_exdate(p), TzidOf(p));
    if (!t) return "a VEVENT has a malformed EXDATE";
    e.exdates.push_back(*t);
  }
  e.recurring = !e.rrules.empty() || !e.rdates.empty();
  return std::nullopt;
}

size_t Count(const short* parts, size_t size) {
  size_t n = 0;
  while (n < size && parts[n] != ICAL_RECURRENCE_ARRAY_MAX) ++n;
  return n;
}

// Real zones change offset a few times a year; anything denser is refused (see kMaxZoneRules).
bool UsableZone(icalcomponent* zone) {
  size_t rules = 0;
  for (icalcomponent* c = icalcomponent_get_first_component(zone, ICAL_ANY_COMPONENT); c;
       c = icalcomponent_get_next_component(zone, ICAL_ANY_COMPONENT)) {
    const icalcomponent_kind kind = icalcomponent_isa(c);
    if (kind != ICAL_XSTANDARD_COMPONENT && kind != ICAL_XDAYLIGHT_COMPONENT) continue;
    if (++rules > kMaxZoneRules) return false;
    icalproperty* start = icalcomponent_get_first_property(c, ICAL_DTSTART_PROPERTY);
    if (!start || icalproperty_get_dtstart(start).year < kMinZoneYear) return false;
    if (icalcomponent_count_properties(c, ICAL_RDATE_PROPERTY) > static_cast<int>(kMaxZoneDates))
      return false;
    if (icalcomponent_count_properties(c, ICAL_RRULE_PROPERTY) > 1) return false;
    if (icalproperty* p = icalcomponent_get_first_property(c, ICAL_RRULE_PROPERTY)) {
      const icalrecurrencetype r = icalproperty_get_rrule(p);
      if (r.freq != ICAL_YEARLY_RECURRENCE || r.interval != 1 || r.rscale) return false;
      if (Count(r.by_second, ICAL_BY_SECOND_SIZE) || Count(r.by_minute, ICAL_BY_MINUTE_SIZE) ||
          Count(r.by_hour, ICAL_BY_HOUR_SIZE) || Count(r.by_year_day, ICAL_BY_YEARDAY_SIZE) ||
          Count(r.by_week_no, ICAL_BY_WEEKNO_SIZE) || Count(r.by_set_pos, ICAL_BY_SETPOS_SIZE) ||
          Count(r.by_month, ICAL_BY_MONTH_SIZE) > 1 || Count(r.by_day, ICAL_BY_DAY_SIZE) > 1 ||
          Count(r.by_month_day, ICAL_BY_MONTHDAY_SIZE) > 7)
        return false;
    }
  }
  return true;
}

std::string XProperty(icalcomponent* cal, const char* name) {
  for (icalproperty* p = icalcomponent_get_first_property(cal, ICAL_X_PROPERTY); p;
       p = icalcomponent_get_next_property(cal, ICAL_X_PROPERTY)) {
    const char* n = icalproperty_get_x_name(p);
    if (n && strcasecmp(n, name) == 0) {
      const char* v = icalproperty_get_x(p);
      return v ? v : "";
    }
  }
  return "";
}

}  // namespace

std::optional<IcsCalendar> ParseIcs(std::string_view text, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<IcsCalendar> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 BOM
  text = text.substr(0, text.find('\0'));  // libical reads a C string
  size_t events = 0;
  if (auto why = CheckStructure(text, &events)) return fail(std::move(*why));

  // Read piece by piece rather than as one tree (which takes many times the feed's text): first the
  // calendar's own properties as a calendar without components, then each of its components on
  // its own, freed before the next is read. CheckStructure has checked the nesting.
  ical::UseLibical();
  IcsCalendar cal;
  cal.events.reserve(events);
  std::string head = "BEGIN:VCALENDAR\r\n";
  std::vector<std::pair<size_t, size_t>> pieces;  // each component's text: offset, length
  {
    size_t depth = 0, piece_start = 0;
    size_t pos = 0;
    while (pos < text.size()) {
      // One logical line: [line_start, next), continuation lines included.
      const size_t line_start = pos;
      size_t eol = text.find_first_of("\r\n", pos);
      if (eol == std::string_view::npos) eol = text.size();
      const std::string_view first = text.substr(pos, eol - pos);
      size_t next = eol;
      while (true) {
        while (next < text.size() && (text[next] == '\r' || text[next] == '\n')) ++next;
        if (next >= text.size() || (text[next] != ' ' && text[next] != '\t')) break;
        next = text.find_first_of("\r\n", next);
        if (next == std::string_view::npos) next = text.size();
      }
      pos = next;
      if (first.empty()) continue;
      const size_t name_end = std::min(first.find(':'), first.find(';'));
      const std::string name = text::AsciiLower(text::Trim(first.substr(0, name_end)));
      if (name == "begin") {
        if (++depth == 2) piece_start = line_start;
      } else if (name == "end") {
        if (depth == 2) pieces.emplace_back(piece_start, next - piece_start);
        if (depth > 0) --depth;
      } else if (depth == 1) {
        head.append(text.substr(line_start, next - line_start));
        if (head.back() != '\n' && head.back() != '\r') head += "\r\n";
      }
    }
  }
  head += "END:VCALENDAR\r\n";
  {
    ical::Component root(icalparser_parse_string(head.c_str()));
    if (!root || icalcomponent_isa(root.get()) != ICAL_VCALENDAR_COMPONENT)
      return fail("the body is not an iCalendar object (no BEGIN:VCALENDAR)");
    if (auto why = MalformedLine(root.get())) return fail(std::move(*why));
    cal.name = text::TruncateUtf8(XProperty(root.get(), "X-WR-CALNAME"), 255);
    cal.time_zone = text::TruncateUtf8(XProperty(root.get(), "X-WR-TIMEZONE"), 64);
  }
  std::string().swap(head);
  std::string piece;
  for (const auto& [offset, length] : pieces) {
    piece.assign(text.substr(offset, length));
    ical::Component sub(icalparser_parse_string(piece.c_str()));
    if (!sub) return fail("malformed iCalendar line");
    if (auto why = MalformedLine(sub.get())) return fail(std::move(*why));
    const icalcomponent_kind kind = icalcomponent_isa(sub.get());
    if (kind == ICAL_VEVENT_COMPONENT) {
      IcsEvent e;
      if (auto why = ReadEvent(sub.get(), e)) return fail(std::move(*why));
      cal.events.push_back(std::move(e));
    } else if (kind == ICAL_VTIMEZONE_COMPONENT) {
      icalproperty* id = icalcomponent_get_first_property(sub.get(), ICAL_TZID_PROPERTY);
      const char* tzid = id ? icalproperty_get_tzid(id) : nullptr;
      if (tzid && *tzid && cal.vtimezones.size() < kMaxFeedZones && !time::Zone::Find(tzid) &&
          UsableZone(sub.get()))
        cal.vtimezones[tzid] = ical::Take(icalcomponent_as_ical_string_r(sub.get()));
    }
  }
  return cal;
}

}  // namespace rendezvous::calendar
