#include <algorithm>
#include <map>
#include <set>

#include "ics.hpp"
#include "libical_support.hpp"

namespace rendezvous::calendar {
namespace {

constexpr time::Millis kDay = time::kMillisPerDay;
// Wall-clock times near a DST change do not follow their instants' order: the expansion starts and
// ends this much beyond the window's wall clock.
constexpr time::Millis kDstSlack = 2 * 3600 * 1000;
// libical looks for the next occurrence of a monthly or yearly rule period by period, and a period
// costs it about as much as this many steps of a finer rule: such rules are charged per period.
constexpr size_t kStepsPerPeriod = 8;

int64_t DaysOf(time::Millis local) {
  return local / kDay - (local % kDay < 0 ? 1 : 0);
}

// Resolves the feed's times to instants: IANA TZIDs through rendezvous::time, other TZIDs
// through the feed's VTIMEZONE for them (libical), everything else in the feed zone. Owns the
// libical zones it loads.
class Zones {
 public:
  // `from`: the start of the times asked about (a feed's own zones are expanded from shortly before).
  Zones(const IcsCalendar& cal, const time::Zone& feed_zone, time::Millis from)
      : cal_(cal), feed_(feed_zone), first_year_(time::CivilFromDays(DaysOf(from)).year - 2) {}

  time::Millis FromLocal(time::Millis local, const std::string& tzid) {
    if (tzid.empty()) return feed_.FromLocal(local);
    const Entry& z = Find(tzid);
    if (z.iana) return z.iana->FromLocal(local);
    if (z.vtimezone) {
      icaltimetype t = ical::FloatingTime(local, false);
      icaltimezone_convert_time(&t, z.vtimezone.get(), icaltimezone_get_utc_timezone());
      time::Millis utc = 0;
      if (ical::WallClock(t, &utc)) return utc;
    }
    return feed_.FromLocal(local);
  }
  time::Millis Instant(const IcsTime& t) {
    if (t.all_day) return DayStart(time::DaysFromCivil(t.date));
    return t.utc ? t.local : FromLocal(t.local, t.tzid);
  }
  time::Millis DayStart(int64_t days) const { return feed_.FromLocal(days * kDay); }
  // The wall clock at `instant` in the zone of `like` (a time of the same event).
  time::Millis ToLocal(time::Millis instant, const IcsTime& like) {
    if (like.utc) return instant;
    if (like.all_day || like.tzid.empty()) return feed_.ToLocal(instant);
    const Entry& z = Find(like.tzid);
    if (z.iana) return z.iana->ToLocal(instant);
    if (z.vtimezone) {
      icaltimetype t = ical::FloatingTime(instant, false);
      icaltimezone_convert_time(&t, icaltimezone_get_utc_timezone(), z.vtimezone.get());
      time::Millis local = 0;
      if (ical::WallClock(t, &local)) return local;
    }
    return feed_.ToLocal(instant);
  }

 private:
  struct Entry {
    std::optional<time::Zone> iana;
    ical::Timezone vtimezone;
  };
  const Entry& Find(const std::string& tzid) {
    auto it = zones_.find(tzid);
    if (it != zones_.end()) return it->second;
    Entry e;
    e.iana = time::Zone::Find(tzid);
    if (!e.iana) {
      auto v = cal_.vtimezones.find(tzid);
      if (v != cal_.vtimezones.end()) e.vtimezone = Load(v->second);
    }
    return zones_.emplace(tzid, std::move(e)).first->second;
  }
  ical::Timezone Load(const std::string& text) const {
    ical::Component c(icalparser_parse_string(text.c_str()));
    if (!c || icalcomponent_isa(c.get()) != ICAL_VTIMEZONE_COMPONENT) return nullptr;
    StartRulesLate(c.get());
    ical::Timezone zone(icaltimezone_new());
    if (!zone || !icaltimezone_set_component(zone.get(), c.get())) return nullptr;
    c.release();  // the zone owns it now
    return zone;
  }

