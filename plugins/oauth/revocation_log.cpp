#include "revocation_log.hpp"

#include <exception>
#include <vector>

#include "client_cache.hpp"
#include "token_cache.hpp"

namespace rendezvous::oauth {

std::string_view RevocationKindName(RevocationKind kind) {
  switch (kind) {
    case RevocationKind::kToken:
      return "token";
    case RevocationKind::kGrant:
      return "grant";
    case RevocationKind::kUser:
      return "user";
    case RevocationKind::kClient:
      return "client";
  }
  return "token";
}

std::optional<RevocationKind> ParseRevocationKind(std::string_view name) {
  for (RevocationKind k :
       {RevocationKind::kToken, RevocationKind::kGrant, RevocationKind::kUser, RevocationKind::kClient}) {
    if (RevocationKindName(k) == name) return k;
  }
  return std::nullopt;
}

void RecordRevocation(DbConnection& tx, const Revocation& revocation) {
  tx.Exec("INSERT INTO oauth_revocations (created_at, kind, subject) VALUES (UTC_TIMESTAMP(3), ?, ?)",
          {RevocationKindName(revocation.kind), revocation.subject});
}

RevocationFeed::RevocationFeed(Database& db, Logger& logger, TokenCache& cache, ClientCache* clients)
    : db_(db), logger_(logger), cache_(cache), clients_(clients), last_read_(Clock::now()) {}

RevocationFeed::~RevocationFeed() {
  Stop();
}

bool RevocationFeed::Poll() {
  std::lock_guard<std::mutex> poll_lock(poll_mu_);
  const Clock::time_point began = Clock::now();
  std::vector<DbRow> rows;
  try {
    rows = db_.Run([](DbConnection& conn) {
      static const std::string kSql =
          "SELECT id, kind, subject FROM oauth_revocations WHERE created_at >= UTC_TIMESTAMP(3) - INTERVAL " +
          std::to_string(kWindow.count()) + " SECOND LIMIT " + std::to_string(kMaxRows + 1);
      return conn.Query(kSql);
    });
  } catch (const std::exception& e) {
    if (!failing_)
      logger_.Warn("reading the oauth revocation log failed", {{"error", std::string(e.what())}});
    failing_ = true;
    return false;
  }
  if (failing_) logger_.Info("reading the oauth revocation log again", {});
  failing_ = false;
  if (began - last_read_ > kWindow - kSlack || rows.size() > kMaxRows) {
    // Rows may have come and left the window since the last read: nothing cached can be trusted.
    cache_.Clear();
    if (clients_) clients_->Clear();
    for (const DbRow& row : rows) seen_.emplace(row.Int(1), began);
  } else {
    for (const DbRow& row : rows) {
      if (!seen_.emplace(row.Int(1), began).second) continue;
      const std::optional<RevocationKind> kind = ParseRevocationKind(row.String(2));
      if (!kind) {
        cache_.Clear();
        if (clients_) clients_->Clear();
        continue;
      }
      cache_.Evict(Revocation{*kind, row.String(3)});
      if (*kind == RevocationKind::kClient && clients_) clients_->Evict(row.String(3));
    }
  }
  // A row is read for kWindow after it was made; remembering its id a little longer is enough.
  for (auto it = seen_.begin(); it != seen_.end();) {
    it = began - it->second > kWindow + kSlack ? seen_.erase(it) : std::next(it);
  }
  last_read_ = began;
  cache_.SetFreshUntil(began + TokenCache::kMaxStaleness);
  cache_.PublishGauges();
  if (clients_) {
    clients_->SetFreshUntil(began + TokenCache::kMaxStaleness);
    clients_->PublishGauges();
  }
  return true;
}

void RevocationFeed::Start() {
  std::lock_guard<std::mutex> lk(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lk(mu_);
    do {
      lk.unlock();
      Poll();
      lk.lock();
    } while (!cv_.wait_for(lk, kPollInterval, [this] { return stop_; }));
  });
}

void RevocationFeed::Stop() {
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
