// The busy times of a user's sources: the Google calendars to check (one free/busy query) and the
// ICS feeds (each downloaded and parsed through the feed cache, ics_feed_cache.hpp). Asked
// directly (GET /v2/calendars/busy-times) every source is asked within the request's budget; for
// the slots of a booking page the answer goes through the busy cache (busy_cache.hpp) and the
// refreshes run on this object's own threads, never the API's, bounded in time
// (plugins.calendar.busy_times). A source that fails is logged, counted
// (calendar_busy_source_failures_total) and named in the answer.
//
// Thread-safe; may throw DatabaseUnavailable. The references must outlive this object.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "busy_cache.hpp"
#include "calendar_list.hpp"
#include "calendar_metrics.hpp"
#include "calendar_options.hpp"
#include "google_api.hpp"
#include "google_credentials.hpp"
#include "ics_feed_cache.hpp"
#include "ics_fetcher.hpp"
#include "refresh_pool.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::calendar {

// The API's error code of a busy-time source's failure (reconnect_required, bad_gateway,
// gateway_timeout, not_configured).
std::string BusyFailureCode(const Status& failure);
// The busy-time sources, and the error codes BusyFailureCode gives their failures.
constexpr const char* kBusySources[] = {"google_calendar", "ics_feed"};
constexpr const char* kBusyFailureCodes[] = {"bad_gateway", "gateway_timeout", "reconnect_required",
                                             "not_configured"};

class BusyTimes {
 public:
  // The user's Google calendars come from `calendars`, their credential from `credentials`;
  // `busy_cache` keeps answers for slots; `trimmer` is told of large answers written.
  BusyTimes(Database& db, Logger& logger, const GoogleApi& google, const CalendarOptions& options,
            GoogleCredentials& credentials, CalendarList& calendars, IcsFetcher& fetcher,
            BusyCache& busy_cache, MemoryTrimmer& trimmer, CalendarMetrics& metrics);

  // GET /v2/calendars/busy-times: the whole answer (JSON text), data = [periods] and, when some
  // sources could not be read, failedSources = [{source, credentialId, code, message}]. When every
  // source failed, the first failure.
  Result<std::string> Answer(int64_t user_id, const std::optional<std::string>& date_from,
                             const std::optional<std::string>& date_to,
                             const std::optional<std::string>& time_zone);
  // The user's busy periods in [from, to) for the slots of their event types, within
  // busy_timeout, through the cache (busy_cache.hpp): a source that fails stands in with what it
  // said last, if that is kept, and is named in `failures` either way. `zone` places the all-day
  // events of feeds.
  CollectedBusy SlotBusy(int64_t user_id, time::Millis from, time::Millis to, const time::Zone& zone);
  // Every source of the user (Google calendars to check, ICS feeds) asked for [from, to) within
  // `budget`; each failure is logged and counted.
  CollectedBusy CollectBusy(int64_t user_id, time::Millis from, time::Millis to, const time::Zone& zone,
                            std::chrono::milliseconds budget);
  // The memory the parsed feeds kept hold (HeldBytes), all users together.
  size_t ics_cache_bytes() { return feed_cache_.kept_bytes(); }

 private:
  // How a collection of busy times waits for the refreshes it needs.
  struct Waits {
    Deadline deadline;                            // waits end by then
    Deadline expand_by;                           // feeds are expanded only until then
    std::chrono::milliseconds max_wait{0};        // and at most this long after a refresh started
    std::chrono::seconds fresh{0};                // a feed parse this recent is used without asking
    std::chrono::milliseconds refresh_budget{0};  // a refresh started now has this long
    bool shared_google = false;                   // Google through a refresh (slots) rather than inline
    bool stand_ins = false;  // a feed's last parse may stand in while it fails or refreshes
  };

  // The Google calendars to check, as one free/busy query.
  void CollectGoogleBusy(int64_t user_id, time::Millis from, time::Millis to, Deadline deadline,
                         CollectedBusy& out);
  // Google through one refresh per user at a time (slots): waits as `w` says.
  void CollectSharedGoogleBusy(int64_t user_id, time::Millis from, time::Millis to, const Waits& w,
                               CollectedBusy& out);
  void CollectIcsBusy(int64_t user_id, time::Millis from, time::Millis to, const time::Zone& zone,
                      const Waits& w, CollectedBusy& out);
  CollectedBusy Collect(int64_t user_id, time::Millis from, time::Millis to, const time::Zone& zone,
                        const Waits& w);
  // One refresh of a feed (on the refresh pool): download, conditional when `validators` is set.
  IcsFeedCache::Download RefreshFeed(int64_t user_id, int64_t feed_id, const std::string& url,
                                     const std::optional<IcsFeedCache::Validators>& validators,
                                     Deadline deadline);
  void Failed(int64_t user_id, BusySourceError failure, CollectedBusy& out);

  Database& db_;
  Logger& logger_;
  const GoogleApi& google_;
  const CalendarOptions options_;
  GoogleCredentials& credentials_;
  CalendarList& calendars_;
  IcsFetcher& fetcher_;
  BusyCache& busy_cache_;
  MemoryTrimmer& trimmer_;
  CalendarMetrics& metrics_;
  std::atomic<int> slot_waiters_{0};
  // Google refreshes of slots: one per user at a time.
  struct GoogleFlight {
    Deadline started;
    time::Millis from = 0, to = 0;
    bool done = false;
    CollectedBusy busy;
  };
  std::mutex google_mu_;
  std::condition_variable google_cv_;
  std::map<int64_t, std::shared_ptr<GoogleFlight>> google_flights_;
  IcsFeedCache feed_cache_{
      refresh_pool_, options_.busy_cache_stale, options_.ics_memory_bytes, 10000,
      [this](size_t held) { metrics_.SetIcsHeldBytes(held); }};  // holds a reference only
  // Last: destroyed first, so that no refresh runs once the members it uses are gone.
  RefreshPool refresh_pool_{kRefreshThreads, kRefreshQueue};
};

}  // namespace rendezvous::calendar
