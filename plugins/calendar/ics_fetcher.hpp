// Downloads and parses ICS feeds: bounded in size (kMaxIcsBytes) and time, conditional when the
// validators of the last download are known, refused on non-public addresses unless
// plugins.calendar.ics_allow_private_networks. Parses share one process-wide budget of feed text
// (kIcsParseBytesAtOnce); each download is counted in calendar_ics_fetches_total.
//
// Thread-safe. `trimmer` and `metrics` must outlive this object.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "calendar_metrics.hpp"
#include "calendar_options.hpp"
#include "http_fetch.hpp"
#include "ics.hpp"
#include "ics_feed_cache.hpp"
#include "refresh_pool.hpp"

namespace rendezvous::calendar {

// What became of an ICS download: "ok", "not_modified", "http_error", "not_calendar" (the answer
// is no calendar), "timeout" (the transfer or, waiting for the parse budget, the parse), or the
// transport's failure (OutcomeLabel).
constexpr const char* kIcsFetchOutcomes[] = {"ok",      "not_modified",   "http_error", "not_calendar",
                                             "timeout", "connect_failed", "blocked",    "too_large"};

// One ICS download: the transport result and, when it was a calendar, the parsed feed.
struct IcsDownload {
  FetchResult fetch;
  std::optional<IcsCalendar> calendar;
  std::string why;               // why the body is not a calendar
  bool not_modified = false;     // 304 to a conditional request
  bool parse_timed_out = false;  // no share of the parse budget before the deadline
  size_t bytes = 0;              // the feed text's size
};

class IcsFetcher {
 public:
  // `trimmer` is told of the feed text parsed (large work).
  IcsFetcher(bool allow_private_networks, MemoryTrimmer& trimmer, CalendarMetrics& metrics);

  // The time left for one download (at most the per-feed timeout; zero when the budget is spent).
  static std::chrono::milliseconds TimeLeft(Deadline deadline);
  // Downloads `url` within `timeout` (the parse included), conditionally when `validators` is set.
  IcsDownload FetchFeed(const std::string& url, std::chrono::milliseconds timeout,
                        const IcsFeedCache::Validators* validators = nullptr);

 private:
  const bool allow_private_networks_;
  MemoryTrimmer& trimmer_;
  CalendarMetrics& metrics_;
  ByteBudget parse_budget_{kIcsParseBytesAtOnce};
};

}  // namespace rendezvous::calendar
