#include "sync_worker.hpp"

#include <algorithm>
#include <random>

namespace rendezvous::calendar {
namespace {

constexpr int64_t kPurgeBatch = 500;

double Jitter() {
  thread_local std::mt19937 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.8, 1.2)(rng);
}

}  // namespace

SyncWorker::SyncWorker(Database& db, Logger& logger, SyncWorkerOptions options, SyncWorkerHooks hooks,
                       CalendarMetrics& metrics)
    : db_(db), logger_(logger), options_(std::move(options)), hooks_(std::move(hooks)), metrics_(metrics) {
  options_.workers = std::max<size_t>(1, options_.workers);
  if (options_.retry_schedule.empty()) options_.retry_schedule = {5};
}

SyncWorker::~SyncWorker() { Stop(); }

void SyncWorker::Start() {
  for (size_t i = 0; i < options_.workers; ++i) threads_.emplace_back([this, i] { Loop(i); });
}

void SyncWorker::Stop() noexcept {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void SyncWorker::Wake() noexcept {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++wakes_;
  }
  cv_.notify_all();
}

void SyncWorker::Wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t seen = wakes_;
  cv_.wait_for(lock, timeout, [&] { return stopping_ || wakes_ != seen; });
}

std::chrono::milliseconds SyncWorker::RetryDelay(int attempts) const {
  const size_t i = std::min(static_cast<size_t>(std::max(attempts, 1)) - 1, options_.retry_schedule.size() - 1);
  return std::chrono::milliseconds(static_cast<int64_t>(static_cast<double>(options_.retry_schedule[i]) * 1000 * Jitter()));
}

void SyncWorker::Loop(size_t index) {
  auto next_maintenance = std::chrono::steady_clock::now();
  auto next_backlog = next_maintenance;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
    }
    bool ran = false;
    try {
      if (index == 0 && std::chrono::steady_clock::now() >= next_maintenance) {
        Maintain();
        next_maintenance = std::chrono::steady_clock::now() + options_.maintenance_interval;
      }
      if (index == 0 && std::chrono::steady_clock::now() >= next_backlog) {
        metrics_.SetSyncPending(SyncJobStore::PendingCount(db_));
        next_backlog = std::chrono::steady_clock::now() + options_.backlog_interval;
      }
      ran = RunOne();
    } catch (const std::exception& e) {
      logger_.Warn("calendar sync: a pass failed; trying again", {{"error", e.what()}});
    }
    if (!ran) Wait(options_.poll_interval);
  }
}

bool SyncWorker::RunOne() {
  std::optional<SyncJob> job = SyncJobStore::Claim(db_, options_.lease);
  if (!job) return false;
  const std::string action = SyncActionName(job->action);
  SyncWrite w = hooks_.write(*job);
  if (w.outcome == SyncWrite::Outcome::kDone && w.event_exists && hooks_.record_reference) {
    try {
      hooks_.record_reference(*job, w.calendar_id);
    } catch (const std::exception& e) {
      w.outcome = SyncWrite::Outcome::kRetry;
      w.error = std::string("the booking reference could not be recorded: ") + e.what();
    }
  }
  std::string outcome = "done";
  if (w.outcome == SyncWrite::Outcome::kDone) {
    SyncJobStore::Done(db_, *job, w.calendar_id);
  } else if (w.outcome == SyncWrite::Outcome::kRetry &&
             static_cast<size_t>(job->attempts) <= options_.retry_schedule.size()) {
    outcome = "retry";
    SyncJobStore::Retry(db_, *job, RetryDelay(job->attempts), w.error);
  } else {
    outcome = "failed";
    SyncJobStore::Fail(db_, *job, w.error);
    logger_.Warn("calendar sync: a booking's Google Calendar event could not be written",
                 {{"booking_uid", job->booking_uid}, {"user_id", job->user_id}, {"action", action},
                  {"attempts", job->attempts}, {"error", w.error}});
  }
  metrics_.SyncAttempted(action, outcome);
  return true;
}

void SyncWorker::Maintain() {
  for (int i = 0; i < 10 && SyncJobStore::PurgeFinished(db_, options_.retention, kPurgeBatch) == kPurgeBatch; ++i) {
  }
}

}  // namespace rendezvous::calendar
