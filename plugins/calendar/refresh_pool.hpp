// What keeps the calendar's outside calls off the API's request threads, and their memory bounded.
//
// RefreshPool: a few threads of the calendar plugin's own that perform busy-time refreshes (an ICS
// download and parse, a Google free/busy query) while the request that wanted them waits a bounded
// time or not at all. Bounded queue: a refresh that finds it full is not started (the caller
// answers with what is known).
//
// ByteBudget: a counting semaphore of bytes (feed text being parsed at once, process-wide).
//
// MemoryTrimmer: hands the allocator's free memory back to the system once a burst of large work
// (parses, long answers) is over: glibc keeps it in its per-thread arenas otherwise.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace rendezvous::calendar {

class RefreshPool {
 public:
  RefreshPool(size_t threads, size_t queue_limit);
  // Drops the work not started and waits for the running work (each bounded by its own timeout).
  ~RefreshPool();
  RefreshPool(const RefreshPool&) = delete;
  RefreshPool& operator=(const RefreshPool&) = delete;

  // false (and `work` dropped) when the queue is full or the pool is stopping.
  bool Submit(std::function<void()> work);

 private:
  void Loop();

  const size_t queue_limit_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

class ByteBudget {
 public:
  using Clock = std::chrono::steady_clock;
  explicit ByteBudget(size_t limit) : limit_(limit) {}

  // Takes `bytes` (at most the whole limit) once they are free, waiting until `deadline` at most.
  bool Acquire(size_t bytes, Clock::time_point deadline);
  // Gives back what Acquire took; true when nothing is held any more.
  bool Release(size_t bytes);
  size_t limit() const { return limit_; }

 private:
  const size_t limit_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t used_ = 0;
};

// Returns free heap memory to the system (malloc_trim on glibc; nothing elsewhere).
void ReleaseFreedMemory();

// A thread that calls ReleaseFreedMemory once at least `threshold` bytes of large work were noted
// and none for `quiet` (checked every quiet / 2).
class MemoryTrimmer {
 public:
  MemoryTrimmer(size_t threshold, std::chrono::milliseconds quiet);
  ~MemoryTrimmer();
  MemoryTrimmer(const MemoryTrimmer&) = delete;
  MemoryTrimmer& operator=(const MemoryTrimmer&) = delete;

  // Large work of about `bytes` just ended (its memory freed or about to be).
  void Note(size_t bytes);
  size_t trims() const;

 private:
  const size_t threshold_;
  const std::chrono::milliseconds quiet_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  size_t noted_ = 0;
  size_t trims_ = 0;
  std::chrono::steady_clock::time_point last_;
  std::thread thread_;
};

}  // namespace rendezvous::calendar
