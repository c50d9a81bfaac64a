// The busy-times cache in front of a host's calendars: fresh answers for windows it holds, the
// last answer of a source standing in while it fails, forgetting, and its bounds. The ICS feed
// cache beneath it: one refresh per feed however many callers, bounded waits, conditional
// refreshes reusing the parse, stand-ins, and its byte bound; the parse byte budget; the memory
// trimmer.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "busy_cache.hpp"
#include "eventually.hpp"
#include "ics_feed_cache.hpp"
#include "refresh_pool.hpp"

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

// A downloader the test releases: counts its calls and what it was told.
class Gate {
 public:
  IcsFeedCache::Downloader Downloader(IcsFeedCache::Download answer) {
    return [this, answer](const std::optional<IcsFeedCache::Validators>& v, IcsFeedCache::Clock::time_point) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        ++calls_;
        told_ = v;
        cv_.wait_for(lock, std::chrono::seconds(10), [&] { return open_; });
      }
      return answer;
    };
  }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  int calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  std::optional<IcsFeedCache::Validators> told() {
    std::lock_guard<std::mutex> lock(mu_);
    return told_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int calls_ = 0;
  std::optional<IcsFeedCache::Validators> told_;
};

IcsFeedCache::Download Parsed(size_t bytes, std::string etag = "") {
  IcsFeedCache::Download d;
  d.kind = IcsFeedCache::Download::Kind::kParsed;
  d.calendar = std::make_shared<const CompactIcs>();
  d.bytes = bytes;
  d.held_bytes = bytes;
  d.validators.etag = std::move(etag);
  return d;
}

IcsFeedCache::Download Failure(ErrorCode code) {
  IcsFeedCache::Download d;
  d.failure = Status(code, "could not be read");
  return d;
}

using std::chrono::milliseconds;
const auto kLong = std::chrono::seconds(10);

// (Each test lets every refresh finish before its pool and cache go.)
TEST(IcsFeedCacheTest, ManyCallersShareOneRefresh) {
  Gate gate;
  RefreshPool pool(4, 16);
  IcsFeedCache cache(pool, seconds(3600), 1 << 20);
  const auto download = gate.Downloader(Parsed(100, "\"v1\""));
  std::vector<std::thread> callers;
  std::atomic<int> got{0};
  for (int i = 0; i < 8; ++i) {
    callers.emplace_back([&] {
      auto t = cache.Start("feed", seconds(60), kLong, download);
      auto a = cache.Await(t, IcsFeedCache::Clock::now() + kLong, kLong);
      if (a.calendar && !a.failure && !a.pending) ++got;
    });
  }
  EXPECT_TRUE(testing::Eventually("a download started", {seconds(10), std::chrono::milliseconds(1)},
                                  [&] { return gate.calls() > 0; }));
  gate.Open();
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(got.load(), 8);
  EXPECT_EQ(gate.calls(), 1);
  // Fresh: answered at once, nothing asked.
  auto again = cache.Start("feed", seconds(60), kLong, download);
  ASSERT_TRUE(again.ready);
  EXPECT_EQ(gate.calls(), 1);
  EXPECT_EQ(cache.KnownBytes("feed"), 100u);
}

TEST(IcsFeedCacheTest, AWaitEndsAtMostMaxWaitAfterTheRefreshStarted) {
  Gate gate;
  RefreshPool pool(2, 16);
  IcsFeedCache cache(pool, seconds(0), 1 << 20);
  const auto download = gate.Downloader(Parsed(10));
  const auto t0 = IcsFeedCache::Clock::now();
  auto first = cache.Start("slow", seconds(60), kLong, download);
  auto a = cache.Await(first, t0 + kLong, milliseconds(200));
  const auto waited = IcsFeedCache::Clock::now() - t0;
  EXPECT_TRUE(a.pending);
  ASSERT_TRUE(a.failure);
  EXPECT_EQ(a.failure->code(), ErrorCode::kUpstreamTimeout);
  EXPECT_GE(waited, milliseconds(200));
  EXPECT_LT(waited, milliseconds(2000));
  // A caller joining the same refresh later does not wait again.
  const auto t1 = IcsFeedCache::Clock::now();
  auto late = cache.Start("slow", seconds(60), kLong, download);
  EXPECT_FALSE(late.ready);
  EXPECT_TRUE(cache.Await(late, t1 + kLong, milliseconds(200)).pending);
  EXPECT_LT(IcsFeedCache::Clock::now() - t1, milliseconds(100));
  gate.Open();
  EXPECT_TRUE(cache.Await(first, IcsFeedCache::Clock::now() + kLong, kLong).calendar);  // done before the end
  EXPECT_EQ(gate.calls(), 1);
}

