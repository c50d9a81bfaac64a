// Runs the calendar sync jobs (sync_jobs.hpp) against Google, off the request path and off the
// outbox consumer's transaction: `workers` threads, each claiming one job at a time, so a slow or
// failing Google account holds at most one thread for the bounded length of one job (every Google
// request has the HTTP helper's 10 s timeout; the lease covers the few requests of a job). A job
// that fails for now is tried again after the next delay of `retry_schedule` (±20% jitter); after
// the last one, or when the failure is final (Google refuses the credential), it is marked failed.
// The first thread also counts the pending jobs (every `backlog_interval`) and purges finished jobs
// older than `retention` (every `maintenance_interval`).
//
// Start()/Stop() once each from one thread; Wake() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "calendar_metrics.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"
#include "sync_jobs.hpp"

namespace rendezvous::calendar {

struct SyncWorkerOptions {
  size_t workers = 4;
  std::vector<long> retry_schedule{5, 30, 120, 600, 3600, 3 * 3600, 6 * 3600, 12 * 3600};  // seconds
  std::chrono::seconds lease{120};
  std::chrono::milliseconds poll_interval{1000};
  std::chrono::seconds maintenance_interval{60};
  std::chrono::seconds backlog_interval{1};
  std::chrono::seconds retention{7 * 86400};
};

// What becomes of a job's attempt: done, tried again later, or given up.
constexpr const char* kSyncOutcomes[] = {"done", "retry", "failed"};

struct SyncWorkerHooks {
  // Performs the job's Google write (EventWriter::Write).
  std::function<SyncWrite(const SyncJob&)> write;
  // After a write that left the booking with an event: records the booking reference (a moved
  // event's reference moves from the bookings that had it). May throw (the job is then retried;
  // the write is idempotent).
  std::function<void(const SyncJob&, const std::string& calendar_id)> record_reference;
};

class SyncWorker {
 public:
  // Each attempt is counted in `metrics` (its action and outcome), and the pending jobs about once
  // per backlog interval. `metrics` must outlive the worker.
  SyncWorker(Database& db, Logger& logger, SyncWorkerOptions options, SyncWorkerHooks hooks,
             CalendarMetrics& metrics);
  ~SyncWorker();
  SyncWorker(const SyncWorker&) = delete;
  SyncWorker& operator=(const SyncWorker&) = delete;

  void Start();
  // Stops the threads after the job each one is running (bounded by the request timeouts).
  void Stop() noexcept;
  // Jobs may be due: claim now rather than at the next poll.
  void Wake() noexcept;

 private:
  void Loop(size_t index);
  // Claims and runs one job; false when none was due.
  bool RunOne();
  void Maintain();
  std::chrono::milliseconds RetryDelay(int attempts) const;
  // Sleeps until woken, stopped or `timeout`.
  void Wait(std::chrono::milliseconds timeout);

  Database& db_;
  Logger& logger_;
  SyncWorkerOptions options_;
  SyncWorkerHooks hooks_;
  CalendarMetrics& metrics_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t wakes_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace rendezvous::calendar
