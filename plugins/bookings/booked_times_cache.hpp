// The booked times of recently asked hosts, for the slots lists: a booking page is asked for the
// same weeks again and again, and a host's bookings are the largest read of a slots answer. An
// entry is used only while the host's version (bumped in the transaction of every change to the
// host's bookings, on any instance; see LoadEventTypeWithBuffers) is unchanged, so a list never
// misses a booking committed before the version was read. (The completion sweep does not bump it:
// a booking it completes has ended, so keeping it in an entry can only hide a start within the
// ended booking's after-buffer until the next change, never offer a taken one.) Creating a
// booking never uses it: that check reads the bookings under the host's lock. Thread-safe.
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

// A booking's time and its event type (whose buffers apply).
struct BookedTime {
  time::Millis start = 0;
  time::Millis end = 0;
  int64_t event_type_id = 0;
};

class BookedTimesCache {
 public:
  // At most `max_hosts` hosts, each with at most `max_times` times (larger lists are not kept).
  BookedTimesCache(size_t max_hosts, size_t max_times) : max_hosts_(max_hosts), max_times_(max_times) {}

  // The times for slots starting in [from, to) of `host` at `version`; nullopt when not kept.
  std::optional<std::vector<BookedTime>> Find(int64_t host, int64_t version, time::Millis from, time::Millis to);
  // Keeps the times read at `version` for slots starting in [from, to), replacing the host's entry.
  void Put(int64_t host, int64_t version, time::Millis from, time::Millis to, std::vector<BookedTime> times);

 private:
  struct Entry {
    int64_t version = 0;
    time::Millis from = 0;
    time::Millis to = 0;
    std::vector<BookedTime> times;
    std::list<int64_t>::iterator age;  // position in recent_
  };

  const size_t max_hosts_;
  const size_t max_times_;
  std::mutex mu_;
  std::unordered_map<int64_t, Entry> entries_;
  std::list<int64_t> recent_;  // hosts, most recently used first
};

}  // namespace rendezvous::bookings
