#include "token_purger.hpp"

#include <exception>

namespace rendezvous::oauth {

TokenPurger::TokenPurger(Database& db, Logger& logger) : db_(db), logger_(logger) {}

TokenPurger::~TokenPurger() { Stop(); }

uint64_t TokenPurger::PurgeExpired(size_t batch) {
  static constexpr const char* kDeletes[] = {
      "DELETE FROM oauth_codes WHERE expires_at < UTC_TIMESTAMP(3) LIMIT ?",
      "DELETE FROM oauth_access_tokens WHERE expires_at < UTC_TIMESTAMP(3) OR revoked_at IS NOT NULL LIMIT ?",
      // NOLINTNEXTLINE(bugprone-suspicious-missing-comma): one statement, split at the column limit.
      "DELETE FROM oauth_refresh_tokens WHERE expires_at < UTC_TIMESTAMP(3) OR revoked_at IS NOT NULL "
      "LIMIT ?",
      "DELETE FROM oauth_pushed_requests WHERE expires_at < UTC_TIMESTAMP(3) LIMIT ?",
      "DELETE FROM oauth_dpop_jtis WHERE expires_at < UTC_TIMESTAMP(3) LIMIT ?",
      // RevocationFeed::kKeep: long past the feed's window.
      "DELETE FROM oauth_revocations WHERE created_at < UTC_TIMESTAMP(3) - INTERVAL 10 MINUTE LIMIT ?",
  };
  if (batch == 0) batch = 1;
  uint64_t total = 0;
  for (const char* sql : kDeletes) {
    for (int i = 0; i < kMaxPurgeBatches; ++i) {
      // One autocommit statement per batch: short row locks, no long transaction.
      const uint64_t n = db_.Run([&](DbConnection& conn) -> uint64_t {
        return conn.Exec(sql, {batch});
      });
      total += n;
      if (n < batch) break;
    }
  }
  return total;
}

ActiveGrants TokenPurger::CountActiveGrants() {
  return db_.Run([](DbConnection& conn) {
    ActiveGrants out;
    for (const DbRow& row : conn.Query(
             "SELECT g.kind, COUNT(DISTINCT g.id) FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id"
             " WHERE r.rotated_at IS NULL AND r.revoked_at IS NULL AND r.expires_at > UTC_TIMESTAMP(3)"
             " AND g.revoked_at IS NULL GROUP BY g.kind")) {
      (row.String(1) == "managed" ? out.managed : out.oauth) += row.Int(2);
    }
    return out;
  });
}

void TokenPurger::Start(std::chrono::milliseconds interval, std::function<void(const ActiveGrants&)> on_count) {
  std::lock_guard<std::mutex> lk(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this, interval, on_count = std::move(on_count)] {
    auto count = [&] {
      if (!on_count) return;
      try {
        on_count(CountActiveGrants());
      } catch (const std::exception& e) {
        logger_.Warn("counting active oauth grants failed", {{"error", std::string(e.what())}});
      }
    };
    count();
    std::unique_lock<std::mutex> lk(mu_);
    while (!cv_.wait_for(lk, interval, [this] { return stop_; })) {
      lk.unlock();
      try {
        const uint64_t n = PurgeExpired();
        if (n > 0) logger_.Debug("oauth purge", {{"deleted", static_cast<int64_t>(n)}});
      } catch (const std::exception& e) {
        logger_.Warn("oauth purge failed", {{"error", std::string(e.what())}});
      }
      count();
      lk.lock();
    }
  });
}

void TokenPurger::Stop() {
  std::thread t;
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
    t = std::move(thread_);
  }
  cv_.notify_all();
  if (t.joinable()) t.join();
}

}  // namespace rendezvous::oauth
