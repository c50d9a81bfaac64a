// The booked-times cache of the slots lists: an entry serves only its host's version and a window
// inside its own, the least recently used host goes first, and long lists are not kept.
#include "booked_times_cache.hpp"

#include <gtest/gtest.h>

namespace rendezvous::bookings {
namespace {

std::vector<BookedTime> Times(size_t n) {
  std::vector<BookedTime> out;
  for (size_t i = 0; i < n; ++i) out.push_back({static_cast<time::Millis>(i) * 1000, static_cast<time::Millis>(i) * 1000 + 500, 7});
  return out;
}

TEST(BookingsBookedTimesCache, ServesOnlyItsVersionAndWindow) {
  BookedTimesCache cache(4, 100);
  EXPECT_FALSE(cache.Find(1, 0, 0, 10).has_value());
  cache.Put(1, 5, 100, 200, Times(3));
  ASSERT_TRUE(cache.Find(1, 5, 100, 200).has_value());
  EXPECT_EQ(cache.Find(1, 5, 120, 180)->size(), 3u);  // a window inside
  EXPECT_FALSE(cache.Find(1, 6, 100, 200).has_value());  // the host changed since
  EXPECT_FALSE(cache.Find(1, 5, 99, 200).has_value());   // reaches before
  EXPECT_FALSE(cache.Find(1, 5, 100, 201).has_value());  // reaches after
  EXPECT_FALSE(cache.Find(2, 5, 100, 200).has_value());  // another host
  cache.Put(1, 6, 0, 300, Times(1));                      // replaces
  EXPECT_FALSE(cache.Find(1, 5, 100, 200).has_value());
  EXPECT_EQ(cache.Find(1, 6, 100, 200)->size(), 1u);
}

TEST(BookingsBookedTimesCache, EvictsTheLeastRecentlyUsedAndSkipsLongLists) {
  BookedTimesCache cache(2, 10);
  cache.Put(1, 1, 0, 10, Times(1));
  cache.Put(2, 1, 0, 10, Times(1));
  ASSERT_TRUE(cache.Find(1, 1, 0, 10).has_value());  // 1 is now the most recent
  cache.Put(3, 1, 0, 10, Times(1));                   // 2 goes
  EXPECT_TRUE(cache.Find(1, 1, 0, 10).has_value());
  EXPECT_FALSE(cache.Find(2, 1, 0, 10).has_value());
  EXPECT_TRUE(cache.Find(3, 1, 0, 10).has_value());
  cache.Put(4, 1, 0, 10, Times(11));  // too long to keep
  EXPECT_FALSE(cache.Find(4, 1, 0, 10).has_value());
  EXPECT_TRUE(cache.Find(3, 1, 0, 10).has_value());  // nothing was evicted for it
}

}  // namespace
}  // namespace rendezvous::bookings
