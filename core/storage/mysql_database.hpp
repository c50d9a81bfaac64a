// The host's Database: a bounded pool of MySQL Connector/C++ 1.1 connections (MariaDB 10.6+ or
// MySQL 8), with transactions that retry deadlocks and turn connection loss into
// DatabaseUnavailable. A transaction the server aborts (deadlock, lock wait timeout, and on a
// Galera cluster a certification conflict or a brute-force abort, all reported as deadlocks) is
// retried up to kMaxTransactionRetries times with jittered exponential back-off; when that budget
// runs out the caller gets DatabaseUnavailable (503), never the driver's error (500).
//
// Pool behaviour:
// - At most `pool_size` connections, opened lazily on demand. A caller waits at most
//   `acquire_timeout` for a free one, then gets DatabaseUnavailable ("pool exhausted").
// - Connections are never reconnected behind the caller's back (no OPT_RECONNECT: a silent
//   reconnect invalidates every prepared statement, error 1243). Instead a connection that shows
//   a connection-level error is discarded together with its statement cache; the next acquire
//   opens a fresh one. A connection that sat idle longer than a few seconds, or any connection
//   after some connection error was seen, is validated (ping) before it is handed out.
// - A dead server yields DatabaseUnavailable quickly: connect refused is immediate, and the
//   connect timeout is small. When the server returns, new connections simply work.
// - Every session runs with time_zone '+00:00', sql_mode including STRICT_ALL_TABLES,
//   READ COMMITTED isolation and utf8mb4.
//
// Callbacks passed to RunTransaction / RunAutocommit must not start or end transactions
// themselves (START TRANSACTION, COMMIT) and must not keep the connection beyond the call (rows
// are plain values and may be kept). Driver errors are mapped by MysqlConnection
// (mysql_connection.hpp): a lost connection is discarded and reported as DatabaseUnavailable. RunTransaction may call its callback several times (deadlock retry), so
// it must only have effects through the connection (or be idempotent).
//
// Thread-safety: all public members may be called from any thread. The object must outlive
// every borrowed connection; destroying it closes the idle connections.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"
#include "storage/mysql_connection.hpp"

namespace prometheus {
template <typename T>
class Family;
class Registry;
class Counter;
class Gauge;
class Histogram;
}  // namespace prometheus

namespace rendezvous::core {

struct DatabaseOptions {
  std::string host = "127.0.0.1";
  int port = 3306;
  std::string socket;  // when set, used instead of host/port
  std::string user = "rendezvous";
  std::string password;
  std::string name = "rendezvous";
  int pool_size = 8;
  std::chrono::seconds connect_timeout{2};
  std::chrono::seconds read_timeout{30};
  std::chrono::seconds write_timeout{30};
  std::chrono::milliseconds acquire_timeout{2000};  // waiting for a free connection
};

class MysqlDatabase final : public Database {
 public:
  // Opens no connection yet. `registry` and `logger` must outlive the object.
  MysqlDatabase(DatabaseOptions options, prometheus::Registry& registry, Logger& logger);
  ~MysqlDatabase() override;
  MysqlDatabase(const MysqlDatabase&) = delete;
  MysqlDatabase& operator=(const MysqlDatabase&) = delete;

  bool Ping() noexcept override;
  void RunTransaction(const std::function<void(DbConnection&)>& fn) override;
  void RunAutocommit(const std::function<void(DbConnection&)>& fn) override;

  const DatabaseOptions& options() const { return options_; }

 private:
  struct Lease;
  Lease Acquire();
  void Release(std::unique_ptr<MysqlConnection> conn, bool reusable);
  std::unique_ptr<MysqlConnection> Connect();
  // Called with the failing connection's error: counts it and makes other pooled connections
  // validate before their next use.
  void NoteConnectionError(int code, const char* message) noexcept;
  // ROLLBACK after a failed callback; false when the connection must be discarded.
  bool ResetAfterError(MysqlConnection& conn) noexcept;
  // On a Galera node, the node a new connection reached becomes db_cluster_node's 1, and the
  // session reads causally (wsrep_sync_wait = 1).
  void NoteClusterNode(MysqlConnection& conn) noexcept;
  void UpdateGaugesLocked();

  const DatabaseOptions options_;
  Logger& logger_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<MysqlConnection>> idle_;  // most recently used last
  int open_ = 0;       // idle + borrowed + being opened
  int borrowed_ = 0;
  uint64_t error_epoch_ = 0;  // bumped on every connection error

  prometheus::Gauge& idle_gauge_;
  prometheus::Gauge& in_use_gauge_;
  prometheus::Gauge& size_gauge_;
  prometheus::Histogram& acquire_wait_;
  prometheus::Counter& acquire_timeouts_;
  prometheus::Counter& errors_connection_;
  prometheus::Counter& errors_deadlock_retry_;
  prometheus::Counter& errors_other_;
  prometheus::Counter& retry_deadlock_;      // db_transaction_retries_total{cause="deadlock"}
  prometheus::Counter& retry_lock_wait_;     // ...{cause="lock_wait_timeout"}
  prometheus::Counter& retries_exhausted_;   // db_errors_total{kind="retries_exhausted"}
  prometheus::Family<prometheus::Gauge>& cluster_node_;  // db_cluster_node{wsrep_node_name}
  std::string cluster_node_name_;  // guarded by mu_
  prometheus::Gauge& ready_;       // db_ready: 1 after a success, 0 after a connection error
  prometheus::Counter& tx_commit_;
  prometheus::Counter& tx_rollback_;
};

}  // namespace rendezvous::core
