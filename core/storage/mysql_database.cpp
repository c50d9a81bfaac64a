#include "storage/mysql_database.hpp"

#include <algorithm>
#include <random>
#include <thread>
#include <unordered_map>
#include <utility>

#include <cppconn/connection.h>
#include <cppconn/exception.h>
#include <mysql_driver.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace rendezvous::core {
namespace {

constexpr auto kValidateAfterIdle = std::chrono::seconds(3);
// Galera aborts a conflicting transaction at commit: with several writers a hot row (a host's
// booking lock) sees bursts of aborts, so the budget is wide and the back-off grows.
constexpr int kMaxTransactionRetries = 30;

sql::mysql::MySQL_Driver& Driver() {
  // get_mysql_driver_instance() looks the driver up in an unguarded map: call it once only.
  static sql::mysql::MySQL_Driver* driver = sql::mysql::get_mysql_driver_instance();
  return *driver;
}

// Jitter over an exponentially growing window: 1, 2, 4 ... 64 ms (in all at most ~1.6 s). Retries
// come soon: a transaction aborted at its lock row (ExecLock) then queues behind the winner
// instead of missing the next turns; each retry is a new draw, so the budget is wide.
std::chrono::microseconds RetryBackoff(int attempt) {
  thread_local std::mt19937 rng{std::random_device{}()};
  const int window = 1000 << std::min(attempt - 1, 6);
  std::uniform_int_distribution<int> jitter(window / 4, window);
  return std::chrono::microseconds(jitter(rng));
}

}  // namespace

// A borrowed connection; goes back to the pool (or is discarded) exactly once.
struct MysqlDatabase::Lease {
  MysqlDatabase* db = nullptr;
  std::unique_ptr<MysqlConnection> conn;
  bool reused = false;  // came from the idle list (may have died since)

  Lease(MysqlDatabase* d, std::unique_ptr<MysqlConnection> c, bool r)
      : db(d), conn(std::move(c)), reused(r) {}
  Lease(Lease&&) = default;
  ~Lease() {
    if (conn) db->Release(std::move(conn), false);
  }
  void Return(bool reusable) {
    if (conn) db->Release(std::move(conn), reusable);
  }
};

