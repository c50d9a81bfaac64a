// Busy times from outside the bookings — a user's connected calendars — that the free slots of
// the user's event types must avoid. A plugin that knows such times registers a source with the
// host (PluginContext::AddBusyTimeSource); the bookings plugin asks every registered source
// (PluginContext::BusyTimes). None registered: none asked.
#pragma once

#include <cstdint>
#include <vector>

#include "rendezvous/status.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous {

// [start, end) in UTC.
struct BusyTime {
  time::Millis start = 0;
  time::Millis end = 0;
};

// Thread-safe: called from request threads at once.
class BusyTimeSource {
 public:
  virtual ~BusyTimeSource() = default;
  // The user's busy times overlapping [from, to) (a range of at most 64 days). An error status
  // when they could not be found out (an outside service failed, timed out, or needs the user to
  // reconnect): callers then offer no time rather than a wrong one.
  virtual Result<std::vector<BusyTime>> BusyTimes(int64_t user_id, time::Millis from, time::Millis to) = 0;
};

}  // namespace rendezvous
