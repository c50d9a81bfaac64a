#include "refresh_pool.hpp"

#include <algorithm>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace rendezvous::calendar {

RefreshPool::RefreshPool(size_t threads, size_t queue_limit) : queue_limit_(queue_limit) {
  threads_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

RefreshPool::~RefreshPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

bool RefreshPool::Submit(std::function<void()> work) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || queue_.size() >= queue_limit_) return false;
    queue_.push_back(std::move(work));
  }
  cv_.notify_one();
  return true;
}

void RefreshPool::Loop() {
  while (true) {
    std::function<void()> work;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      work();
    } catch (...) {
      // Work reports its own failures; nothing may escape a pool thread.
    }
  }
}

bool ByteBudget::Acquire(size_t bytes, Clock::time_point deadline) {
  bytes = std::min(bytes, limit_);
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_until(lock, deadline, [&] { return used_ + bytes <= limit_; })) return false;
  used_ += bytes;
  return true;
}

bool ByteBudget::Release(size_t bytes) {
  bool idle = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    used_ -= std::min(std::min(bytes, limit_), used_);
    idle = used_ == 0;
  }
  cv_.notify_all();
  return idle;
}

void ReleaseFreedMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

MemoryTrimmer::MemoryTrimmer(size_t threshold, std::chrono::milliseconds quiet)
    : threshold_(threshold), quiet_(quiet), thread_([this] {
        std::unique_lock<std::mutex> lock(mu_);
        while (!stopping_) {
          cv_.wait_for(lock, quiet_ / 2);
          if (stopping_ || noted_ < threshold_ || std::chrono::steady_clock::now() - last_ < quiet_) continue;
          noted_ = 0;
          ++trims_;
          lock.unlock();
          ReleaseFreedMemory();
          lock.lock();
        }
      }) {}

MemoryTrimmer::~MemoryTrimmer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void MemoryTrimmer::Note(size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  noted_ += bytes;
  last_ = std::chrono::steady_clock::now();
}

size_t MemoryTrimmer::trims() const {
  std::lock_guard<std::mutex> lock(mu_);
  return trims_;
}

}  // namespace rendezvous::calendar