MysqlDatabase::MysqlDatabase(DatabaseOptions options, prometheus::Registry& registry, Logger& logger)
    : options_(std::move(options)),
      logger_(logger),
      idle_gauge_(prometheus::BuildGauge()
                      .Name("db_pool_connections")
                      .Help("Database connections of the pool by state")
                      .Register(registry)
                      .Add({{"state", "idle"}})),
      in_use_gauge_(prometheus::BuildGauge()
                        .Name("db_pool_connections")
                        .Help("Database connections of the pool by state")
                        .Register(registry)
                        .Add({{"state", "in_use"}})),
      size_gauge_(prometheus::BuildGauge()
                      .Name("db_pool_size")
                      .Help("Maximum number of database connections of the pool")
                      .Register(registry)
                      .Add({})),
      acquire_wait_(prometheus::BuildHistogram()
                        .Name("db_pool_acquire_wait_seconds")
                        .Help("Time spent waiting for a database connection")
                        .Register(registry)
                        .Add({}, prometheus::Histogram::BucketBoundaries{0.0005, 0.001, 0.005, 0.01,
                                                                         0.025, 0.05, 0.1, 0.25,
                                                                         0.5, 1, 2.5, 5})),
      acquire_timeouts_(prometheus::BuildCounter()
                            .Name("db_pool_acquire_timeouts_total")
                            .Help("Acquires that found no free database connection in time")
                            .Register(registry)
                            .Add({})),
      errors_connection_(prometheus::BuildCounter()
                             .Name("db_errors_total")
                             .Help("Database errors by kind")
                             .Register(registry)
                             .Add({{"kind", "connection"}})),
      errors_deadlock_retry_(prometheus::BuildCounter()
                                 .Name("db_errors_total")
                                 .Help("Database errors by kind")
                                 .Register(registry)
                                 .Add({{"kind", "deadlock_retry"}})),
      errors_other_(prometheus::BuildCounter()
                        .Name("db_errors_total")
                        .Help("Database errors by kind")
                        .Register(registry)
                        .Add({{"kind", "other"}})),
      retry_deadlock_(prometheus::BuildCounter()
                          .Name("db_transaction_retries_total")
                          .Help("Transactions the server aborted and the pool ran again, by cause")
                          .Register(registry)
                          .Add({{"cause", "deadlock"}})),
      retry_lock_wait_(prometheus::BuildCounter()
                           .Name("db_transaction_retries_total")
                           .Help("Transactions the server aborted and the pool ran again, by cause")
                           .Register(registry)
                           .Add({{"cause", "lock_wait_timeout"}})),
      retries_exhausted_(prometheus::BuildCounter()
                             .Name("db_errors_total")
                             .Help("Database errors by kind")
                             .Register(registry)
                             .Add({{"kind", "retries_exhausted"}})),
      cluster_node_(prometheus::BuildGauge()
                        .Name("db_cluster_node")
                        .Help("1 for the Galera node (wsrep_node_name) this instance last connected to")
                        .Register(registry)),
      ready_(prometheus::BuildGauge()
                 .Name("db_ready")
                 .Help("1 while the database answers, 0 from a connection error to the next success")
                 .Register(registry)
                 .Add({})),
      tx_commit_(prometheus::BuildCounter()
                     .Name("db_transactions_total")
                     .Help("Database transactions by result")
                     .Register(registry)
                     .Add({{"result", "commit"}})),
      tx_rollback_(prometheus::BuildCounter()
                       .Name("db_transactions_total")
                       .Help("Database transactions by result")
                       .Register(registry)
                       .Add({{"result", "rollback"}})) {
  if (options_.pool_size < 1) throw std::invalid_argument("database pool_size must be at least 1");
  size_gauge_.Set(options_.pool_size);
  // Off a cluster the family shows one series, wsrep_node_name="" at 0.
  cluster_node_.Add({{"wsrep_node_name", ""}}).Set(0);
  std::lock_guard<std::mutex> lk(mu_);
  UpdateGaugesLocked();
}

MysqlDatabase::~MysqlDatabase() {
  std::vector<std::unique_ptr<MysqlConnection>> idle;
  {
    std::lock_guard<std::mutex> lk(mu_);
    idle.swap(idle_);
    open_ -= static_cast<int>(idle.size());
    UpdateGaugesLocked();
  }
}

void MysqlDatabase::UpdateGaugesLocked() {
  idle_gauge_.Set(static_cast<double>(idle_.size()));
  in_use_gauge_.Set(borrowed_);
}

void MysqlDatabase::NoteConnectionError(int code, const char* message) noexcept {
  errors_connection_.Increment();
  ready_.Set(0);
  {
    std::lock_guard<std::mutex> lk(mu_);
    ++error_epoch_;
  }
  try {
    logger_.Warn("database connection error", {{"code", code}, {"error", message}});
  } catch (...) {
  }
}

