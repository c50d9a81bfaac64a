#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "identity/login_throttle.hpp"
#include "rendezvous/bounded_cache.hpp"

namespace rendezvous::core {
namespace {

using namespace std::chrono_literals;

struct FakeClock {
  std::chrono::steady_clock::time_point now{std::chrono::hours(1)};
  auto Fn() {
    return [this] { return now; };
  }
};

TEST(IdentityTtlCache, EntriesExpireAfterTtl) {
  FakeClock clock;
  BoundedCache<std::string, int> cache(100, 5000ms, clock.Fn());
  cache.Put("a", 1);
  EXPECT_EQ(cache.Get("a"), 1);
  clock.now += 4999ms;
  EXPECT_EQ(cache.Get("a"), 1);
  clock.now += 1ms;
  EXPECT_FALSE(cache.Get("a").has_value());
  EXPECT_EQ(cache.Size(), 0u);
}

TEST(IdentityTtlCache, PutRefreshesValueAndExpiry) {
  FakeClock clock;
  BoundedCache<std::string, int> cache(100, 1000ms, clock.Fn());
  cache.Put("a", 1);
  clock.now += 900ms;
  cache.Put("a", 2);
  clock.now += 900ms;
  EXPECT_EQ(cache.Get("a"), 2);
}

TEST(IdentityTtlCache, BoundedWithLeastRecentlyUsedEviction) {
  FakeClock clock;
  BoundedCache<int, int, 1> cache(3, 60000ms, clock.Fn());
  cache.Put(1, 1);
  cache.Put(2, 2);
  cache.Put(3, 3);
  EXPECT_TRUE(cache.Get(1));  // 1 is now the most recently used
  cache.Put(4, 4);            // evicts 2
  EXPECT_EQ(cache.Size(), 3u);
  EXPECT_TRUE(cache.Get(1));
  EXPECT_FALSE(cache.Get(2));
  EXPECT_TRUE(cache.Get(3));
  EXPECT_TRUE(cache.Get(4));
}

TEST(IdentityTtlCache, ShardedCapacityStaysBounded) {
  BoundedCache<int, int> cache(64, 60000ms);
  for (int i = 0; i < 10000; ++i) cache.Put(i, i);
  EXPECT_LE(cache.Size(), 64u);
}

TEST(IdentityTtlCache, EraseAndEraseIf) {
  BoundedCache<int, int> cache(100, 60000ms);
  for (int i = 0; i < 10; ++i) cache.Put(i, i * 10);
  cache.Erase(3);
  EXPECT_FALSE(cache.Get(3));
  cache.EraseIf([](int, int v) { return v >= 50; });
  EXPECT_EQ(cache.Size(), 4u);
  EXPECT_TRUE(cache.Get(4));
  EXPECT_FALSE(cache.Get(5));
}

TEST(IdentityTtlCache, ZeroTtlDisablesCaching) {
  BoundedCache<int, int> cache(100, 0ms);
  EXPECT_FALSE(cache.enabled());
  cache.Put(1, 1);
  EXPECT_FALSE(cache.Get(1));
}

TEST(IdentityLoginThrottle, BlocksAfterMaxFailuresWithinWindow) {
  FakeClock clock;
  LoginThrottle throttle(3, 900s, 1000, clock.Fn());
  std::string key = LoginThrottle::Key("a@example.com", "10.0.0.1");
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(throttle.Allowed(key)) << i;
    throttle.RecordFailure(key);
  }
  EXPECT_FALSE(throttle.Allowed(key));
  // Other email or other address are separate.
  EXPECT_TRUE(throttle.Allowed(LoginThrottle::Key("a@example.com", "10.0.0.2")));
  EXPECT_TRUE(throttle.Allowed(LoginThrottle::Key("b@example.com", "10.0.0.1")));
  clock.now += 899s;
  EXPECT_FALSE(throttle.Allowed(key));
  clock.now += 1s;
  EXPECT_TRUE(throttle.Allowed(key));
}

TEST(IdentityLoginThrottle, SuccessResets) {
  FakeClock clock;
  LoginThrottle throttle(2, 900s, 1000, clock.Fn());
  throttle.RecordFailure("k");
  throttle.RecordFailure("k");
  EXPECT_FALSE(throttle.Allowed("k"));
  throttle.Reset("k");
  EXPECT_TRUE(throttle.Allowed("k"));
}

TEST(IdentityLoginThrottle, StaysBoundedUnderASprayOfKeys) {
  FakeClock clock;
  LoginThrottle throttle(1, 900s, 100, clock.Fn());
  for (int i = 0; i < 1000; ++i) {
    clock.now += 1ms;
    throttle.RecordFailure("k" + std::to_string(i));
  }
  // The newest keys are still remembered; the oldest were forgotten to make room.
  EXPECT_FALSE(throttle.Allowed("k999"));
  EXPECT_TRUE(throttle.Allowed("k0"));
}

}  // namespace
}  // namespace rendezvous::core