TEST(IcsFeedCacheTest, ARefreshIsConditionalAndANotModifiedKeepsTheParse) {
  RefreshPool pool(1, 16);
  IcsFeedCache cache(pool, seconds(3600), 1 << 20);
  Gate first_gate;
  first_gate.Open();
  auto t = cache.Start("feed", seconds(0), kLong, first_gate.Downloader(Parsed(50, "\"abc\"")));
  const auto parsed = cache.Await(t, IcsFeedCache::Clock::now() + kLong, kLong).calendar;
  ASSERT_TRUE(parsed);
  EXPECT_FALSE(first_gate.told());  // nothing kept yet: an unconditional download

  Gate second;
  second.Open();
  IcsFeedCache::Download not_modified;
  not_modified.kind = IcsFeedCache::Download::Kind::kNotModified;
  auto t2 = cache.Start("feed", seconds(0), kLong, second.Downloader(not_modified));
  auto a = cache.Await(t2, IcsFeedCache::Clock::now() + kLong, kLong);
  ASSERT_TRUE(second.told());
  EXPECT_EQ(second.told()->etag, "\"abc\"");
  EXPECT_EQ(a.calendar, parsed);  // the same parse, not read again
  EXPECT_FALSE(a.failure);
}

TEST(IcsFeedCacheTest, AFailingFeedsLastParseStandsInWithinStale) {
  RefreshPool pool(1, 16);
  for (int stale : {3600, 0}) {
    IcsFeedCache cache(pool, seconds(stale), 1 << 20);
    Gate ok, bad;
    ok.Open();
    bad.Open();
    auto t = cache.Start("feed", seconds(0), kLong, ok.Downloader(Parsed(50)));
    cache.Await(t, IcsFeedCache::Clock::now() + kLong, kLong);
    auto t2 = cache.Start("feed", seconds(0), kLong, bad.Downloader(Failure(ErrorCode::kUpstreamFailed)));
    auto a = cache.Await(t2, IcsFeedCache::Clock::now() + kLong, kLong);
    ASSERT_TRUE(a.failure) << stale;
    EXPECT_EQ(a.calendar != nullptr, stale > 0) << stale;
  }
}

TEST(IcsFeedCacheTest, ParsesKeptAreBoundedByBytes) {
  RefreshPool pool(1, 16);
  IcsFeedCache cache(pool, seconds(3600), 100);
  Gate open;
  open.Open();
  for (const char* key : {"a", "b"}) {
    auto t = cache.Start(key, seconds(60), kLong, open.Downloader(Parsed(60)));
    ASSERT_TRUE(cache.Await(t, IcsFeedCache::Clock::now() + kLong, kLong).calendar);
  }
  EXPECT_FALSE(cache.KnownBytes("a"));  // the least recently used went
  EXPECT_EQ(cache.KnownBytes("b"), 60u);
  EXPECT_EQ(cache.kept_bytes(), 60u);
}

