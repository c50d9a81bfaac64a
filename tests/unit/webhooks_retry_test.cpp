// The retry policy: which outcomes retry, the schedule with jitter, Retry-After.
#include <gtest/gtest.h>

#include "retry_policy.hpp"

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

}  // namespace
}  // namespace rendezvous::webhooks
