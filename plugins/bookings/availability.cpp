#include "availability.hpp"

#include <algorithm>

namespace rendezvous::bookings {
namespace {

using time::kMillisPerDay;
using time::kMillisPerMinute;
using time::Millis;

Millis Minutes(int m) {
  return static_cast<Millis>(m) * kMillisPerMinute;
}

// The open interval of starts a block forbids (see the header).
struct Forbidden {
  Millis lo = 0;
  Millis hi = 0;
};

Forbidden ForbiddenBy(const BusyBlock& b, const SlotRules& rules) {
  return {b.start - Minutes(rules.length) - Minutes(std::max(rules.after, b.before)),
          b.end + Minutes(std::max(rules.before, b.after))};
}

// Local midnights in (range.start, range.end) of `zone`.
std::vector<Millis> MidnightsInside(const TimeRange& range, const time::Zone& zone) {
  std::vector<Millis> out;
  int64_t day = time::DaysFromCivil(zone.DateAt(range.start)) + 1;
  for (;; ++day) {
    const Millis m = zone.StartOfDay(time::CivilFromDays(day));
    if (m >= range.end) break;
    if (m > range.start) out.push_back(m);
  }
  return out;
}

}  // namespace

std::vector<Millis> SlotGrid(const std::vector<TimeRange>& working, const time::Zone& zone, Millis from, Millis to,
                             const SlotRules& rules) {
  std::vector<Millis> out;
  if (to <= from || rules.length <= 0 || rules.interval <= 0) return out;
  const Millis length = Minutes(rules.length);
  const Millis step = Minutes(rules.interval);
  for (const TimeRange& r : working) {
    if (r.end <= from || r.start >= to) continue;
    std::vector<Millis> anchors{r.start};
    for (Millis m : MidnightsInside(r, zone)) anchors.push_back(m);
    anchors.push_back(r.end);
    for (size_t i = 0; i + 1 < anchors.size(); ++i) {
      Millis t = anchors[i];
      if (t < from) t += (from - t + step - 1) / step * step;  // the first grid start at or after `from`
      for (; t < anchors[i + 1] && t < to && t + length <= r.end; t += step) out.push_back(t);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<Millis> FreeSlots(const std::vector<TimeRange>& working, const time::Zone& zone, Millis from, Millis to,
                              Millis now, const SlotRules& rules, const std::vector<BusyBlock>& busy) {
  std::vector<Forbidden> forbidden;
  forbidden.reserve(busy.size());
  for (const BusyBlock& b : busy) forbidden.push_back(ForbiddenBy(b, rules));
  std::sort(forbidden.begin(), forbidden.end(), [](const Forbidden& a, const Forbidden& b) { return a.lo < b.lo; });
  // Merged, so one binary search per start decides.
  std::vector<Forbidden> merged;
  for (const Forbidden& f : forbidden) {
    if (!merged.empty() && f.lo < merged.back().hi) {
      merged.back().hi = std::max(merged.back().hi, f.hi);
    } else {
      merged.push_back(f);
    }
  }
  const Millis earliest = now + Minutes(rules.notice);
  std::vector<Millis> out;
  for (Millis s : SlotGrid(working, zone, from, to, rules)) {
    if (s < earliest) continue;
    auto it = std::upper_bound(merged.begin(), merged.end(), s,
                               [](Millis v, const Forbidden& f) { return v < f.lo; });
    // `it` is the first interval starting after s; only the one before it may contain s.
    if (it != merged.begin() && s > std::prev(it)->lo && s < std::prev(it)->hi) continue;
    out.push_back(s);
  }
  return out;
}

bool Conflicts(Millis start, const SlotRules& rules, const std::vector<BusyBlock>& busy) {
  return std::any_of(busy.begin(), busy.end(), [&](const BusyBlock& b) {
    const Forbidden f = ForbiddenBy(b, rules);
    return start > f.lo && start < f.hi;
  });
}

Status CheckBookable(const std::vector<TimeRange>& working, const time::Zone& zone, Millis start, Millis now,
                     const SlotRules& rules, const std::vector<BusyBlock>& busy) {
  auto unavailable = [](const std::string& why) {
    return Status::Conflict("this time cannot be booked: " + why).WithReason("slot_unavailable");
  };
  if (start < now) return Status::Invalid("start", "start is in the past");
  const std::vector<Millis> grid = SlotGrid(working, zone, start, start + 1, rules);
  if (grid.empty() || grid.front() != start) {
    return Status::Invalid("start",
                           "start is not one of the event type's slots (outside the host's working hours or off "
                           "the slot grid); GET /v2/slots lists them");
  }
  if (start < now + Minutes(rules.notice)) {
    return unavailable("it is sooner than the event type's minimum booking notice of " +
                       std::to_string(rules.notice) + " minutes");
  }
  if (Conflicts(start, rules, busy)) return unavailable("the host is not available at this time");
  return Status::Ok();
}

TimeRange GridWindow(Millis from, Millis to, const SlotRules& rules) {
  return {from - kMillisPerDay, to + Minutes(rules.length) + kMillisPerDay};
}

Json SlotsByDate(const std::vector<Millis>& starts, const time::Zone& zone) {
  Json out = Json::object();
  Json* list = nullptr;
  int64_t list_day = 0;
  for (Millis s : starts) {
    const Millis local = zone.ToLocal(s);
    const int64_t day = local >= 0 ? local / kMillisPerDay : (local - kMillisPerDay + 1) / kMillisPerDay;
    if (list == nullptr || day != list_day) {  // starts are ascending: each date's run is together
      list = &out[time::FormatDate(time::CivilFromDays(day))];
      list_day = day;
    }
    Json slot = Json::object();
    slot.emplace("start", time::FormatIso(s));
    list->push_back(std::move(slot));
  }
  return out;
}

}  // namespace rendezvous::bookings
