#include "webhook_metrics.hpp"

#include "delivery_sender.hpp"
#include "webhook_fields.hpp"

namespace rendezvous::webhooks {

WebhookMetrics::WebhookMetrics(Metrics& metrics)
    : attempts_(metrics.Counter("webhooks_delivery_attempts_total",
                                "Webhook delivery attempts by trigger and outcome.", {"trigger", "outcome"})),
      attempt_duration_(metrics
                            .Histogram("webhooks_delivery_attempt_duration_seconds",
                                       "Duration of webhook delivery attempts.", {},
                                       {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30})
                            .With()),
      latency_(metrics
                   .Histogram("webhooks_delivery_latency_seconds",
                              "From a booking event's commit to its delivery's first success.", {},
                              {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600})
                   .With()),
      disabled_(
          metrics.Counter("webhooks_disabled_total", "Webhooks set inactive by the sender.", {"reason"})),
      due_(metrics
               .Gauge("webhooks_due_deliveries",
                      "Deliveries due and not yet finished (those being sent included).")
               .With()),
      oldest_due_age_(metrics
                          .Gauge("webhooks_oldest_due_age_seconds",
                                 "How long the longest-waiting due delivery has waited.")
                          .With()),
      created_(metrics.Counter("webhooks_deliveries_created_total", "Webhook deliveries created.").With()) {
  for (const std::string& trigger : AllTriggers()) {
    for (const char* outcome : kAttemptOutcomes) attempts_.With({trigger, outcome});
  }
  for (const char* reason : kDisableReasons) disabled_.With({reason});
}

void WebhookMetrics::Attempted(const std::string& trigger, const std::string& outcome, double seconds) {
  attempts_.With({trigger, outcome}).Increment();
  attempt_duration_.Observe(seconds);
}

void WebhookMetrics::Delivered(double seconds) {
  latency_.Observe(seconds);
}

void WebhookMetrics::Disabled(const std::string& reason) {
  disabled_.With({reason}).Increment();
}

void WebhookMetrics::SetBacklog(const Backlog& backlog) {
  due_.Set(static_cast<double>(backlog.due));
  oldest_due_age_.Set(backlog.oldest_age_seconds);
}

void WebhookMetrics::DeliveriesCreated(size_t count) {
  created_.Add(static_cast<double>(count));
}

}  // namespace rendezvous::webhooks
