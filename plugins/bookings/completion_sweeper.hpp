// The completion sweep: a background thread that turns accepted bookings whose end has passed into
// completed ones (BOOKING_COMPLETED), every `interval`, in bounded batches claimed with
// FOR UPDATE SKIP LOCKED so several instances share the work; each pass also forgets idempotency
// keys older than 24 hours and slot reservations that ended, and counts the open ones. Start/Stop from one
// thread (the plugin's); Stop wakes the thread at once and joins it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "booking_flow.hpp"
#include "rendezvous/log.hpp"
#include "reservation_flow.hpp"

namespace rendezvous::bookings {

class CompletionSweeper {
 public:
  static constexpr size_t kBatch = 100;
  static constexpr size_t kMaxBatchesPerPass = 20;

  CompletionSweeper(BookingFlow& flow, ReservationFlow& reservations, Logger& logger,
                    std::chrono::seconds interval);
  ~CompletionSweeper();
  CompletionSweeper(const CompletionSweeper&) = delete;
  CompletionSweeper& operator=(const CompletionSweeper&) = delete;

  void Start();
  void Stop() noexcept;
  // One pass (what the thread does each interval); returns how many bookings it completed.
  size_t SweepOnce();

 private:
  void Loop();

  BookingFlow& flow_;
  ReservationFlow& reservations_;
  Logger& logger_;
  const std::chrono::seconds interval_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace rendezvous::bookings
