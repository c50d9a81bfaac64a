// One Connector/C++ 1.1 connection behind the public DbConnection: binds DbValues, reads rows into
// DbRows, caches prepared statements by their text, and maps the driver's errors once, here:
// connection-level errors become ConnectionLost (a DatabaseUnavailable), 1062 DuplicateKey, the
// rest DatabaseError with the server's code. Used by MysqlDatabase's pool; not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rendezvous/database.hpp"

namespace sql {
class Connection;
class PreparedStatement;
class Statement;
}  // namespace sql

namespace rendezvous::core {

// The connection is gone or unusable (server gone or lost, killed, shut down, ...): it must be
// discarded. Callers see it as DatabaseUnavailable.
class ConnectionLost : public DatabaseUnavailable {
 public:
  ConnectionLost(int code, const std::string& message) : DatabaseUnavailable(message), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

// True for driver/server error numbers that mean the connection is gone or unusable.
bool IsConnectionErrorCode(int code) noexcept;
// Deadlock (1213) or lock wait timeout (1205): the transaction may be retried.
bool IsRetryableTransactionError(const DatabaseError& e) noexcept;

// Whether a server announcing `version` (its handshake's version string) runs INSERT … RETURNING:
// MariaDB from 10.5.
bool ServerHasReturning(std::string_view version);

class MysqlConnection final : public DbConnection {
 public:
  explicit MysqlConnection(std::unique_ptr<sql::Connection> raw);
  ~MysqlConnection() override;
  MysqlConnection(const MysqlConnection&) = delete;
  MysqlConnection& operator=(const MysqlConnection&) = delete;

  int64_t LastInsertId() override;

  // On a Galera node: ExecLock replicates its statement at once (one streaming replication
  // fragment; wsrep_trx_fragment_unit must be 'statements').
  void set_replicate_locks(bool on) { replicate_locks_ = on; }

  // Whether the server still answers (no exception).
  bool Validate() noexcept;
  // Drops the statement cache when it grew past its bound. Only between borrows.
  void TrimStatementCache();

  std::chrono::steady_clock::time_point last_used = std::chrono::steady_clock::now();
  uint64_t validated_epoch = 0;

 protected:
  bool Returns(Mode mode) const override { return returning_ && !(mode == Mode::kLock && replicate_locks_); }
  uint64_t Run(std::string_view sql, DbParams params, Mode mode, std::vector<DbRow>* rows,
               size_t max_rows) override;
  void RunInts(std::string_view sql, DbParams params, std::vector<int64_t>& out) override;

 private:
  struct Cached;
  Cached& Prepare(std::string_view sql);
  // Binds `params` to the cached statement: exactly one value per placeholder, else DatabaseError.
  static void BindAll(Cached& st, DbParams params);
  uint64_t ExecReplicated(sql::PreparedStatement& ps);
  void StopStreaming();

  std::unique_ptr<sql::Connection> raw_;
  std::unique_ptr<sql::Statement> plain_;
  std::unordered_map<std::string, std::unique_ptr<Cached>> stmts_;
  bool replicate_locks_ = false;
  bool returning_ = false;  // the server runs INSERT … RETURNING
};

}  // namespace rendezvous::core
