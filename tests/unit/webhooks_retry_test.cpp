// The retry policy: which outcomes retry, the schedule with jitter, Retry-After; and the metrics
// the sender reports attempts, deliveries and disabled webhooks to.
#include <gtest/gtest.h>

#include "metrics/metrics_registry.hpp"
#include "metrics/prometheus_metrics.hpp"
#include "retry_policy.hpp"
#include "storage_test_util.hpp"
#include "webhook_metrics.hpp"

namespace rendezvous::webhooks {
namespace {

TEST(WebhooksRetry, ClassifiesOutcomes) {
  EXPECT_EQ(Classify(200, false), Verdict::kSucceeded);
  EXPECT_EQ(Classify(204, false), Verdict::kSucceeded);
  EXPECT_EQ(Classify(500, false), Verdict::kRetry);
  EXPECT_EQ(Classify(503, false), Verdict::kRetry);
  EXPECT_EQ(Classify(429, false), Verdict::kRetry);
  EXPECT_EQ(Classify(410, false), Verdict::kGone);
  EXPECT_EQ(Classify(400, false), Verdict::kFailed);
  EXPECT_EQ(Classify(404, false), Verdict::kFailed);
  EXPECT_EQ(Classify(301, false), Verdict::kFailed);  // redirects are not followed
  EXPECT_EQ(Classify(0, true), Verdict::kRetry);      // timeout, refused connection
  EXPECT_EQ(Classify(0, false), Verdict::kFailed);
}

TEST(WebhooksRetry, ScheduleWithJitter) {
  const std::vector<long> schedule = {5, 300, 1800};
  EXPECT_EQ(NextDelayMillis(schedule, 1, 0.0), 4000);
  EXPECT_EQ(NextDelayMillis(schedule, 1, 0.5), 5000);
  EXPECT_EQ(NextDelayMillis(schedule, 1, 1.0), 6000);
  EXPECT_EQ(NextDelayMillis(schedule, 2, 0.5), 300000);
  EXPECT_EQ(NextDelayMillis(schedule, 3, 0.0), 1440000);
  EXPECT_EQ(NextDelayMillis(schedule, 4, 0.5), std::nullopt);  // spent: failed
  EXPECT_EQ(NextDelayMillis(schedule, 0, 0.5), std::nullopt);
}

// How long the outbox keeps an event for its deliveries: every retry at its longest, a receiver's
// Retry-After stretching the short delays up to the schedule's longest.
TEST(WebhooksRetry, TheLongestRetryWaitIsEveryDelayAtItsLongest) {
  EXPECT_EQ(LongestRetryWaitSeconds({5, 300, 1800}), 1800 + 1800 + 2160);
  EXPECT_EQ(LongestRetryWaitSeconds({5}), 6);
  EXPECT_EQ(LongestRetryWaitSeconds({}), 0);
}

TEST(WebhooksRetry, RetryAfterLongerThanTheDelayIsHonouredUpToTheLongestDelay) {
  const std::vector<long> schedule = {5, 300, 1800};
  EXPECT_EQ(NextDelayMillis(schedule, 1, 0.5, 60), 60000);
  EXPECT_EQ(NextDelayMillis(schedule, 1, 0.5, 2), 5000);  // shorter: the schedule wins
  EXPECT_EQ(NextDelayMillis(schedule, 1, 0.5, 999999), 1800000);
}

TEST(WebhooksRetry, ParsesRetryAfter) {
  EXPECT_EQ(ParseRetryAfter("120", 0), 120);
  EXPECT_EQ(ParseRetryAfter(" 7 ", 0), 7);
  // 784111777 is Sun, 06 Nov 1994 08:49:37 GMT.
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 - 30), 30);
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 + 30), 0);
  EXPECT_EQ(ParseRetryAfter("soon", 0), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("", 0), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("-5", 0), std::nullopt);
}

TEST(WebhooksMetrics, EveryTriggerOutcomeAndReasonIsExportedFromTheStart) {
  core::MetricsRegistry registry;
  core::PrometheusMetrics facade(registry);
  WebhookMetrics metrics(facade);
  auto value = [&](const std::string& name, const std::map<std::string, std::string>& labels = {}) {
    return testing::MetricValue(registry, name, labels);
  };
  EXPECT_EQ(value("webhooks_delivery_attempts_total", {{"trigger", "BOOKING_CREATED"}, {"outcome", "gone"}}), 0);
  EXPECT_EQ(value("webhooks_delivery_attempts_total", {{"trigger", "BOOKING_REOPENED"}, {"outcome", "retry"}}), 0);
  EXPECT_EQ(value("webhooks_disabled_total", {{"reason", "failing"}}), 0);
  EXPECT_EQ(value("webhooks_deliveries_created_total"), 0);

  metrics.Attempted("BOOKING_CREATED", "succeeded", 0.2);
  metrics.Attempted("BOOKING_CREATED", "succeeded", 0.3);
  metrics.Delivered(1.5);
  metrics.Disabled("gone");
  metrics.SetBacklog(Backlog{4, 12.5});
  metrics.DeliveriesCreated(3);
  EXPECT_EQ(value("webhooks_delivery_attempts_total", {{"trigger", "BOOKING_CREATED"}, {"outcome", "succeeded"}}), 2);
  EXPECT_EQ(value("webhooks_delivery_attempt_duration_seconds"), 2);
  EXPECT_EQ(value("webhooks_delivery_latency_seconds"), 1);
  EXPECT_EQ(value("webhooks_disabled_total", {{"reason", "gone"}}), 1);
  EXPECT_EQ(value("webhooks_due_deliveries"), 4);
  EXPECT_EQ(value("webhooks_oldest_due_age_seconds"), 12.5);
  EXPECT_EQ(value("webhooks_deliveries_created_total"), 3);
}

}  // namespace
}  // namespace rendezvous::webhooks