  // libical expands a zone's yearly rules into a table of changes from each rule's DTSTART; Outlook
  // starts them in 1601. A rule's changes before `first_year_` decide no time asked about, so the
  // rule starts then instead (the first change of a rule, at its DTSTART, is a real one or, in that
  // early year, one with the same offsets).
  void StartRulesLate(icalcomponent* zone) const {
    for (icalcomponent* c = icalcomponent_get_first_component(zone, ICAL_ANY_COMPONENT); c;
         c = icalcomponent_get_next_component(zone, ICAL_ANY_COMPONENT)) {
      icalproperty* start = icalcomponent_get_first_property(c, ICAL_DTSTART_PROPERTY);
      icalproperty* rule = icalcomponent_get_first_property(c, ICAL_RRULE_PROPERTY);
      if (!start || !rule) continue;
      const icalrecurrencetype r = icalproperty_get_rrule(rule);
      if (r.count) continue;
      icaltimetype t = icalproperty_get_dtstart(start);
      int year = first_year_;
      if (!icaltime_is_null_time(r.until)) year = std::min(year, r.until.year - 1);
      if (year <= t.year) continue;
      t.year = year;
      if (t.month == 2 && t.day == 29) t.day = 28;
      icalproperty_set_dtstart(start, t);
    }
  }

  const IcsCalendar& cal_;
  const time::Zone& feed_;
  const int first_year_;
  std::map<std::string, Entry> zones_;
};

// The rule parts libical would test one candidate at a time (RFC 5545's "limit" parts for the
// rule's frequency). They are taken out of the rule given to libical and tested here, so every
// iterator step returns promptly and is counted: left in, a rule such as FREQ=SECONDLY;BYMONTH=2;
// BYMONTHDAY=30 makes a single libical call search second by second for centuries.
struct Limits {
  std::vector<int> months, month_days, year_days, weekdays, hours, minutes, seconds;

