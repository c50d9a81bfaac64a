#include "ics_fetcher.hpp"

#include <algorithm>

namespace rendezvous::calendar {
namespace {

constexpr std::chrono::milliseconds kIcsTimeout{10000};
constexpr std::chrono::milliseconds kMinUsefulTimeout{500};

}  // namespace

IcsFetcher::IcsFetcher(bool allow_private_networks, MemoryTrimmer& trimmer, CalendarMetrics& metrics)
    : allow_private_networks_(allow_private_networks), trimmer_(trimmer), metrics_(metrics) {}

std::chrono::milliseconds IcsFetcher::TimeLeft(Deadline deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  if (left < kMinUsefulTimeout) return std::chrono::milliseconds(0);
  return std::min(left, kIcsTimeout);
}

IcsDownload IcsFetcher::FetchFeed(const std::string& url, std::chrono::milliseconds timeout,
                                  const IcsFeedCache::Validators* validators) {
  const Deadline deadline = std::chrono::steady_clock::now() + timeout;
  FetchRequest req;
  req.url = url;
  req.timeout = timeout;
  req.max_response_bytes = kMaxIcsBytes;
  req.block_private_networks = !allow_private_networks_;
  if (validators && !validators->etag.empty()) req.headers.push_back("If-None-Match: " + validators->etag);
  if (validators && !validators->last_modified.empty())
    req.headers.push_back("If-Modified-Since: " + validators->last_modified);
  IcsDownload download;
  download.fetch = Fetch(req);
  FetchResult& r = download.fetch;
  if (r.ok() && r.status == 304 && validators) {
    download.not_modified = true;
  } else if (r.ok() && r.status == 200) {
    // The deadline covers the parse too: it starts only once its bytes fit in the process-wide
    // parse budget, before the deadline.
    download.bytes = r.body.size();
    if (!parse_budget_.Acquire(download.bytes, deadline)) {
      download.parse_timed_out = true;
      download.why = "no time was left to read it";
    } else {
      download.calendar = ParseIcs(r.body, &download.why);
      std::string().swap(r.body);
      parse_budget_.Release(download.bytes);
      trimmer_.Note(download.bytes);
    }
  }
  metrics_.IcsFetched(!r.ok()                         ? OutcomeLabel(r.outcome)
                     : download.not_modified         ? "not_modified"
                     : r.status != 200               ? "http_error"
                     : download.parse_timed_out      ? "timeout"
                     : download.calendar.has_value() ? "ok"
                                                     : "not_calendar");
  return download;
}

}  // namespace rendezvous::calendar
