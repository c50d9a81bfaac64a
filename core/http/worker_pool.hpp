// A fixed set of threads running queued tasks, with a bounded queue: the HTTP layer's place for
// handlers that may block (database, Lua, network), so the reactor threads only parse and write.
// Thread-safe: TrySubmit from any thread. Stop() from one thread (not from a task).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace rendezvous::core {

class WorkerPool {
 public:
  using Task = std::function<void()>;

  // Starts `threads` threads (at least one). The queue holds at most `queue_limit` waiting tasks.
  // `nice` above 0 lowers the threads' CPU priority by that much below the process's (Linux nice
  // per thread, at most 19): they get the CPU the process's other threads leave.
  WorkerPool(int threads, size_t queue_limit, int nice = 0);
  ~WorkerPool();  // Stop()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues the task; false (task untouched) when the queue is full or the pool is stopping.
  bool TrySubmit(Task& task);

  // Waits until no task is queued or running, or the deadline passes. True when idle.
  bool WaitIdle(std::chrono::steady_clock::time_point deadline);

  // Refuses new tasks, drops those still queued (destroying them), waits for running ones and
  // joins the threads. Idempotent.
  void Stop();

  size_t queued() const;

 private:
  void Run();

  const size_t queue_limit_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable idle_cv_;
  std::deque<Task> queue_;
  size_t running_ = 0;
  size_t sleeping_ = 0;       // workers waiting for work
  std::atomic<size_t> pending_{0};  // queue_.size(), readable without the lock
  size_t threads_count_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace rendezvous::core
