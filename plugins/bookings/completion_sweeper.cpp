#include "completion_sweeper.hpp"

#include <exception>

namespace rendezvous::bookings {

CompletionSweeper::CompletionSweeper(BookingFlow& flow, ReservationFlow& reservations, Logger& logger,
                                     std::chrono::seconds interval)
    : flow_(flow), reservations_(reservations), logger_(logger), interval_(interval) {}

CompletionSweeper::~CompletionSweeper() {
  Stop();
}

void CompletionSweeper::Start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { Loop(); });
}

void CompletionSweeper::Stop() noexcept {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

size_t CompletionSweeper::SweepOnce() {
  size_t total = 0;
  for (size_t i = 0; i < kMaxBatchesPerPass; ++i) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) break;
    }
    const size_t n = flow_.CompleteEnded(time::Now(), kBatch);
    total += n;
    if (n < kBatch) break;
  }
  flow_.ForgetIdempotencyKeys(time::Now(), kBatch * kMaxBatchesPerPass);
  reservations_.ForgetExpired(time::Now(), kBatch * kMaxBatchesPerPass);
  reservations_.CountOpen(time::Now());
  return total;
}

void CompletionSweeper::Loop() {
  for (;;) {
    try {
      if (size_t n = SweepOnce(); n > 0) logger_.Info("bookings completed", {{"count", n}});
    } catch (const DatabaseUnavailable& e) {
      logger_.Warn("booking completion sweep: database unavailable", {{"error", e.what()}});
    } catch (const std::exception& e) {
      logger_.Error("booking completion sweep failed", {{"error", e.what()}});
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (wake_.wait_for(lock, interval_, [this] { return stopping_; })) return;
  }
}

}  // namespace rendezvous::bookings
