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
// under the host's lock.
//
// Bounds: at most `max_hosts` hosts (the least recently used goes first), `max_times` times and
// kMaxRanges ranges per host, `max_total` times in all; a time is 32 bytes, so by default 2 MiB per
// host and 64 MiB in all. A host's ranges are kept around the latest read: ranges that overlap or
// touch it join it (cut back around it past `max_times`), the nearest others stay while the host's
// budget allows. Reads of one range run once (Get): requests that need a range another request is
// reading wait for that read instead of reading it again. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
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
  static constexpr size_t kMaxRanges = 16;  // ranges kept per host
  // How long a request waits for another's read of the range it needs before reading it itself.
  static constexpr std::chrono::milliseconds kLoadWait{2000};

  // At most `max_hosts` hosts, each with at most `max_times` times (a read longer than that is not
  // kept), and `max_total` times in all.
  explicit BookedTimesCache(size_t max_hosts = 1024, size_t max_times = 65536, size_t max_total = 2000000)
      : max_hosts_(max_hosts), max_times_(max_times), max_total_(max_total) {}

  // The times of `host` at `version` starting in [lo, hi), by start: from the entry when a kept
  // range holds [lo, hi) whole, else from a read of a range holding it that another request has
  // under way, else from `load` (every booked time of the host starting in [lo, hi), in any order;
  // may throw, which Get passes on), which is then kept (Put). Call it holding no database
  // connection: it may wait for another request's `load`.
  std::vector<BookedTime> Get(int64_t host, int64_t version, time::Millis lo, time::Millis hi,
                              const std::function<std::vector<BookedTime>()>& load);
  // Requests waiting in Get for another's read.
  size_t waiting() const;

  // The times of `host` at `version` starting in [lo, hi), by start; nullopt unless one kept range
  // holds [lo, hi) whole.
  std::optional<std::vector<BookedTime>> Find(int64_t host, int64_t version, time::Millis lo, time::Millis hi);
  // Keeps `times`: every booked time of `host` starting in [lo, hi), read at `version` (in any
  // order). Joins the host's ranges kept at that version (the new read wins where they overlap),
  // replaces those of an older version, and is dropped when the entry is already newer. Copies
  // `times` once into the entry (twice when they are not by start).
  void Put(int64_t host, int64_t version, time::Millis lo, time::Millis hi,
           const std::vector<BookedTime>& times);
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

  // A read under way (Get): its host, version and range; its times once done (null: it failed).
  struct Load {
    int64_t host = 0;
    int64_t version = 0;
    time::Millis lo = 0;
    time::Millis hi = 0;
    bool done = false;
    std::shared_ptr<const std::vector<BookedTime>> times;  // by start
  };

  std::optional<std::vector<BookedTime>> FindLocked(int64_t host, int64_t version, time::Millis lo,
                                                    time::Millis hi);
  void Erase(std::unordered_map<int64_t, Entry>::iterator it);

  const size_t max_hosts_;
  const size_t max_times_;
  const size_t max_total_;
  mutable std::mutex mu_;
  std::unordered_map<int64_t, Entry> entries_;
  std::list<int64_t> recent_;  // hosts, most recently used first
  size_t total_ = 0;           // times in all entries
  std::list<std::shared_ptr<Load>> loads_;  // reads under way: at most one per request in Get
  std::condition_variable load_done_;
  size_t waiting_ = 0;
};

}  // namespace rendezvous::bookings
