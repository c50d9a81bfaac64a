// The calendar plugin's metrics, on /metrics from start-up (every label value is known in advance
// and exported at zero):
//
//   calendar_google_requests_total{endpoint, outcome}    every request made to Google (GoogleApi)
//   calendar_ics_fetches_total{outcome}                  ICS feed downloads (IcsFetcher)
//   calendar_busy_source_failures_total{source, code}    busy-time sources that could not be read
//       (BusyTimes): source google_calendar or ics_feed, code as in failedSources
//   calendar_reconnects_required_total                   Google credentials marked invalid
//       (GoogleCredentials): their users must connect again
//   calendar_sync_jobs_total{action, outcome}            attempts of sync jobs (SyncWorker)
//   calendar_sync_jobs_pending                           sync jobs not yet done
//   calendar_ics_memory_bytes                            memory the parsed ICS feeds kept hold
//       (IcsFeedCache), at most plugins.calendar.ics_memory_bytes
//
// Thread-safe. `metrics` must outlive this object.
#pragma once

#include <cstdint>
#include <string>

#include "rendezvous/metrics.hpp"

namespace rendezvous::calendar {

class CalendarMetrics {
 public:
  explicit CalendarMetrics(Metrics& metrics);

  void GoogleCalled(const std::string& endpoint, const std::string& outcome);
  void IcsFetched(const std::string& outcome);
  void BusySourceFailed(const std::string& source, const std::string& code);
  void CredentialInvalidated();
  void SyncAttempted(const std::string& action, const std::string& outcome);
  void SetSyncPending(int64_t pending);
  void SetIcsHeldBytes(size_t bytes);

 private:
  MetricFamily& google_requests_;
  MetricFamily& ics_fetches_;
  MetricFamily& busy_failures_;
  Metric& reconnects_;
  MetricFamily& sync_jobs_;
  Metric& sync_pending_;
  Metric& ics_held_;
};

}  // namespace rendezvous::calendar
