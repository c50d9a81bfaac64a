// The database as the host lends it: a pool of MySQL connections (Connector/C++ 1.1), with
// transactions that retry deadlocks. Thread-safe: any thread may call Transaction()/Run().
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <stdexcept>
#include <string>
#include <utility>

namespace sql {
class Connection;
class PreparedStatement;
class ResultSet;
}  // namespace sql

namespace rendezvous {

// Thrown when no connection to the database can be had (server down, pool exhausted past its
// wait). The HTTP layer answers 503; background loops back off and retry.
class DatabaseUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One borrowed connection. Not thread-safe: used by one thread between acquire and release.
class DbConnection {
 public:
  virtual ~DbConnection() = default;
  // A prepared statement cached on this connection (re-prepared after a reconnect). Parameters
  // are cleared on each call. The pointer stays valid while the connection is borrowed.
  virtual sql::PreparedStatement& Prepare(const std::string& sql) = 0;
  // Runs a statement that returns no rows; returns affected rows.
  virtual uint64_t Execute(const std::string& sql) = 0;
  // LAST_INSERT_ID() of this connection.
  virtual int64_t LastInsertId() = 0;
  virtual sql::Connection& Raw() = 0;
};

class Database {
 public:
  virtual ~Database() = default;

  // Runs fn(conn) inside a transaction (READ COMMITTED) and commits. Rolls back when fn throws
  // and rethrows. A deadlock (1213) or lock wait timeout (1205) retries fn, a few times.
  // Connection loss throws DatabaseUnavailable.
  template <class F>
  auto Transaction(F&& fn) -> decltype(fn(std::declval<DbConnection&>())) {
    using R = decltype(fn(std::declval<DbConnection&>()));
    if constexpr (std::is_void_v<R>) {
      RunTransaction([&](DbConnection& c) { fn(c); });
    } else {
      std::optional<R> out;
      RunTransaction([&](DbConnection& c) { out.emplace(fn(c)); });
      return std::move(*out);
    }
  }

  // Runs fn(conn) in autocommit mode (single statements, reads).
  template <class F>
  auto Run(F&& fn) -> decltype(fn(std::declval<DbConnection&>())) {
    using R = decltype(fn(std::declval<DbConnection&>()));
    if constexpr (std::is_void_v<R>) {
      RunAutocommit([&](DbConnection& c) { fn(c); });
    } else {
      std::optional<R> out;
      RunAutocommit([&](DbConnection& c) { out.emplace(fn(c)); });
      return std::move(*out);
    }
  }

  // True when a connection can be had and answers a ping (for /readyz). Never throws.
  virtual bool Ping() noexcept = 0;

  virtual void RunTransaction(const std::function<void(DbConnection&)>& fn) = 0;
  virtual void RunAutocommit(const std::function<void(DbConnection&)>& fn) = 0;
};

// A versioned migration of one plugin (or of "core"). Applied in version order, once.
struct Migration {
  int version = 0;
  std::string name;
  std::string sql;  // one or more statements separated by ";\n"
};

}  // namespace rendezvous
