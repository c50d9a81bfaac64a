#include "booking_window.hpp"

#include <string>
#include <utility>

namespace rendezvous::bookings {

SlotRules RulesOf(const EventType& et) {
  SlotRules r;
  r.length = et.fields.length_minutes;
  r.interval = et.fields.slot_interval.value_or(et.fields.length_minutes);
  r.before = et.fields.before_event_buffer;
  r.after = et.fields.after_event_buffer;
  r.notice = et.fields.minimum_booking_notice;
  return r;
}

time::Zone ZoneOf(const Schedule& schedule) {
  return time::Zone::Find(schedule.time_zone).value_or(time::Zone::Utc());
}

std::vector<BusyBlock> BookingWindow::OutsideBusy(int64_t host_id, Millis from, Millis to,
                                                  std::vector<BusySourceFailure>* failures) const {
  if (!busy_source_) return {};
  BusyReport report = busy_source_(host_id, from, to);
  if (failures) *failures = std::move(report.failures);
  std::vector<BusyBlock> blocks;
  blocks.reserve(report.times.size());
  for (const BusyTime& t : report.times) blocks.push_back({t.start, t.end, 0, 0});
  return blocks;
}

Millis BookingWindow::Horizon(Millis now) const {
  return now + static_cast<Millis>(max_days_ahead_) * time::kMillisPerDay;
}

Status BookingWindow::CheckHorizon(Millis start) const {
  if (start <= Horizon(time::Now())) return Status::Ok();
  return Status::Invalid("start", "start is more than " + std::to_string(max_days_ahead_) +
                                      " days ahead; bookings can be made at most that far in advance");
}

}  // namespace rendezvous::bookings
