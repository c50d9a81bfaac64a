// The webhooks plugin's metrics, on /metrics from start-up (every label value is known in advance
// and exported at zero):
//
//   webhooks_delivery_attempts_total{trigger, outcome}   finished delivery attempts; outcome
//       succeeded, retry, failed or gone (410)
//   webhooks_delivery_attempt_duration_seconds           the duration of each attempt
//   webhooks_delivery_latency_seconds                    from a booking event's commit to its
//       delivery's first success
//   webhooks_disabled_total{reason}                      webhooks the sender set inactive: gone
//       (the receiver answered 410) or failing (every delivery failed for disable_after)
//   webhooks_due_deliveries, webhooks_oldest_due_age_seconds   the backlog, about once a second
//   webhooks_deliveries_created_total                    deliveries the outbox consumer queued
//
// Thread-safe. `metrics` must outlive this object.
#pragma once

#include <cstddef>
#include <string>

#include "delivery_queue.hpp"
#include "rendezvous/metrics.hpp"

namespace rendezvous::webhooks {

class WebhookMetrics {
 public:
  explicit WebhookMetrics(Metrics& metrics);

  // One finished attempt of a delivery of `trigger`.
  void Attempted(const std::string& trigger, const std::string& outcome, double seconds);
  // A delivery's first success, `seconds` after its booking event's commit.
  void Delivered(double seconds);
  // A webhook set inactive; `reason` is "gone" or "failing".
  void Disabled(const std::string& reason);
  void SetBacklog(const Backlog& backlog);
  void DeliveriesCreated(size_t count);

 private:
  MetricFamily& attempts_;
  Metric& attempt_duration_;
  Metric& latency_;
  MetricFamily& disabled_;
  Metric& due_;
  Metric& oldest_due_age_;
  Metric& created_;
};

}  // namespace rendezvous::webhooks