std::unique_ptr<MysqlConnection> MysqlDatabase::Connect() {
  sql::ConnectOptionsMap o;
  if (!options_.socket.empty()) {
    o["hostName"] = sql::SQLString("localhost");
    o["socket"] = sql::SQLString(options_.socket);
  } else {
    o["hostName"] = sql::SQLString(options_.host);
    o["port"] = options_.port;
  }
  o["userName"] = sql::SQLString(options_.user);
  o["password"] = sql::SQLString(options_.password);
  o["schema"] = sql::SQLString(options_.name);
  o["OPT_CONNECT_TIMEOUT"] = static_cast<int>(options_.connect_timeout.count());
  o["OPT_READ_TIMEOUT"] = static_cast<int>(options_.read_timeout.count());
  o["OPT_WRITE_TIMEOUT"] = static_cast<int>(options_.write_timeout.count());
  o["OPT_CHARSET_NAME"] = sql::SQLString("utf8mb4");
  auto fail = [this](int code, const char* message) {
    NoteConnectionError(code, message);
    return DatabaseUnavailable(std::string("cannot connect to the database: ") + message);
  };
  try {
    std::unique_ptr<sql::Connection> raw(Driver().connect(o));
    auto conn = std::make_unique<MysqlConnection>(std::move(raw));
    conn->ExecUnprepared(
        "SET SESSION time_zone = '+00:00', "
        "SESSION sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'STRICT_ALL_TABLES')");
    conn->ExecUnprepared("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
    NoteClusterNode(*conn);
    return conn;
  } catch (const sql::SQLException& e) {
    throw fail(e.getErrorCode(), e.what());
  } catch (const ConnectionLost& e) {
    throw fail(e.code(), e.what());
  } catch (const DatabaseError& e) {
    throw fail(e.code(), e.what());
  }
}

void MysqlDatabase::NoteClusterNode(MysqlConnection& conn) noexcept {
  std::string name;
  try {
    // MariaDB always has these variables (wsrep_on is OFF off a cluster); MySQL has none (1193).
    const auto row = conn.QueryOne("SELECT @@wsrep_on, @@wsrep_node_name");
    if (!row || row->Int(1) != 1) return;
    name = row->String(2);
    // Causal reads: a read waits until this node applied every write the cluster committed
    // before it, so what one instance wrote (an event type, a token) is seen by the next request
    // whatever node its instance is attached to.
    // Lock rows (ExecLock) are replicated as a fragment of one statement, so racing writers on
    // several nodes queue for them instead of aborting each other at commit.
    conn.ExecUnprepared("SET SESSION wsrep_sync_wait = 1, SESSION wsrep_trx_fragment_unit = 'statements'");
    conn.set_replicate_locks(true);
  } catch (...) {
    return;
  }
  std::lock_guard<std::mutex> lk(mu_);
  if (name == cluster_node_name_) return;
  cluster_node_.Add({{"wsrep_node_name", cluster_node_name_}}).Set(0);
  cluster_node_.Add({{"wsrep_node_name", name}}).Set(1);
  cluster_node_name_ = name;
}

MysqlDatabase::Lease MysqlDatabase::Acquire() {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + options_.acquire_timeout;
  auto observe = [&] {
    acquire_wait_.Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  };
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    if (!idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      ++borrowed_;
      UpdateGaugesLocked();
      const uint64_t epoch = error_epoch_;
      const bool check = conn->validated_epoch < epoch ||
                         std::chrono::steady_clock::now() - conn->last_used > kValidateAfterIdle;
      if (!check) {
        lk.unlock();
        observe();
        return Lease(this, std::move(conn), true);
      }
      lk.unlock();
      if (conn->Validate()) {
        conn->validated_epoch = epoch;
        observe();
        return Lease(this, std::move(conn), true);
      }
      conn.reset();
      lk.lock();
      --borrowed_;
      --open_;
      UpdateGaugesLocked();
      continue;
    }
    if (open_ < options_.pool_size) {
      ++open_;
      ++borrowed_;
      UpdateGaugesLocked();
      const uint64_t epoch = error_epoch_;
      lk.unlock();
      try {
        auto conn = Connect();
        conn->validated_epoch = epoch;
        observe();
        return Lease(this, std::move(conn), false);
      } catch (...) {
        lk.lock();
        --open_;
        --borrowed_;
        UpdateGaugesLocked();
        lk.unlock();
        cv_.notify_one();
        observe();
        throw;
      }
    }
    if (cv_.wait_until(lk, deadline) == std::cv_status::timeout && idle_.empty() &&
        open_ >= options_.pool_size) {
      lk.unlock();
      observe();
      acquire_timeouts_.Increment();
      throw DatabaseUnavailable("no database connection free within " +
                                std::to_string(options_.acquire_timeout.count()) + " ms");
    }
  }
}

void MysqlDatabase::Release(std::unique_ptr<MysqlConnection> conn, bool reusable) {
  if (reusable) {
    ready_.Set(1);
    conn->last_used = std::chrono::steady_clock::now();
    conn->TrimStatementCache();
  }
  std::unique_ptr<MysqlConnection> doomed;
  {
    std::lock_guard<std::mutex> lk(mu_);
    --borrowed_;
    if (reusable) {
      idle_.push_back(std::move(conn));
    } else {
      --open_;
      doomed = std::move(conn);
    }
    UpdateGaugesLocked();
  }
  cv_.notify_one();
  // `doomed` closes here, outside the lock.
}

