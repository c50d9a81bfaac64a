// rendezvous/bounded_cache.hpp beyond what the identity caches use (identity_cache_test): the byte
// bound, entries that never expire, and many threads at once.
#include "rendezvous/bounded_cache.hpp"

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace rendezvous {
namespace {

using namespace std::chrono_literals;

size_t WeighText(const int&, const std::string& value) {
  return value.size();
}

TEST(BoundedCache, ByteBoundEvictsLeastRecentlyUsed) {
  BoundedCache<int, std::string, 1> cache(100, 60000ms, &std::chrono::steady_clock::now, 10, WeighText);
  cache.Put(1, "aaaa");
  cache.Put(2, "bbbb");
  EXPECT_EQ(cache.Bytes(), 8u);
  ASSERT_TRUE(cache.Get(1));  // 1 is now the most recently used
  cache.Put(3, "cccc");       // 12 > 10: 2 goes
  EXPECT_TRUE(cache.Get(1));
  EXPECT_FALSE(cache.Get(2));
  EXPECT_TRUE(cache.Get(3));
  EXPECT_EQ(cache.Bytes(), 8u);
  cache.Put(1, "a");  // a replacement is weighed again
  EXPECT_EQ(cache.Bytes(), 5u);
  cache.Erase(3);
  EXPECT_EQ(cache.Bytes(), 1u);
  cache.EraseIf([](const int&, const std::string&) { return true; });
  EXPECT_EQ(cache.Bytes(), 0u);
  EXPECT_EQ(cache.Size(), 0u);
}

TEST(BoundedCache, EntryHeavierThanTheBoundIsNotKept) {
  BoundedCache<int, std::string, 1> cache(100, 60000ms, &std::chrono::steady_clock::now, 10, WeighText);
  cache.Put(1, "small");
  cache.Put(2, std::string(11, 'x'));
  EXPECT_FALSE(cache.Get(2));
  EXPECT_TRUE(cache.Get(1));           // nothing else was evicted for it
  cache.Put(1, std::string(11, 'x'));  // nor kept as a replacement: the old value goes too
  EXPECT_FALSE(cache.Get(1));
  EXPECT_EQ(cache.Bytes(), 0u);
}

TEST(BoundedCache, NoExpiryKeepsEntriesUntilEvicted) {
  std::chrono::steady_clock::time_point now{std::chrono::hours(1)};
  BoundedCache<int, int, 1> cache(2, BoundedCache<int, int, 1>::kNoExpiry, [&] { return now; });
  cache.Put(1, 10);
  now += std::chrono::hours(24 * 365 * 100);
  EXPECT_EQ(cache.Get(1), 10);
  cache.Put(2, 20);
  cache.Put(3, 30);  // the entry bound still holds
  EXPECT_FALSE(cache.Get(1));
  EXPECT_EQ(cache.Size(), 2u);
}

TEST(BoundedCache, StaysWithinBothBoundsUnderConcurrentUse) {
  BoundedCache<int, std::string> cache(64, 60000ms, &std::chrono::steady_clock::now, 800,
                                       WeighText);  // 8 shards: 8 entries and 100 bytes each
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, t] {
      for (int i = 0; i < 2000; ++i) {
        const int key = t * 10000 + i;
        cache.Put(key, std::string(static_cast<size_t>(1 + i % 30), 'v'));
        cache.Get(key - 1);
        if (i % 7 == 0) cache.Erase(key - 3);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_LE(cache.Size(), 64u);
  EXPECT_LE(cache.Bytes(), 800u);
  EXPECT_GT(cache.Size(), 0u);
}

}  // namespace
}  // namespace rendezvous
