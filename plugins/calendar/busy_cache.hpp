// Recent busy times per user, for the slots of their event types: a booking page asks for slots
// again and again, and each answer would otherwise cost a Google free/busy call and a download of
// every ICS feed. An answer is fresh for `fresh` (10 s at most when a source failed, so a
// recovered source is asked again soon; 0: never); what a source said stays usable for `stale`
// to stand in for it while it fails (0: not kept). Changes a user makes through this server (connecting, disconnecting,
// saving feeds) forget the user's entries. Bounded: 4 windows per user, `max_users` users.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "rendezvous/status.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::calendar {

// A busy period of a user: where it comes from ("google_calendar" or "ics_feed"), the credential
// or feed id, and Google's calendar id.
struct BusyPeriod {
  time::Millis start = 0;
  time::Millis end = 0;
  std::string source;
  int64_t source_id = 0;
  std::string external_id;
};

// A source that could not be read: the credential (google_calendar) or feed (ics_feed) and why.
struct BusySourceError {
  std::string source;
  int64_t source_id = 0;
  Status status;
  bool stood_in = false;  // what the source said last is in the periods already
};

// Every source of a user asked for one range: the periods of those that answered, sorted, and
// the sources that did not.
struct CollectedBusy {
  std::vector<BusyPeriod> periods;
  std::vector<BusySourceError> failures;
  size_t sources = 0;
  bool pending = false;  // a source's refresh was still running: not an answer to keep
};

class BusyCache {
 public:
  using Clock = std::chrono::steady_clock;
  BusyCache(std::chrono::seconds fresh, std::chrono::seconds stale, size_t max_users = 10000);

  // A fresh answer for a window holding [from, to), its periods cut to those overlapping it.
  std::optional<CollectedBusy> Fresh(int64_t user_id, time::Millis from, time::Millis to, Clock::time_point now);
  // What a source said, and when.
  struct Known {
    std::vector<BusyPeriod> periods;
    Clock::time_point said_at;
  };
  // What the source said last (within `stale`) for a window holding [from, to); nullopt when no
  // such answer is kept.
  std::optional<Known> LastKnown(int64_t user_id, const std::string& source, int64_t source_id, time::Millis from,
                                 time::Millis to, Clock::time_point now);
  // Keeps `busy`. `stand_ins` are the LastKnown answers of sources that failed in it: their
  // periods are in `busy` too, and they stay known as of when they were said.
  void Put(int64_t user_id, time::Millis from, time::Millis to, const CollectedBusy& busy, Clock::time_point now,
           const std::map<std::pair<std::string, int64_t>, Clock::time_point>& stand_ins = {});
  void Forget(int64_t user_id);

 private:
  struct Entry {
    time::Millis from = 0;
    time::Millis to = 0;
    Clock::time_point fetched;
    Clock::time_point fresh_until;
    CollectedBusy busy;
    std::map<std::pair<std::string, int64_t>, Clock::time_point> stand_ins;  // failed source -> said at
  };
  static constexpr size_t kWindowsPerUser = 4;

  std::chrono::seconds fresh_;
  std::chrono::seconds stale_;
  size_t max_users_;
  std::mutex mu_;
  std::map<int64_t, std::vector<Entry>> users_;
};

}  // namespace rendezvous::calendar
