// The booked-times cache of the slots lists: an entry serves only its host's version and ranges it
// holds whole, joins ranges read at one version, follows this instance's own changes to the next
// version, the least recently used host goes first, and long lists are not kept.
#include "booked_times_cache.hpp"

#include <gtest/gtest.h>

namespace rendezvous::bookings {
namespace {

// `n` times starting at `first`, `first + 1000`, ..., ids from `first_id`.
std::vector<BookedTime> Times(size_t n, time::Millis first = 0, int64_t first_id = 1) {
  std::vector<BookedTime> out;
  for (size_t i = 0; i < n; ++i) {
    const time::Millis s = first + static_cast<time::Millis>(i) * 1000;
    out.push_back({s, s + 500, 7, first_id + static_cast<int64_t>(i)});
  }
  return out;
}

std::vector<int64_t> Ids(const std::optional<std::vector<BookedTime>>& times) {
  std::vector<int64_t> out;
  if (times) {
    for (const BookedTime& t : *times) out.push_back(t.id);
  }
  return out;
}

TEST(BookingsBookedTimesCache, ServesOnlyItsVersionAndRange) {
  BookedTimesCache cache(4, 100);
  EXPECT_FALSE(cache.Find(1, 0, 0, 10).has_value());
  cache.Put(1, 5, 100, 3000, Times(3, 100));  // starts 100, 1100, 2100
  ASSERT_TRUE(cache.Find(1, 5, 100, 3000).has_value());
  EXPECT_EQ(cache.Find(1, 5, 120, 1200)->size(), 1u);  // a range inside: only the times starting in it
  EXPECT_EQ(cache.Find(1, 5, 100, 101)->size(), 1u);
  EXPECT_FALSE(cache.Find(1, 6, 100, 3000).has_value());  // the host changed since
  EXPECT_FALSE(cache.Find(1, 5, 99, 3000).has_value());   // reaches before
  EXPECT_FALSE(cache.Find(1, 5, 100, 3001).has_value());  // reaches after
  EXPECT_FALSE(cache.Find(2, 5, 100, 3000).has_value());  // another host
  cache.Put(1, 6, 0, 300, Times(1));                      // a newer version replaces
  EXPECT_FALSE(cache.Find(1, 5, 100, 3000).has_value());
  EXPECT_EQ(cache.Find(1, 6, 0, 300)->size(), 1u);
  cache.Put(1, 5, 0, 300, Times(3));  // an older read is dropped
  EXPECT_EQ(cache.Find(1, 6, 0, 300)->size(), 1u);
}

TEST(BookingsBookedTimesCache, RangesOfOneVersionJoin) {
  BookedTimesCache cache(4, 100);
  cache.Put(1, 5, 0, 10000, Times(10, 0, 1));          // starts 0 .. 9000
  cache.Put(1, 5, 8000, 20000, Times(12, 8000, 100));  // overlaps: its read wins there
  EXPECT_EQ(Ids(cache.Find(1, 5, 0, 20000)).size(), 20u);
  EXPECT_EQ(Ids(cache.Find(1, 5, 7000, 9000)), (std::vector<int64_t>{8, 100}));
  cache.Put(1, 5, 50000, 60000, Times(2, 50000, 200));  // apart: kept beside
  EXPECT_EQ(Ids(cache.Find(1, 5, 50000, 60000)), (std::vector<int64_t>{200, 201}));
  EXPECT_TRUE(cache.Find(1, 5, 0, 20000).has_value());
  EXPECT_FALSE(cache.Find(1, 5, 0, 60000).has_value());  // the gap was never read
  // Past the host's budget the farthest ranges go first.
  BookedTimesCache small(4, 10);
  small.Put(1, 5, 0, 5000, Times(5, 0, 1));
  small.Put(1, 5, 100000, 105000, Times(5, 100000, 10));
  small.Put(1, 5, 20000, 25000, Times(5, 20000, 20));
  EXPECT_TRUE(small.Find(1, 5, 20000, 25000).has_value());
  EXPECT_TRUE(small.Find(1, 5, 0, 5000).has_value());
  EXPECT_FALSE(small.Find(1, 5, 100000, 105000).has_value());
}

TEST(BookingsBookedTimesCache, OwnChangesMoveTheEntryToTheNextVersion) {
  BookedTimesCache cache(4, 100);
  cache.Put(1, 5, 0, 10000, Times(3));  // ids 1, 2, 3 at 0, 1000, 2000
  cache.Apply(1, 6, BookedTime{5000, 5500, 7, 9}, 2);
  EXPECT_FALSE(cache.Find(1, 5, 0, 10000).has_value());
  EXPECT_EQ(Ids(cache.Find(1, 6, 0, 10000)), (std::vector<int64_t>{1, 3, 9}));
  cache.Apply(1, 7, BookedTime{5000, 5500, 7, 9}, 0);  // already there (the read saw it): once
  EXPECT_EQ(Ids(cache.Find(1, 7, 0, 10000)), (std::vector<int64_t>{1, 3, 9}));
  cache.Apply(1, 8, BookedTime{50000, 50500, 7, 10}, 0);  // outside every range: not kept
  EXPECT_EQ(Ids(cache.Find(1, 8, 0, 10000)), (std::vector<int64_t>{1, 3, 9}));
  cache.Apply(1, 10, std::nullopt, 1);  // version 9 came from elsewhere: the entry stays behind
  EXPECT_FALSE(cache.Find(1, 10, 0, 10000).has_value());
  EXPECT_FALSE(cache.Find(1, 9, 0, 10000).has_value());
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
  // The total over all hosts is bounded too.
  BookedTimesCache total(10, 10, 15);
  total.Put(1, 1, 0, 10000, Times(8));
  total.Put(2, 1, 0, 10000, Times(8));
  EXPECT_FALSE(total.Find(1, 1, 0, 10000).has_value());
  EXPECT_TRUE(total.Find(2, 1, 0, 10000).has_value());
}

}  // namespace
}  // namespace rendezvous::bookings
