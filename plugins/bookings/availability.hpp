// Free times of an event type (docs/bookings.md "Slots"): a grid of starts laid over the
// schedule's working time, minus the minimum notice and everything the host is busy with. Pure
// logic; thread-safe.
//
// The grid: from the start of each working range, and again from each local midnight inside
// one, a start every `interval` minutes whose whole slot lies in the range. So a slot never
// depends on how far a query reaches, and a booking's start is checked against the same grid the
// slots list shows.
//
// Busy: a block is a booking (its time and its event type's buffers) or a busy time from a
// calendar (no buffers). A start `s` of length L with buffers B (before) and A (after) conflicts
// with a block [bs, be) with buffers b, a when s lies strictly inside
// (bs - L - max(A, b), be + max(B, a)): the gap between two bookings is at least the larger of the
// earlier one's after-buffer and the later one's before-buffer.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "booking.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/time.hpp"
#include "schedule.hpp"

namespace rendezvous::bookings {

struct SlotRules {
  int length = 30;    // minutes
  int interval = 30;  // minutes between starts: slotInterval, or the length
  int before = 0;     // buffer minutes before
  int after = 0;      // buffer minutes after
  int notice = 0;     // minimum booking notice, minutes
};

struct BusyBlock {
  time::Millis start = 0;
  time::Millis end = 0;
  int before = 0;  // buffer minutes
  int after = 0;
};

// Every grid start in [from, to), ascending. `working` as WorkingIntervals answers it; `zone` is
// the schedule's.
std::vector<time::Millis> SlotGrid(const std::vector<TimeRange>& working, const time::Zone& zone,
                                   time::Millis from, time::Millis to, const SlotRules& rules);

// The starts of the grid in [from, to) that are at least the notice after `now` and conflict with
// no block, ascending.
std::vector<time::Millis> FreeSlots(const std::vector<TimeRange>& working, const time::Zone& zone,
                                    time::Millis from, time::Millis to, time::Millis now, const SlotRules& rules,
                                    const std::vector<BusyBlock>& busy);

// Whether a booking at `start` conflicts with any block (the rule above).
bool Conflicts(time::Millis start, const SlotRules& rules, const std::vector<BusyBlock>& busy);

// Ok when a booking may start at `start`. A start in the past or off the grid (outside working
// hours included) is a 400 naming "start"; one sooner than the notice or not free, a 409 saying
// why (reason "slot_unavailable").
Status CheckBookable(const std::vector<TimeRange>& working, const time::Zone& zone,
                                          time::Millis start, time::Millis now, const SlotRules& rules,
                                          const std::vector<BusyBlock>& busy);

// The working-time window WorkingIntervals must cover for slots starting in [from, to).
TimeRange GridWindow(time::Millis from, time::Millis to, const SlotRules& rules);

// {"YYYY-MM-DD": [{"start": ISO}, ..]}: each start under its date in `zone`; dates without free
// starts are left out.
Json SlotsByDate(const std::vector<time::Millis>& starts, const time::Zone& zone);

}  // namespace rendezvous::bookings
