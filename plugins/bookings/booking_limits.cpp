#include "booking_limits.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <utility>

namespace rendezvous::bookings {
namespace {

constexpr std::array<LimitPeriod, 4> kPeriods = {LimitPeriod::kDay, LimitPeriod::kWeek, LimitPeriod::kMonth,
                                                 LimitPeriod::kYear};

std::optional<int> LimitFor(const BookingLimits& limits, LimitPeriod kind) {
  switch (kind) {
    case LimitPeriod::kDay:
      return limits.day;
    case LimitPeriod::kWeek:
      return limits.week;
    case LimitPeriod::kMonth:
      return limits.month;
    case LimitPeriod::kYear:
      return limits.year;
  }
  return std::nullopt;
}

const char* NameOf(LimitPeriod kind) {
  switch (kind) {
    case LimitPeriod::kDay:
      return "day";
    case LimitPeriod::kWeek:
      return "week";
    case LimitPeriod::kMonth:
      return "month";
    case LimitPeriod::kYear:
      return "year";
  }
  return "";
}

time::CivilDate NextMonth(time::CivilDate d) {
  return d.month == 12 ? time::CivilDate{d.year + 1, 1, 1} : time::CivilDate{d.year, d.month + 1, 1};
}

}  // namespace

HostCalendar HostCalendarOf(const std::string& time_zone, const std::string& week_start) {
  static const std::array<const char*, 7> kDays = {"Monday", "Tuesday", "Wednesday", "Thursday",
                                                   "Friday", "Saturday", "Sunday"};
  HostCalendar c;
  c.zone = time::Zone::Find(time_zone).value_or(time::Zone::Utc());
  for (unsigned i = 0; i < kDays.size(); ++i) {
    if (week_start == kDays[i]) c.week_start = i + 1;
  }
  return c;
}

TimeRange PeriodOf(LimitPeriod kind, time::Millis t, const HostCalendar& c) {
  const time::CivilDate date = c.zone.DateAt(t);
  switch (kind) {
    case LimitPeriod::kDay: {
      const int64_t day = time::DaysFromCivil(date);
      return {c.zone.StartOfDay(date), c.zone.StartOfDay(time::CivilFromDays(day + 1))};
    }
    case LimitPeriod::kWeek: {
      const int64_t first = time::DaysFromCivil(date) - (time::IsoWeekday(date) + 7 - c.week_start) % 7;
      return {c.zone.StartOfDay(time::CivilFromDays(first)), c.zone.StartOfDay(time::CivilFromDays(first + 7))};
    }
    case LimitPeriod::kMonth: {
      const time::CivilDate first{date.year, date.month, 1};
      return {c.zone.StartOfDay(first), c.zone.StartOfDay(NextMonth(first))};
    }
    case LimitPeriod::kYear:
      return {c.zone.StartOfDay({date.year, 1, 1}), c.zone.StartOfDay({date.year + 1, 1, 1})};
  }
  return {t, t + 1};
}

TimeRange LimitedSpan(const BookingLimits& limits, time::Millis from, time::Millis to, const HostCalendar& c) {
  TimeRange span{from, std::max(to, from + 1)};
  for (LimitPeriod kind : kPeriods) {
    if (!LimitFor(limits, kind)) continue;
    span.start = std::min(span.start, PeriodOf(kind, from, c).start);
    span.end = std::max(span.end, PeriodOf(kind, std::max(from, to - 1), c).end);
  }
  return span;
}

Status CheckBookingLimits(const BookingLimits& limits, time::Millis start, const std::vector<time::Millis>& booked,
                          const HostCalendar& c) {
  for (LimitPeriod kind : kPeriods) {
    const std::optional<int> limit = LimitFor(limits, kind);
    if (!limit) continue;
    const TimeRange p = PeriodOf(kind, start, c);
    const auto held = std::count_if(booked.begin(), booked.end(), [&](time::Millis b) { return b >= p.start && b < p.end; });
    if (held >= *limit) {
      return Status::Conflict("the event type takes at most " + std::to_string(*limit) + " booking" +
                              (*limit == 1 ? "" : "s") + " a " + NameOf(kind) + " and this " + NameOf(kind) +
                              " is full")
          .WithReason("booking_limit_reached");
    }
  }
  return Status::Ok();
}

std::vector<time::Millis> WithinBookingLimits(const BookingLimits& limits, std::vector<time::Millis> starts,
                                              const std::vector<time::Millis>& booked, const HostCalendar& c) {
  for (LimitPeriod kind : kPeriods) {
    const std::optional<int> limit = LimitFor(limits, kind);
    if (!limit) continue;
    // Bookings counted by the start of their period; a start's period is looked up once per run of
    // starts in it (they are ascending).
    std::map<time::Millis, int> held;
    for (time::Millis b : booked) ++held[PeriodOf(kind, b, c).start];
    TimeRange period{0, 0};
    bool full = false;
    std::vector<time::Millis> open;
    open.reserve(starts.size());
    for (time::Millis s : starts) {
      if (s < period.start || s >= period.end) {
        period = PeriodOf(kind, s, c);
        auto it = held.find(period.start);
        full = it != held.end() && it->second >= *limit;
      }
      if (!full) open.push_back(s);
    }
    starts = std::move(open);
  }
  return starts;
}

}  // namespace rendezvous::bookings
