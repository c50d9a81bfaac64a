// ICS feeds as last read, per URL, shared by every user and request that names the URL: the parsed
// calendar (compacted: ics.hpp's CompactIcs), the memory it holds and its feed text's size, its ETag /
// Last-Modified (the next download asks with If-None-Match / If-Modified-Since, and a 304 reuses the parse),
// and whether the last attempt failed.
//
// One refresh per URL at a time (single flight): a caller that finds one running joins it. A
// refresh runs on the RefreshPool; the caller waits for it at most until its own deadline and at
// most `max_wait` after the refresh started, then answers with what is known: the last parse if it
// is within `stale` (the feed is not named failed while its refresh is still running), else a
// timeout. A parse is used without asking again for `fresh` (the caller's); a failure is answered
// again without asking for min(fresh, 10 s).
//
// Bounded: the parses kept hold at most `max_bytes` of memory together (plugins.calendar.
// ics_memory_bytes; each weighs its Download::held_bytes; least recently used dropped first; a parse
// heavier than the whole bound is answered to the callers waiting for it and not kept), checked
// whenever a refresh ends: the previous parse of a feed whose refresh is running stays until the
// refresh ends (its callers may need it, and a 304 reuses it). At most `max_entries` URLs are
// remembered. `held_changed` (optional) is told the new total whenever it
// changes (for a metric), with the cache's lock held.
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "ics.hpp"
#include "refresh_pool.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::calendar {

class IcsFeedCache {
 public:
  using Clock = std::chrono::steady_clock;

  // What a download is told and answers.
  struct Validators {
    std::string etag;
    std::string last_modified;
  };
  struct Download {
    enum class Kind { kParsed, kNotModified, kFailed } kind = Kind::kFailed;
    std::shared_ptr<const CompactIcs> calendar;  // kParsed
    size_t bytes = 0;                            // kParsed: the feed text's size
    size_t held_bytes = 0;                       // kParsed: the memory `calendar` holds (HeldBytes)
    Validators validators;                       // kParsed
    Status failure;                              // kFailed
  };
  // Performs one download (conditional when `validators` is set) within `deadline`. Runs on the pool.
  using Downloader =
      std::function<Download(const std::optional<Validators>& validators, Clock::time_point deadline)>;

  struct Answer {
    std::shared_ptr<const CompactIcs> calendar;  // the parse to use, fresh or stale; null: none
    size_t bytes = 0;
    std::optional<Status> failure;  // the feed cannot be read now: name it failed
    bool pending = false;           // a refresh is still running: the answer is not final
  };

  IcsFeedCache(RefreshPool& pool, std::chrono::seconds stale, size_t max_bytes, size_t max_entries = 10000,
               std::function<void(size_t)> held_changed = nullptr);

  // A refresh in progress, shared by the callers who joined it.
  struct Flight {
    Clock::time_point started;
    bool done = false;
    Answer answer;
  };
  // A started or joined look at the feed (Start), to wait for with Await.
  struct Ticket {
    std::string key;
    std::optional<Answer> ready;     // answered at once (fresh, a recent failure, or not started)
    std::shared_ptr<Flight> flight;  // else: the refresh to wait for
  };
  // The feed identified by `key` (a hash of its URL): answered at once when its parse is fresh
  // (or its failure recent), else a refresh by `download` (within `refresh_budget`) is started or
  // joined. Never waits.
  Ticket Start(const std::string& key, std::chrono::seconds fresh, std::chrono::milliseconds refresh_budget,
               Downloader download);
  // Waits for the ticket's refresh until min(deadline, its start + max_wait).
  Answer Await(const Ticket& ticket, Clock::time_point deadline, std::chrono::milliseconds max_wait);
  // The feed text's size of the feed's last parse, if one is kept.
  std::optional<size_t> KnownBytes(const std::string& key);
  // The memory the parses kept hold together (for tests and metrics): at most max_bytes.
  size_t kept_bytes();

 private:
  struct Entry {
    std::shared_ptr<const CompactIcs> calendar;
    size_t bytes = 0;  // feed text
    size_t held = 0;   // memory, counted in held_
    Validators validators;
    Clock::time_point good_at;  // when the parse was last confirmed (200 or 304)
    std::optional<Status> failure;
    Clock::time_point failed_at;
    Clock::time_point used_at;
    std::shared_ptr<Flight> flight;
  };

  void Finish(const std::string& key, const std::shared_ptr<Flight>& flight, Download d);
  // The answer standing in while a refresh runs or after it failed (lock held).
  Answer StandIn(const Entry& e, Clock::time_point now) const;
  void Evict(Clock::time_point now);  // lock held
  void Drop(Entry& e);                // forgets the entry's parse (lock held)

  RefreshPool& pool_;
  const std::chrono::seconds stale_;
  const size_t max_bytes_;
  const size_t max_entries_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Entry> entries_;
  size_t held_ = 0;
  const std::function<void(size_t)> held_changed_;
};

}  // namespace rendezvous::calendar