  static bool Has(const std::vector<int>& set, int v) {
    return set.empty() || std::find(set.begin(), set.end(), v) != set.end();
  }
  bool Match(time::Millis local) const {
    const int64_t days = DaysOf(local);
    const time::CivilDate d = time::CivilFromDays(days);
    const int64_t in_day = (local - days * kDay) / 1000;
    const int month_len =
        static_cast<int>(time::DaysFromCivil(d.month == 12 ? time::CivilDate{d.year + 1, 1, 1}
                                                           : time::CivilDate{d.year, d.month + 1, 1}) -
                         time::DaysFromCivil({d.year, d.month, 1}));
    const int year_len =
        static_cast<int>(time::DaysFromCivil({d.year + 1, 1, 1}) - time::DaysFromCivil({d.year, 1, 1}));
    const int year_day = static_cast<int>(days - time::DaysFromCivil({d.year, 1, 1})) + 1;
    const int day = static_cast<int>(d.day);
    return Has(months, static_cast<int>(d.month)) &&
           (Has(month_days, day) || Has(month_days, day - month_len - 1)) &&
           (Has(year_days, year_day) || Has(year_days, year_day - year_len - 1)) &&
           Has(weekdays, static_cast<int>(time::IsoWeekday(d) % 7) + 1) &&  // libical: 1 = Sunday
           Has(hours, static_cast<int>(in_day / 3600)) && Has(minutes, static_cast<int>(in_day / 60 % 60)) &&
           Has(seconds, static_cast<int>(in_day % 60));
  }
};

bool Present(const short* parts) {
  return parts[0] != ICAL_RECURRENCE_ARRAY_MAX;
}

// Moves a BY-part out of the rule into `to`.
template <size_t N>
void Take(short (&parts)[N], std::vector<int>& to) {
  for (size_t i = 0; i < N && parts[i] != ICAL_RECURRENCE_ARRAY_MAX; ++i) to.push_back(parts[i]);
  parts[0] = ICAL_RECURRENCE_ARRAY_MAX;
}

// Splits `r` into what libical iterates and the limits tested here; false for a rule outside what
// is expanded (non-Gregorian, BY-parts RFC 5545 does not allow for its frequency, BYSETPOS over
// limited candidates).
bool SplitLimits(icalrecurrencetype& r, Limits& limits) {
  if (r.rscale || r.interval < 1) return false;
  const icalrecurrencetype_frequency f = r.freq;
  if (f < ICAL_SECONDLY_RECURRENCE || f > ICAL_YEARLY_RECURRENCE) return false;
  const bool sub_daily = f <= ICAL_HOURLY_RECURRENCE;
  if (Present(r.by_week_no) && f != ICAL_YEARLY_RECURRENCE) return false;
  if (Present(r.by_year_day) && !sub_daily && f != ICAL_YEARLY_RECURRENCE) return false;
  if (Present(r.by_month_day) && f == ICAL_WEEKLY_RECURRENCE) return false;
  bool limited = false;
  auto take = [&](auto& parts, std::vector<int>& to) {
    limited = limited || Present(parts);
    Take(parts, to);
  };
  if (f != ICAL_YEARLY_RECURRENCE) take(r.by_month, limits.months);
  if (sub_daily) take(r.by_year_day, limits.year_days);
  if (f <= ICAL_DAILY_RECURRENCE) {
    take(r.by_month_day, limits.month_days);
    for (size_t i = 0; i < ICAL_BY_DAY_SIZE && r.by_day[i] != ICAL_RECURRENCE_ARRAY_MAX; ++i) {
      if (icalrecurrencetype_day_position(r.by_day[i]) != 0) return false;  // "1MO" needs a month or year
    }
    take(r.by_day, limits.weekdays);
    for (int& w : limits.weekdays) w = icalrecurrencetype_day_day_of_week(static_cast<short>(w));
  }
  if (sub_daily) take(r.by_hour, limits.hours);
  if (f <= ICAL_MINUTELY_RECURRENCE) take(r.by_minute, limits.minutes);
  if (f == ICAL_SECONDLY_RECURRENCE) take(r.by_second, limits.seconds);
  if (Present(r.by_set_pos) && (limited || f < ICAL_WEEKLY_RECURRENCE)) return false;
  return true;
}

struct Budget {
  size_t steps = 0;
  size_t occurrences = 0;
  IcsExpansionReport report;
  bool Spent() const { return steps >= kMaxIcsSteps || occurrences >= kMaxIcsOccurrences; }
};

// One event's busy intervals in [from, to): its occurrences, less the excluded starts.
class EventExpansion {
 public:
  EventExpansion(const IcsEvent& e, time::Millis from, time::Millis to, Zones& zones,
                 const std::vector<time::Millis>& excluded, Budget& budget, std::vector<BusyInterval>& out)
      : e_(e), from_(from), to_(to), zones_(zones), excluded_(excluded), budget_(budget), out_(out) {
    all_day_ = e.start.all_day;
    if (all_day_ && e.end && e.end->all_day) {
      days_ = time::DaysFromCivil(e.end->date) - time::DaysFromCivil(e.start.date);
    } else if (all_day_ && !e.end && !e.duration_seconds) {
      days_ = 1;
    } else {
      const time::Millis start = zones.Instant(e.start);
      length_ = e.end ? zones.Instant(*e.end) - start : e.duration_seconds.value_or(0) * 1000;
    }
  }

  // The event on its own (DTSTART only).
  void Single() { Add(zones_.Instant(e_.start), StartDay(), false); }

  void Expand() {
    Add(zones_.Instant(e_.start), StartDay(), true);
    for (const std::string& rule : e_.rrules) {
      if (budget_.Spent()) break;
      ExpandRule(rule);
    }
    for (const IcsRecurrenceDate& r : e_.rdates) {
      if (budget_.Spent() || event_steps_ >= kMaxIcsStepsPerEvent) {
        budget_.report.capped = true;
        break;
      }
      ++budget_.steps, ++budget_.report.steps, ++event_steps_;
      const time::Millis start = zones_.Instant(r.start);
      if (r.end) {
        Emit(start, zones_.Instant(*r.end), true);
      } else if (r.duration_seconds) {
        Emit(start, start + *r.duration_seconds * 1000, true);
      } else {
        Add(start, r.start.all_day ? time::DaysFromCivil(r.start.date) : DaysOf(r.start.local), true);
      }
    }
  }

