#include <algorithm>

#include "calendar_service.hpp"

namespace rendezvous::calendar {
namespace {

constexpr std::chrono::milliseconds kIcsTimeout{10000};
constexpr std::chrono::milliseconds kMinUsefulTimeout{500};

}  // namespace

std::chrono::milliseconds CalendarService::IcsTimeLeft(Deadline deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  if (left < kMinUsefulTimeout) return std::chrono::milliseconds(0);
  return std::min(left, kIcsTimeout);
}

CalendarService::IcsDownload CalendarService::FetchIcs(const std::string& url,
                                                       std::chrono::milliseconds timeout) const {
  FetchRequest req;
  req.url = url;
  req.timeout = timeout;
  req.max_response_bytes = kMaxIcsBytes;
  req.block_private_networks = !options_.ics_allow_private_networks;
  IcsDownload download;
  download.fetch = Fetch(req);
  const FetchResult& r = download.fetch;
  if (r.ok() && r.status == 200) download.calendar = ParseIcs(r.body, &download.why);
  if (on_ics_fetch_) {
    on_ics_fetch_(!r.ok()                       ? OutcomeLabel(r.outcome)
                  : r.status != 200             ? "http_error"
                  : download.calendar.has_value() ? "ok"
                                                : "not_calendar");
  }
  return download;
}

}  // namespace rendezvous::calendar