TEST(IcsFeedCacheTest, TheMemoryHeldStaysWithinItsBoundAndIsReported) {
  RefreshPool pool(1, 16);
  std::mutex mu;
  std::vector<size_t> told;
  IcsFeedCache cache(pool, seconds(3600), 100, 10000, [&](size_t held) {
    std::lock_guard<std::mutex> lock(mu);
    told.push_back(held);
  });
  Gate open;
  open.Open();
  // The text's size counts for the user's budget; the memory held for the cache's bound.
  auto parse = [](size_t text, size_t held) {
    IcsFeedCache::Download d = Parsed(text);
    d.held_bytes = held;
    return d;
  };
  const std::vector<std::pair<std::string, size_t>> feeds = {
      {"a", 60}, {"b", 30}, {"c", 50}, {"d", 150}, {"e", 10}};
  for (const auto& [key, held] : feeds) {
    auto t = cache.Start(key, seconds(60), kLong, open.Downloader(parse(2 << 20, held)));
    IcsFeedCache::Answer a = cache.Await(t, IcsFeedCache::Clock::now() + kLong, kLong);
    ASSERT_TRUE(a.calendar) << key;  // answered to its callers, even when too heavy to keep
    EXPECT_LE(cache.kept_bytes(), 100u) << key;
  }
  EXPECT_FALSE(cache.KnownBytes("a"));  // the least recently used went first
  EXPECT_FALSE(cache.KnownBytes("d"));  // heavier than the whole bound: not kept
  EXPECT_EQ(cache.KnownBytes("c"), size_t{2 << 20});
  EXPECT_EQ(cache.kept_bytes(), 30u + 50u + 10u);
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(told.size(), feeds.size());
  for (size_t held : told) EXPECT_LE(held, 100u);
  EXPECT_EQ(told.back(), 90u);
}

TEST(IcsFeedCacheTest, AFullPoolAnswersAtOnce) {
  Gate gate;
  RefreshPool pool(1, 1);
  IcsFeedCache cache(pool, seconds(3600), 1 << 20);
  auto busy = cache.Start("one", seconds(60), kLong, gate.Downloader(Parsed(1)));  // runs
  EXPECT_TRUE(testing::Eventually("a download started", {seconds(10), std::chrono::milliseconds(1)},
                                  [&] { return gate.calls() > 0; }));
  auto queued = cache.Start("two", seconds(60), kLong, gate.Downloader(Parsed(1)));  // waits in the queue
  auto refused = cache.Start("three", seconds(60), kLong, gate.Downloader(Parsed(1)));
  ASSERT_TRUE(refused.ready);
  EXPECT_TRUE(refused.ready->pending);
  ASSERT_TRUE(refused.ready->failure);
  EXPECT_EQ(refused.ready->failure->code(), ErrorCode::kUpstreamTimeout);
  gate.Open();
  EXPECT_TRUE(cache.Await(busy, IcsFeedCache::Clock::now() + kLong, kLong).calendar);
  EXPECT_TRUE(cache.Await(queued, IcsFeedCache::Clock::now() + kLong, kLong).calendar);
}

TEST(ByteBudgetTest, TakesWhatIsFreeAndWaitsBoundedForTheRest) {
  ByteBudget budget(100);
  const auto soon = ByteBudget::Clock::now() + milliseconds(50);
  EXPECT_TRUE(budget.Acquire(70, soon));
  EXPECT_FALSE(budget.Acquire(40, soon));  // would pass the limit: gives up at the deadline
  EXPECT_TRUE(budget.Acquire(30, soon));
  EXPECT_FALSE(budget.Release(70));
  EXPECT_TRUE(budget.Acquire(500, ByteBudget::Clock::now() + milliseconds(50)) == false);  // 100 at most, 30 held
  EXPECT_TRUE(budget.Release(30));
  EXPECT_TRUE(budget.Acquire(500, ByteBudget::Clock::now() + milliseconds(50)));  // a larger take is the whole budget
}

TEST(MemoryTrimmerTest, TrimsOnceEnoughWorkIsOverAndQuiet) {
  MemoryTrimmer trimmer(100, milliseconds(40));
  trimmer.Note(60);
  std::this_thread::sleep_for(milliseconds(150));  // below the threshold: nothing to hand back
  EXPECT_EQ(trimmer.trims(), 0u);
  trimmer.Note(60);
  testing::Eventually("a trim", {std::chrono::seconds(5), milliseconds(10)},
                      [&] { return trimmer.trims() > 0; });
  EXPECT_EQ(trimmer.trims(), 1u);
}

}  // namespace
}  // namespace rendezvous::calendar
