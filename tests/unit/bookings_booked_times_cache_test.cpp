// The booked-times cache of the slots lists: an entry serves only its host's version and ranges it
// holds whole, joins ranges read at one version, follows this instance's own changes to the next
// version, the least recently used host goes first, and long lists are not kept; several disjoint
// windows of a host are kept side by side, a joined range past the host's budget is cut back around
// the latest read, and concurrent reads of one range run once.
#include <atomic>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "booked_times_cache.hpp"
#include "eventually.hpp"

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

TEST(BookingsBookedTimesCache, KeepsSeveralWindowsOfAHostInRotation) {
  // With the default bounds: 8 windows of 5,000 times each (40,000 in all), asked in turn with a
  // margin on either side (as the slots lists ask), are kept together, so after one round every
  // request is served from memory.
  BookedTimesCache cache;
  constexpr time::Millis kWindow = 5000 * 1000;
  const std::vector<BookedTime> all = Times(40000);
  int loads = 0;
  for (int round = 0; round < 3; ++round) {
    for (int w = 0; w < 8; ++w) {
      const time::Millis lo = w * kWindow - 150000;
      const time::Millis hi = (w + 1) * kWindow + 100000;
      std::vector<BookedTime> got = cache.Get(1, 5, lo, hi, [&] {
        ++loads;
        std::vector<BookedTime> out;
        for (const BookedTime& t : all) {
          if (t.start >= lo && t.start < hi) out.push_back(t);
        }
        return out;
      });
      const time::Millis first = std::max<time::Millis>(lo, 0);
      const time::Millis last = std::min<time::Millis>(hi, 40000 * 1000);
      EXPECT_EQ(got.size(), static_cast<size_t>((last - first + 999) / 1000)) << "window " << w;
    }
  }
  EXPECT_EQ(loads, 8);
}

TEST(BookingsBookedTimesCache, CutsAJoinedRangeBackAroundTheLatestRead) {
  BookedTimesCache cache(4, 10);
  cache.Put(1, 5, 0, 8000, Times(8, 0, 1));          // starts 0 .. 7000
  cache.Put(1, 5, 8000, 14000, Times(6, 8000, 20));  // touches: 14 joined, past the budget of 10
  // The new read whole, and 4 of the earlier ones nearest to it: [4000, 14000).
  EXPECT_EQ(Ids(cache.Find(1, 5, 8000, 14000)), (std::vector<int64_t>{20, 21, 22, 23, 24, 25}));
  EXPECT_EQ(Ids(cache.Find(1, 5, 3001, 8000)), (std::vector<int64_t>{5, 6, 7, 8}));
  EXPECT_FALSE(cache.Find(1, 5, 3000, 8000).has_value());  // the start at 3000 was cut off
  // Disjoint ranges beyond kMaxRanges are not kept, even empty ones.
  BookedTimesCache many(4, 100);
  for (size_t i = 0; i < BookedTimesCache::kMaxRanges + 4; ++i) {
    const time::Millis lo = static_cast<time::Millis>(i) * 10000;
    many.Put(1, 5, lo, lo + 100, {});
  }
  size_t kept = 0;
  for (size_t i = 0; i < BookedTimesCache::kMaxRanges + 4; ++i) {
    const time::Millis lo = static_cast<time::Millis>(i) * 10000;
    if (many.Find(1, 5, lo, lo + 100)) ++kept;
  }
  EXPECT_EQ(kept, BookedTimesCache::kMaxRanges);
}

TEST(BookingsBookedTimesCache, ConcurrentReadsOfOneRangeRunOnce) {
  BookedTimesCache cache(4, 100);
  std::atomic<int> loads{0};
  std::vector<std::thread> threads;
  std::vector<size_t> sizes(6);
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&, i] {
      // The first asks for the whole range, the others for parts of it.
      const time::Millis lo = i == 0 ? 0 : 1000, hi = i == 0 ? 10000 : 5000;
      sizes[static_cast<size_t>(i)] = cache.Get(1, 5, lo, hi, [&] {
        ++loads;
        // The read lasts until the 5 others wait for it.
        EXPECT_TRUE(testing::Eventually("the 5 other readers waiting",
                                        {std::chrono::seconds(5), std::chrono::milliseconds(1)},
                                        [&] { return cache.waiting() >= 5; }));
        std::vector<BookedTime> out = Times(10);
        std::erase_if(out, [&](const BookedTime& t) { return t.start < lo || t.start >= hi; });
        return out;
      }).size();
    });
    if (i == 0) {
      // The first read is under way before the others ask.
      EXPECT_TRUE(testing::Eventually("the first read under way",
                                      {std::chrono::seconds(5), std::chrono::milliseconds(1)},
                                      [&] { return loads > 0; }));
    }
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(loads, 1);
  EXPECT_EQ(sizes[0], 10u);
  for (int i = 1; i < 6; ++i) EXPECT_EQ(sizes[static_cast<size_t>(i)], 4u) << i;
  // A read that fails passes its error on, and the next request reads for itself.
  EXPECT_THROW(cache.Get(2, 1, 0, 10, []() -> std::vector<BookedTime> { throw std::runtime_error("down"); }),
               std::runtime_error);
  EXPECT_EQ(cache.Get(2, 1, 0, 10, [] { return Times(1); }).size(), 1u);
  auto not_asked = []() -> std::vector<BookedTime> { throw std::runtime_error("not asked"); };
  EXPECT_EQ(cache.Get(2, 1, 0, 10, not_asked).size(), 1u);
}

}  // namespace
}  // namespace rendezvous::bookings
