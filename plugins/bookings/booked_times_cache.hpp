// The booked times of recently asked hosts, for the slots lists: a booking page is asked for the
// same weeks again and again (or for windows shifted a little), and a host's bookings are the
// largest read of a slots answer. A host's entry holds ranges of booking starts, each with every
// booking of the host starting in it, all read at one version of the host (bumped in the
// transaction of every change to the host's bookings, on any instance; see
// LoadEventTypeWithBuffers). An entry is used only while the host's version is unchanged, so a list
// never misses a booking committed before the version was read; the changes this instance commits
// itself are applied to the entry (Apply), so they move it to the next version instead of emptying
// it. (The completion sweep does not bump the version: a booking it completes has ended, so keeping
// it in an entry can only hide a start within the ended booking's after-buffer until the next
// change, never offer a taken one.) Creating a booking never uses it: that check reads the bookings
// under the host's lock. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "rendezvous/time.hpp"

namespace rendezvous::bookings {

// A booking's time, its event type (whose buffers apply) and its id.
struct BookedTime {
  time::Millis start = 0;
  time::Millis end = 0;
  int64_t event_type_id = 0;
  int64_t id = 0;
};

class BookedTimesCache {
 public:
  // At most `max_hosts` hosts, each with at most `max_times` times (a host's ranges are cut back
  // to the latest one read past that; a longer range is not kept), and `max_total` times in all.
  BookedTimesCache(size_t max_hosts, size_t max_times, size_t max_total = 2000000)
      : max_hosts_(max_hosts), max_times_(max_times), max_total_(max_total) {}

  // The times of `host` at `version` starting in [lo, hi), by start; nullopt unless one kept range
  // holds [lo, hi) whole.
  std::optional<std::vector<BookedTime>> Find(int64_t host, int64_t version, time::Millis lo, time::Millis hi);
  // Keeps `times`: every booked time of `host` starting in [lo, hi), read at `version` (in any
  // order). Joins the host's ranges kept at that version (the new read wins where they overlap),
  // replaces those of an older version, and is dropped when the entry is already newer.
  void Put(int64_t host, int64_t version, time::Millis lo, time::Millis hi, std::vector<BookedTime> times);
  // A change of `host`'s bookings committed by this instance in the transaction that made the
  // host's version `version` (holding the host's lock): `added` is booked now, the booking
  // `removed_id` (0: none) no longer. An entry at `version - 1` moves to `version`; any other is
  // left as it is (a later Find at `version` misses it).
  void Apply(int64_t host, int64_t version, const std::optional<BookedTime>& added, int64_t removed_id);

 private:
  struct Range {
    time::Millis lo = 0;
    time::Millis hi = 0;
    std::vector<BookedTime> times;  // by start
  };
  struct Entry {
    int64_t version = 0;
    std::vector<Range> ranges;  // by lo, disjoint
    size_t count = 0;           // times in all ranges
    std::list<int64_t>::iterator age;  // position in recent_
  };

  void Erase(std::unordered_map<int64_t, Entry>::iterator it);

  const size_t max_hosts_;
  const size_t max_times_;
  const size_t max_total_;
  std::mutex mu_;
  std::unordered_map<int64_t, Entry> entries_;
  std::list<int64_t> recent_;  // hosts, most recently used first
  size_t total_ = 0;           // times in all entries
};

}  // namespace rendezvous::bookings