 private:
  int64_t StartDay() const { return all_day_ ? time::DaysFromCivil(e_.start.date) : 0; }

  // An occurrence starting at `start`; `day` is its date (days since the epoch) for all-day events,
  // which end at the start of a day in the feed zone.
  void Add(time::Millis start, int64_t day, bool recurring) {
    Emit(start, days_ ? zones_.DayStart(day + *days_) : start + length_, recurring);
  }

  void Emit(time::Millis start, time::Millis end, bool recurring) {
    if (end <= start || end <= from_ || start >= to_) return;
    if (std::binary_search(excluded_.begin(), excluded_.end(), start)) return;
    if (!seen_.insert(start).second) return;
    if (recurring) {
      if (event_occurrences_ >= kMaxIcsOccurrencesPerEvent || budget_.occurrences >= kMaxIcsOccurrences) {
        budget_.report.capped = true;
        return;
      }
      ++event_occurrences_, ++budget_.occurrences, ++budget_.report.occurrences;
    }
    out_.push_back({start, end});
  }

  void ExpandRule(const std::string& text);

  const IcsEvent& e_;
  time::Millis from_, to_;
  Zones& zones_;
  const std::vector<time::Millis>& excluded_;
  Budget& budget_;
  std::vector<BusyInterval>& out_;
  bool all_day_ = false;
  std::optional<int64_t> days_;  // all-day length in days
  time::Millis length_ = 0;
  std::set<time::Millis> seen_;
  size_t event_steps_ = 0;
  size_t event_occurrences_ = 0;
};

void EventExpansion::ExpandRule(const std::string& text) {
  icalrecurrencetype r = icalrecurrencetype_from_string(text.c_str());
  Limits limits;
  if (r.freq == ICAL_NO_RECURRENCE || !SplitLimits(r, limits)) {
    ++budget_.report.not_expanded;
    return;
  }
  const int count = r.count;
  const icaltimetype until = r.until;
  r.count = 0;
  r.until = icaltime_null_time();
  time::Millis until_local = 0;
  const bool has_until = !icaltime_is_null_time(until);
  if (has_until && !ical::WallClock(until, &until_local)) {
    ++budget_.report.not_expanded;
    return;
  }
  const bool until_utc = has_until && !until.is_date && icaltime_is_utc(until);
  // An UNTIL date includes its whole day.
  if (has_until && until.is_date) until_local += kDay - 1000;

  const time::Millis dtstart = all_day_ ? time::DaysFromCivil(e_.start.date) * kDay : e_.start.local;
  const time::Millis span = days_ ? *days_ * kDay : std::max<time::Millis>(length_, 0);
  // Skip ahead to the window rather than walk from DTSTART (COUNT needs the walk).
  const time::Millis window_start = zones_.ToLocal(from_, e_.start) - kDstSlack - span;
  const time::Millis window_end = zones_.ToLocal(to_, e_.start) + kDstSlack;
  time::Millis first = dtstart;
  static constexpr time::Millis kUnit[] = {1000, 60 * 1000, 3600 * 1000, kDay, 7 * kDay};
  // Whole units of the rule's frequency keep DTSTART's place in the pattern (an all-day event
  // moves by whole days only).
  const bool fixed_unit = r.freq <= ICAL_WEEKLY_RECURRENCE && (!all_day_ || r.freq >= ICAL_DAILY_RECURRENCE);
  if (count == 0 && fixed_unit && window_start > dtstart) {
    const time::Millis unit = kUnit[r.freq - ICAL_SECONDLY_RECURRENCE] * r.interval;
    first = dtstart + (window_start - dtstart) / unit * unit;
  }
  ical::Iterator it(icalrecur_iterator_new(r, ical::FloatingTime(first, all_day_)));
  if (!it) {
    ++budget_.report.not_expanded;
    return;
  }
  if (count == 0 && r.freq >= ICAL_MONTHLY_RECURRENCE && window_start > dtstart &&
      icalrecur_iterator_set_start(it.get(), ical::FloatingTime(window_start, all_day_)))
    first = window_start;

  int found = 0;
  time::CivilDate previous = time::CivilFromDays(DaysOf(first));
  while (true) {
    if (event_steps_ >= kMaxIcsStepsPerEvent || budget_.steps >= kMaxIcsSteps) {
      budget_.report.capped = true;
      return;
    }
    const icaltimetype next = icalrecur_iterator_next(it.get());
    time::Millis local = 0;
    if (icaltime_is_null_time(next) || !ical::WallClock(next, &local)) return;
    size_t cost = 1;
    const time::CivilDate day = time::CivilFromDays(DaysOf(local));
    const int64_t months = (int64_t{day.year} - previous.year) * 12 + (int64_t{day.month} - previous.month);
    if (r.freq == ICAL_MONTHLY_RECURRENCE) cost = kStepsPerPeriod * std::max<int64_t>(1, months / r.interval);
    if (r.freq == ICAL_YEARLY_RECURRENCE)
      cost = kStepsPerPeriod * std::max<int64_t>(1, months / 12 / r.interval);
    previous = day;
    event_steps_ += cost, budget_.steps += cost, budget_.report.steps += cost;

    if (local > window_end) return;
    if (!limits.Match(local)) continue;
    const time::Millis start = all_day_       ? zones_.DayStart(DaysOf(local))
                               : e_.start.utc ? local
                                              : zones_.FromLocal(local, e_.start.tzid);
    if (has_until && (until_utc ? start > until_local : local > until_local)) return;
    if (count > 0 && ++found > count) return;
    Add(start, DaysOf(local), true);
    if (budget_.Spent() || event_occurrences_ >= kMaxIcsOccurrencesPerEvent) {
      budget_.report.capped = true;
      return;
    }
  }
}

}  // namespace

std::vector<BusyInterval> IcsBusyTimes(const IcsCalendar& cal, time::Millis from, time::Millis to,
                                       const time::Zone& fallback_zone, IcsExpansionReport* report) {
  ical::UseLibical();
  std::optional<time::Zone> feed_zone;
  if (!cal.time_zone.empty()) feed_zone = time::Zone::Find(cal.time_zone);
  Zones zones(cal, feed_zone ? *feed_zone : fallback_zone, from);

  // RECURRENCE-ID overrides: the occurrences of each series they replace.
  std::map<std::string, std::vector<time::Millis>> replaced;
  for (const IcsEvent& e : cal.events) {
    if (e.recurrence_id) replaced[e.uid].push_back(zones.Instant(*e.recurrence_id));
  }
  for (auto& [uid, starts] : replaced) std::sort(starts.begin(), starts.end());

  Budget budget;
  std::vector<BusyInterval> out;
  const std::vector<time::Millis> none;
  for (const IcsEvent& e : cal.events) {
    if (!e.busy) continue;
    if (e.recurrence_id) {
      EventExpansion(e, from, to, zones, none, budget, out).Single();
      continue;
    }
    std::vector<time::Millis> excluded;
    auto r = replaced.find(e.uid);
    if (r != replaced.end()) excluded = r->second;
    if (e.recurring) {
      for (const IcsTime& x : e.exdates) excluded.push_back(zones.Instant(x));
    }
    std::sort(excluded.begin(), excluded.end());
    EventExpansion expansion(e, from, to, zones, excluded, budget, out);
    if (e.recurring && !budget.Spent()) {
      expansion.Expand();
    } else {
      if (e.recurring) budget.report.capped = true;
      expansion.Single();
    }
  }
  std::sort(out.begin(), out.end(), [](const BusyInterval& a, const BusyInterval& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  });
  if (report) *report = budget.report;
  return out;
}

CompactIcs CompactIcsCalendar(IcsCalendar cal) {
  CompactIcs out;
  std::set<std::string> overridden;
  for (const IcsEvent& e : cal.events) {
    if (e.recurrence_id) overridden.insert(e.uid);
  }
  std::map<std::string, std::optional<time::Zone>> zones;
  // The instant of a UTC or IANA-zoned time; nullopt for one that depends on the asked zone.
  auto fixed_instant = [&](const IcsTime& t) -> std::optional<time::Millis> {
    if (t.all_day) return std::nullopt;
    if (t.utc) return t.local;
    if (t.tzid.empty()) return std::nullopt;
    auto it = zones.find(t.tzid);
    if (it == zones.end()) it = zones.emplace(t.tzid, time::Zone::Find(t.tzid)).first;
    if (!it->second) return std::nullopt;
    return it->second->FromLocal(t.local);
  };
  std::vector<IcsEvent> rest;
  for (IcsEvent& e : cal.events) {
    if (!e.busy && !e.recurrence_id) continue;  // free, and overriding nothing: never busy
    if (e.busy && !e.recurring && !e.recurrence_id && overridden.count(e.uid) == 0) {
      const std::optional<time::Millis> start = fixed_instant(e.start);
      const std::optional<time::Millis> end = e.end ? fixed_instant(*e.end) : std::nullopt;
      if (start && (end || !e.end)) {
        const time::Millis stop = end ? *end : *start + e.duration_seconds.value_or(0) * 1000;
        if (stop > *start) {
          out.fixed.push_back({*start, stop});
          out.longest = std::max(out.longest, stop - *start);
        }
        continue;
      }
    }
    rest.push_back(std::move(e));
  }
  std::sort(out.fixed.begin(), out.fixed.end(), [](const BusyInterval& a, const BusyInterval& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  });
  out.fixed.shrink_to_fit();
  rest.shrink_to_fit();
  cal.events = std::move(rest);
  out.rest = std::move(cal);
  return out;
}

namespace {

// A string's own allocation, beyond the object (none while it fits in the object).
size_t HeapBytes(const std::string& s) {
  return s.capacity() > std::string().capacity() ? s.capacity() + 1 : 0;
}

size_t HeapBytes(const IcsTime& t) {
  return HeapBytes(t.tzid);
}

}  // namespace

size_t HeldBytes(const CompactIcs& feed) {
  size_t n = sizeof(CompactIcs) + feed.fixed.capacity() * sizeof(BusyInterval);
  const IcsCalendar& cal = feed.rest;
  n += HeapBytes(cal.name) + HeapBytes(cal.time_zone) + cal.events.capacity() * sizeof(IcsEvent);
  for (const auto& [tzid, block] : cal.vtimezones) n += 64 + tzid.capacity() + block.capacity();
  for (const IcsEvent& e : cal.events) {
    n += HeapBytes(e.uid) + HeapBytes(e.summary) + HeapBytes(e.start);
    if (e.end) n += HeapBytes(*e.end);
    if (e.recurrence_id) n += HeapBytes(*e.recurrence_id);
    n += e.rrules.capacity() * sizeof(std::string) + e.rdates.capacity() * sizeof(IcsRecurrenceDate) +
         e.exdates.capacity() * sizeof(IcsTime);
    for (const std::string& r : e.rrules) n += HeapBytes(r);
    for (const IcsRecurrenceDate& r : e.rdates) n += HeapBytes(r.start) + (r.end ? HeapBytes(*r.end) : 0);
    for (const IcsTime& t : e.exdates) n += HeapBytes(t);
  }
  return n;
}

std::vector<BusyInterval> IcsBusyTimes(const CompactIcs& feed, time::Millis from, time::Millis to,
                                       const time::Zone& fallback_zone, IcsExpansionReport* report) {
  std::vector<BusyInterval> out = IcsBusyTimes(feed.rest, from, to, fallback_zone, report);
  auto it = std::lower_bound(feed.fixed.begin(), feed.fixed.end(), from - feed.longest,
                             [](const BusyInterval& b, time::Millis t) { return b.start < t; });
  for (; it != feed.fixed.end() && it->start < to; ++it) {
    if (it->end > from) out.push_back(*it);
  }
  std::sort(out.begin(), out.end(), [](const BusyInterval& a, const BusyInterval& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  });
  return out;
}

}  // namespace rendezvous::calendar