bool MysqlDatabase::Ping() noexcept {
  try {
    Lease lease = Acquire();
    try {
      lease.conn->ExecUnprepared("DO 1");
    } catch (const ConnectionLost& e) {
      NoteConnectionError(e.code(), e.what());
      return false;
    } catch (...) {
      return false;
    }
    lease.Return(true);
    return true;
  } catch (...) {
    return false;
  }
}

void MysqlDatabase::RunAutocommit(const std::function<void(DbConnection&)>& fn) {
  Lease lease = Acquire();
  try {
    fn(*lease.conn);
  } catch (const ConnectionLost& e) {
    NoteConnectionError(e.code(), e.what());
    lease.Return(false);
    throw DatabaseUnavailable(std::string("database connection lost: ") + e.what());
  } catch (const DatabaseError& e) {
    errors_other_.Increment();
    lease.Return(ResetAfterError(*lease.conn));
    // An aborted statement outside a transaction is not re-run (its callback may have done
    // more): the client may try again.
    if (IsRetryableTransactionError(e)) throw DatabaseUnavailable(std::string("database busy: ") + e.what());
    throw;
  } catch (...) {
    lease.Return(ResetAfterError(*lease.conn));
    throw;
  }
  lease.Return(true);
}

bool MysqlDatabase::ResetAfterError(MysqlConnection& conn) noexcept {
  // A callback that failed midway may have left a transaction open; ROLLBACK closes it and also
  // proves the connection still answers before it goes back to the pool.
  try {
    conn.ExecUnprepared("ROLLBACK");
    return true;
  } catch (const ConnectionLost& e) {
    NoteConnectionError(e.code(), e.what());
  } catch (...) {
  }
  return false;
}

void MysqlDatabase::RunTransaction(const std::function<void(DbConnection&)>& fn) {
  bool retried_stale = false;
  for (int attempt = 1;; ++attempt) {
    Lease lease = Acquire();
    bool began = false;
    bool retry = false;
    try {
      lease.conn->ExecUnprepared("START TRANSACTION");
      began = true;
      fn(*lease.conn);
      lease.conn->ExecUnprepared("COMMIT");
      tx_commit_.Increment();
      lease.Return(true);
      return;
    } catch (const ConnectionLost& e) {
      NoteConnectionError(e.code(), e.what());
      lease.Return(false);
      if (began) tx_rollback_.Increment();
      // A pooled connection that died while idle, before anything ran: nothing was done, so
      // one fresh connection may try again.
      if (!began && lease.reused && !retried_stale) {
        retried_stale = true;
        --attempt;
        continue;
      }
      throw DatabaseUnavailable(std::string("database connection lost: ") + e.what());
    } catch (const DatabaseError& e) {
      const bool clean = ResetAfterError(*lease.conn);
      tx_rollback_.Increment();
      lease.Return(clean);
      if (IsRetryableTransactionError(e) && attempt <= kMaxTransactionRetries) {
        errors_deadlock_retry_.Increment();
        (e.code() == kDbErrorDeadlock ? retry_deadlock_ : retry_lock_wait_).Increment();
        logger_.Debug("transaction retried",
                      {{"code", e.code()}, {"attempt", attempt}});
        retry = true;
      } else if (IsRetryableTransactionError(e)) {
        retries_exhausted_.Increment();
        logger_.Warn("transaction aborted on every retry", {{"code", e.code()}, {"attempts", attempt}});
        throw DatabaseUnavailable(std::string("database busy: ") + e.what());
      } else {
        errors_other_.Increment();
        throw;
      }
    } catch (...) {
      const bool clean = ResetAfterError(*lease.conn);
      if (began) tx_rollback_.Increment();
      lease.Return(clean);
      throw;
    }
    if (retry) std::this_thread::sleep_for(RetryBackoff(attempt));
  }
}

}  // namespace rendezvous::core
