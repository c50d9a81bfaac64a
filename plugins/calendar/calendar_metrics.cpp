#include "calendar_metrics.hpp"

#include "booking_sync_plan.hpp"
#include "busy_times.hpp"
#include "google_api.hpp"
#include "ics_fetcher.hpp"
#include "sync_worker.hpp"

namespace rendezvous::calendar {

CalendarMetrics::CalendarMetrics(Metrics& metrics)
    : google_requests_(metrics.Counter(
          "calendar_google_requests_total",
          "Requests the calendar plugin made to Google, by endpoint and outcome.", {"endpoint", "outcome"})),
      ics_fetches_(
          metrics.Counter("calendar_ics_fetches_total", "ICS feed downloads by outcome.", {"outcome"})),
      busy_failures_(metrics.Counter("calendar_busy_source_failures_total",
                                     "Busy-time sources (a Google connection, an ICS feed) that could not be "
                                     "read, by source and error code.",
                                     {"source", "code"})),
      reconnects_(metrics
                      .Counter("calendar_reconnects_required_total",
                               "Google connections marked invalid (Google refused the refresh token); each "
                               "user must connect again.")
                      .With()),
      sync_jobs_(
          metrics.Counter("calendar_sync_jobs_total",
                          "Attempts of calendar sync jobs (a booking's Google event), by action and outcome.",
                          {"action", "outcome"})),
      sync_pending_(metrics.Gauge("calendar_sync_jobs_pending", "Calendar sync jobs not yet done.").With()),
      ics_held_(
          metrics
              .Gauge("calendar_ics_memory_bytes",
                     "Memory the parsed ICS feeds kept between requests hold, all users together (at most "
                     "plugins.calendar.ics_memory_bytes).")
              .With()) {
  for (const char* endpoint : kGoogleEndpoints) {
    for (const char* outcome : kGoogleOutcomes) google_requests_.With({endpoint, outcome});
  }
  for (const char* outcome : kIcsFetchOutcomes) ics_fetches_.With({outcome});
  for (const char* source : kBusySources) {
    for (const char* code : kBusyFailureCodes) busy_failures_.With({source, code});
  }
  for (SyncAction action : kSyncActions) {
    for (const char* outcome : kSyncOutcomes) sync_jobs_.With({SyncActionName(action), outcome});
  }
}

void CalendarMetrics::GoogleCalled(const std::string& endpoint, const std::string& outcome) {
  google_requests_.With({endpoint, outcome}).Increment();
}

void CalendarMetrics::IcsFetched(const std::string& outcome) {
  ics_fetches_.With({outcome}).Increment();
}

void CalendarMetrics::BusySourceFailed(const std::string& source, const std::string& code) {
  busy_failures_.With({source, code}).Increment();
}

void CalendarMetrics::CredentialInvalidated() {
  reconnects_.Increment();
}

void CalendarMetrics::SyncAttempted(const std::string& action, const std::string& outcome) {
  sync_jobs_.With({action, outcome}).Increment();
}

void CalendarMetrics::SetSyncPending(int64_t pending) {
  sync_pending_.Set(static_cast<double>(pending));
}

void CalendarMetrics::SetIcsHeldBytes(size_t bytes) {
  ics_held_.Set(static_cast<double>(bytes));
}

}  // namespace rendezvous::calendar
