// Waiting in tests for something another thread or process does: Eventually polls a condition,
// bounded in time and in the number of calls, and says what it waited for when it gives up. The
// one poll loop of the test suites; a test never sleeps for a fixed time where it can await.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

namespace rendezvous::testing {

// How long Eventually waits at most, and how long it pauses between two calls.
struct Patience {
  std::chrono::milliseconds within{std::chrono::seconds(20)};
  std::chrono::milliseconds every{std::chrono::milliseconds(50)};
};

// Calls `condition` (answering bool) until it answers true: at once, then after each pause of
// `patience.every`, for as long as `patience.within` has not passed since the first call, and at
// most within / every + 1 times however long each call takes. Answers success, or a failure that
// names `what` was awaited, how many calls were made and how long it waited: use it as
// EXPECT_TRUE(Eventually(...)) or ASSERT_TRUE(...) to fail the test with that message, or as a
// bool. Runs on the calling thread; `condition` may assert.
template <class Condition>
::testing::AssertionResult Eventually(const std::string& what, Patience patience, Condition&& condition) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  const auto deadline = started + patience.within;
  const auto pause = std::max(patience.every, std::chrono::milliseconds(1));
  const int64_t max_calls = patience.within / pause + 1;
  int64_t calls = 0;
  for (;;) {
    ++calls;
    if (condition()) return ::testing::AssertionSuccess();
    if (calls >= max_calls || Clock::now() + pause > deadline) break;
    std::this_thread::sleep_for(pause);
  }
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  return ::testing::AssertionFailure()
         << "still waiting for " << what << " after " << calls << " checks in " << waited.count() << " ms";
}

// The same with the default patience: 20 s, a check every 50 ms.
template <class Condition>
::testing::AssertionResult Eventually(const std::string& what, Condition&& condition) {
  return Eventually(what, Patience{}, std::forward<Condition>(condition));
}

}  // namespace rendezvous::testing
