// The busy-times cache in front of a host's calendars: fresh answers for windows it holds, the
// last answer of a source standing in while it fails, forgetting, and its bounds.
#include <gtest/gtest.h>

#include "busy_cache.hpp"

namespace rendezvous::calendar {
namespace {

using std::chrono::seconds;
constexpr time::Millis kHour = 3600 * 1000;

CollectedBusy Answer(std::vector<BusyPeriod> periods, std::vector<BusySourceError> failures = {}) {
  CollectedBusy out;
  out.periods = std::move(periods);
  out.failures = std::move(failures);
  out.sources = 2;
  return out;
}

BusySourceError FeedFailed(int64_t id) {
  return {"ics_feed", id, Status(ErrorCode::kUpstreamFailed, "the feed could not be read")};
}

class BusyCacheTest : public ::testing::Test {
 protected:
  BusyCache::Clock::time_point t0_ = BusyCache::Clock::now();
  const BusyPeriod google_{2 * kHour, 3 * kHour, "google_calendar", 1, "ada@example.com"};
  const BusyPeriod feed_{5 * kHour, 6 * kHour, "ics_feed", 7, ""};
  const BusyPeriod late_feed_{20 * kHour, 21 * kHour, "ics_feed", 7, ""};
};

TEST_F(BusyCacheTest, AnswersWindowsItHoldsWhileFresh) {
  BusyCache cache(seconds(60), seconds(3600));
  cache.Put(1, 0, 24 * kHour, Answer({google_, feed_, late_feed_}), t0_);
  auto same = cache.Fresh(1, 0, 24 * kHour, t0_ + seconds(59));
  ASSERT_TRUE(same);
  EXPECT_EQ(same->periods.size(), 3u);
  EXPECT_EQ(same->sources, 2u);
  auto narrower = cache.Fresh(1, 4 * kHour, 12 * kHour, t0_ + seconds(1));
  ASSERT_TRUE(narrower);
  ASSERT_EQ(narrower->periods.size(), 1u);  // cut to what overlaps the window
  EXPECT_EQ(narrower->periods[0].start, feed_.start);
  EXPECT_FALSE(cache.Fresh(1, 0, 25 * kHour, t0_ + seconds(1)));  // wider
  EXPECT_FALSE(cache.Fresh(2, 0, 24 * kHour, t0_ + seconds(1)));  // another user
  EXPECT_FALSE(cache.Fresh(1, 0, 24 * kHour, t0_ + seconds(60)));  // no longer fresh
}

TEST_F(BusyCacheTest, AnAnswerWithAFailureIsFreshBriefly) {
  BusyCache cache(seconds(60), seconds(3600));
  cache.Put(1, 0, 24 * kHour, Answer({google_}, {FeedFailed(7)}), t0_);
  EXPECT_TRUE(cache.Fresh(1, 0, 24 * kHour, t0_ + seconds(9)));
  EXPECT_FALSE(cache.Fresh(1, 0, 24 * kHour, t0_ + seconds(10)));
}

TEST_F(BusyCacheTest, TheLastAnswerOfAFailingSourceStandsInUntilStale) {
  BusyCache cache(seconds(0), seconds(3600));
  cache.Put(1, 0, 24 * kHour, Answer({google_, feed_, late_feed_}), t0_);
  EXPECT_FALSE(cache.Fresh(1, 0, 24 * kHour, t0_));  // fresh answers are off
  // The feed fails a minute later: its own periods of the last answer, cut to the window.
  auto last = cache.LastKnown(1, "ics_feed", 7, 0, 12 * kHour, t0_ + seconds(60));
  ASSERT_TRUE(last);
  ASSERT_EQ(last->periods.size(), 1u);
  EXPECT_EQ(last->periods[0].start, feed_.start);
  EXPECT_EQ(last->periods[0].source_id, 7);
  EXPECT_EQ(last->said_at, t0_);
  // An answer of the same window in which it failed replaces the good one; what stood in for
  // it stays known as of when the feed said it, so it keeps standing in until that is stale.
  cache.Put(1, 0, 24 * kHour, Answer({google_, feed_, late_feed_}, {FeedFailed(7)}), t0_ + seconds(60),
            {{{"ics_feed", 7}, last->said_at}});
  last = cache.LastKnown(1, "ics_feed", 7, 0, 12 * kHour, t0_ + seconds(61));
  ASSERT_TRUE(last);
  EXPECT_EQ(last->periods.size(), 1u);
  EXPECT_EQ(last->said_at, t0_);
  auto other = cache.LastKnown(1, "ics_feed", 8, 0, 12 * kHour, t0_ + seconds(61));  // said nothing busy
  ASSERT_TRUE(other);
  EXPECT_TRUE(other->periods.empty());
  EXPECT_FALSE(cache.LastKnown(1, "ics_feed", 7, 0, 12 * kHour, t0_ + seconds(3601)));  // stale
  // Without a stand-in, an answer in which it failed does not stand in for it.
  cache.Put(1, 0, 24 * kHour, Answer({google_}, {FeedFailed(7)}), t0_ + seconds(62));
  EXPECT_FALSE(cache.LastKnown(1, "ics_feed", 7, 0, 12 * kHour, t0_ + seconds(63)));
}

TEST_F(BusyCacheTest, ForgettingAUserDropsEverything) {
  BusyCache cache(seconds(60), seconds(3600));
  cache.Put(1, 0, 24 * kHour, Answer({google_}), t0_);
  cache.Put(2, 0, 24 * kHour, Answer({google_}), t0_);
  cache.Forget(1);
  EXPECT_FALSE(cache.Fresh(1, 0, 24 * kHour, t0_));
  EXPECT_FALSE(cache.LastKnown(1, "google_calendar", 1, 0, 24 * kHour, t0_));
  EXPECT_TRUE(cache.Fresh(2, 0, 24 * kHour, t0_));
}

TEST_F(BusyCacheTest, BoundedInWindowsPerUserAndInUsers) {
  BusyCache cache(seconds(60), seconds(3600), /*max_users=*/3);
  for (int w = 0; w < 6; ++w) cache.Put(1, w * 100 * kHour, (w * 100 + 24) * kHour, Answer({}), t0_ + seconds(w));
  int kept = 0;
  for (int w = 0; w < 6; ++w) kept += cache.Fresh(1, w * 100 * kHour, (w * 100 + 24) * kHour, t0_ + seconds(6)) ? 1 : 0;
  EXPECT_EQ(kept, 4);
  EXPECT_FALSE(cache.Fresh(1, 0, 24 * kHour, t0_ + seconds(6)));  // the oldest went first
  for (int64_t user = 2; user <= 4; ++user) cache.Put(user, 0, kHour, Answer({}), t0_);
  int users = 0;
  for (int64_t user = 1; user <= 4; ++user) users += cache.Fresh(user, 0, kHour, t0_) ? 1 : 0;
  EXPECT_LE(users, 3);
  EXPECT_TRUE(cache.Fresh(4, 0, kHour, t0_));  // the newest is kept
}

TEST_F(BusyCacheTest, ZeroKeepsNothing) {
  BusyCache cache(seconds(0), seconds(0));
  cache.Put(1, 0, 24 * kHour, Answer({google_}), t0_);
  EXPECT_FALSE(cache.Fresh(1, 0, 24 * kHour, t0_));
  EXPECT_FALSE(cache.LastKnown(1, "google_calendar", 1, 0, 24 * kHour, t0_));
}

}  // namespace
}  // namespace rendezvous::calendar
