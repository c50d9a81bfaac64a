// Token buckets: burst, refill, the header figures, and the bound on memory under key rotation.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "http/rate_limiter.hpp"

namespace rendezvous::core {
namespace {

using namespace std::chrono_literals;
using Clock = RateLimiter::Clock;

TEST(HttpRateLimiterTest, AllowsTheBurstThenRefusesWithRetryAfter) {
  RateLimiter limiter(120, 5);  // 2 tokens a second, 5 at most
  const Clock::time_point t0 = Clock::now();
  for (int i = 0; i < 5; ++i) {
    RateLimiter::Decision d = limiter.Take("a", t0);
    ASSERT_TRUE(d.allowed) << i;
    EXPECT_EQ(d.limit, 5);
    EXPECT_EQ(d.remaining, 4 - i);
    EXPECT_EQ(d.retry_after_seconds, 0);
  }
  RateLimiter::Decision refused = limiter.Take("a", t0);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.remaining, 0);
  EXPECT_EQ(refused.retry_after_seconds, 1);  // half a second, rounded up to whole seconds
  EXPECT_EQ(refused.reset_seconds, 3);        // 5 tokens at 2 a second
  // Another key has its own bucket.
  EXPECT_TRUE(limiter.Take("b", t0).allowed);
}

TEST(HttpRateLimiterTest, RefillsAtTheRateAndNeverBeyondTheBurst) {
  RateLimiter limiter(60, 3);  // one token a second
  const Clock::time_point t0 = Clock::now();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(limiter.Take("k", t0).allowed);
  EXPECT_FALSE(limiter.Take("k", t0 + 500ms).allowed);
  RateLimiter::Decision d = limiter.Take("k", t0 + 1s);
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.remaining, 0);
  EXPECT_EQ(d.reset_seconds, 3);
  EXPECT_FALSE(limiter.Take("k", t0 + 1s).allowed);
  // A long pause refills to the burst, not past it.
  d = limiter.Take("k", t0 + 1h);
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.remaining, 2);
  EXPECT_EQ(d.reset_seconds, 1);
  // Time going backwards refills nothing.
  EXPECT_TRUE(limiter.Take("k", t0).allowed);
  EXPECT_EQ(limiter.Take("k", t0).remaining, 0);
}

TEST(HttpRateLimiterTest, RetryAfterIsWholeSecondsAndAtLeastOne) {
  RateLimiter slow(1, 1);  // one a minute
  const Clock::time_point t0 = Clock::now();
  ASSERT_TRUE(slow.Take("k", t0).allowed);
  RateLimiter::Decision d = slow.Take("k", t0 + 15s);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.retry_after_seconds, 45);
  EXPECT_EQ(d.reset_seconds, 45);

  RateLimiter fast(6000, 1);  // a token every 10 ms
  ASSERT_TRUE(fast.Take("k", t0).allowed);
  d = fast.Take("k", t0);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.retry_after_seconds, 1);
}

TEST(HttpRateLimiterTest, RotatingKeysStayWithinTheBoundAndKeepDrainedBuckets) {
  constexpr size_t kMax = 256;
  RateLimiter limiter(60, 10, kMax);
  const Clock::time_point t0 = Clock::now();
  // A drained bucket: the one an attacker would like forgotten.
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(limiter.Take("victim", t0).allowed);
  ASSERT_FALSE(limiter.Take("victim", t0).allowed);
  // Many new keys at the same instant, each one token down: fuller than the drained one.
  for (int i = 0; i < 20000; ++i) {
    limiter.Take("rot" + std::to_string(i), t0);
    ASSERT_LE(limiter.size(), kMax) << i;
  }
  EXPECT_FALSE(limiter.Take("victim", t0).allowed);
  // An hour later every bucket has refilled: new keys replace them, still within the bound.
  for (int i = 0; i < 2000; ++i) ASSERT_TRUE(limiter.Take("late" + std::to_string(i), t0 + 1h).allowed);
  EXPECT_LE(limiter.size(), kMax);
  EXPECT_TRUE(limiter.Take("victim", t0 + 1h).allowed);
}

TEST(HttpRateLimiterTest, ConcurrentTakesNeverGrantMoreThanTheBurst) {
  RateLimiter limiter(1, 1000);  // refill negligible over the test
  const Clock::time_point t0 = Clock::now();
  std::vector<std::thread> threads;
  std::atomic<int> granted{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i)
        if (limiter.Take("shared", t0).allowed) ++granted;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(granted.load(), 1000);
}

TEST(HttpRateLimiterTest, AddressKeysGroupAnIpv6SubscriberByItsSlash64) {
  EXPECT_EQ(AddressKey("2001:db8:1:2::1"), AddressKey("2001:db8:1:2:ffff::9"));
  EXPECT_NE(AddressKey("2001:db8:1:2::1"), AddressKey("2001:db8:1:3::1"));
  EXPECT_NE(AddressKey("192.0.2.1"), AddressKey("192.0.2.2"));
  EXPECT_EQ(AddressKey("::ffff:192.0.2.1"), AddressKey("192.0.2.1"));
  EXPECT_NE(AddressKey("not an address"), AddressKey("192.0.2.1"));
}

TEST(HttpRateLimiterTest, RefusesANonsenseLimit) {
  EXPECT_THROW(RateLimiter(0, 1), std::invalid_argument);
  EXPECT_THROW(RateLimiter(1, 0), std::invalid_argument);
}

}  // namespace
}  // namespace rendezvous::core
