#include "http/worker_pool.hpp"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace rendezvous::core {
namespace {

constexpr int kSpins = 64;

}  // namespace

WorkerPool::WorkerPool(int threads, size_t queue_limit, int nice) : queue_limit_(queue_limit) {
  if (threads < 1) threads = 1;
  threads_count_ = static_cast<size_t>(threads);
  threads_.reserve(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this, nice] {
      // Linux keeps a nice value per thread; raising it needs no privilege. Should it fail, the
      // thread runs at the process's priority.
      if (nice > 0) {
        const auto tid = static_cast<id_t>(syscall(SYS_gettid));
        errno = 0;
        const int base = getpriority(PRIO_PROCESS, tid);
        if (errno == 0) (void)setpriority(PRIO_PROCESS, tid, std::min(19, base + nice));
      }
      Run();
    });
  }
}

WorkerPool::~WorkerPool() { Stop(); }

bool WorkerPool::TrySubmit(Task& task) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (stopping_ || queue_.size() >= queue_limit_) return false;
    queue_.push_back(std::move(task));
    pending_.store(queue_.size(), std::memory_order_relaxed);
    // Awake workers between two tasks take queued ones without being woken; a sleeping one is
    // woken only when there is more queued work than they can take. Waking a thread per task
    // costs more than the short handlers it runs (context switches dominated the profile).
    const size_t awake = threads_count_ - sleeping_;
    const size_t between_tasks = awake - running_;
    wake = sleeping_ > 0 && queue_.size() > between_tasks;
  }
  if (wake) work_cv_.notify_one();
  return true;
}

bool WorkerPool::WaitIdle(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  return idle_cv_.wait_until(lock, deadline, [this] { return queue_.empty() && running_ == 0; });
}

void WorkerPool::Stop() {
  std::deque<Task> dropped;
  {
    std::lock_guard lock(mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
    dropped.swap(queue_);
    pending_.store(0, std::memory_order_relaxed);
  }
  work_cv_.notify_all();
  idle_cv_.notify_all();
  dropped.clear();
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    threads.swap(threads_);
  }
  for (auto& t : threads)
    if (t.joinable()) t.join();
}

size_t WorkerPool::queued() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void WorkerPool::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    if (!stopping_ && queue_.empty()) {
      // Under load the next task is usually a few microseconds away: look again a few times
      // before sleeping, so a busy pool is not paid for in futex sleeps and wake-ups.
      lock.unlock();
      for (int i = 0; i < kSpins && pending_.load(std::memory_order_relaxed) == 0; ++i) std::this_thread::yield();
      lock.lock();
    }
    if (!stopping_ && queue_.empty()) {
      ++sleeping_;
      work_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      --sleeping_;
    }
    if (queue_.empty()) return;  // stopping
    Task task = std::move(queue_.front());
    queue_.pop_front();
    pending_.store(queue_.size(), std::memory_order_relaxed);
    ++running_;
    lock.unlock();
    task();
    task = nullptr;
    lock.lock();
    --running_;
    if (queue_.empty() && running_ == 0) idle_cv_.notify_all();
  }
}

}  // namespace rendezvous::core
