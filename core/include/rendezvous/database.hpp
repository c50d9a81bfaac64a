// The database as the host lends it: a pool of MySQL/MariaDB connections with transactions that
// retry deadlocks, and a small statement API over them. No driver type shows here: plugins bind
// typed values to `?` placeholders and read typed rows.
//
//   db.Transaction([&](DbConnection& conn) {
//     std::optional<DbRow> row = conn.QueryOne("SELECT id, name FROM t WHERE owner = ? FOR UPDATE", {owner});
//     if (!row) return;
//     conn.Exec("UPDATE t SET name = ? WHERE id = ?", {new_name, row->Int("id")});
//   });
//
// Thread-safety: Database is thread-safe (any thread may call Transaction()/Run()). A DbConnection
// is lent to one callback on one thread and must not be kept beyond it. DbValue and DbRow are
// plain values: copy them, keep them, share them read-only between threads.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace rendezvous {

// Thrown when no connection to the database can be had (server down, pool exhausted past its
// wait, connection lost during a call). The HTTP layer answers 503; background loops back off and
// retry.
class DatabaseUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Any other error the server reports for a statement (syntax, constraint, lock conflict, a SIGNAL
// from a procedure, ...). code() is the server's error number (e.g. 1452, a missing foreign row).
class DatabaseError : public std::runtime_error {
 public:
  DatabaseError(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

// A unique or primary key already holds the value (server error 1062): callers that insert
// user-chosen keys catch it and answer a conflict.
class DuplicateKey : public DatabaseError {
 public:
  using DatabaseError::DatabaseError;
};

// Server error numbers callers may test DatabaseError::code() against.
inline constexpr int kDbErrorDuplicateKey = 1062;
inline constexpr int kDbErrorNoReferencedRow = 1452;  // a foreign key names no row
inline constexpr int kDbErrorLockWaitTimeout = 1205;
inline constexpr int kDbErrorDeadlock = 1213;
inline constexpr int kDbErrorSignal = 1644;  // SIGNAL from a stored procedure
inline constexpr int kDbErrorParamsNotBound = 2031;  // not one value per placeholder (client side)

// One value bound to a `?` placeholder: NULL, an integer (bound as signed 64-bit), a double, a
// bool or a string (also binary data). Implicit from those types and from std::optional of them
// (empty binds NULL), so parameter lists read as `{id, name, std::optional<std::string>()}`.
class DbValue {
 public:
  using Variant = std::variant<std::monostate, int64_t, double, bool, std::string>;

  DbValue() = default;
  DbValue(std::nullptr_t) {}
  DbValue(std::nullopt_t) {}
  DbValue(bool v) : v_(v) {}
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  DbValue(T v) : v_(static_cast<int64_t>(v)) {}
  template <std::floating_point T>
  DbValue(T v) : v_(static_cast<double>(v)) {}
  DbValue(std::string v) : v_(std::move(v)) {}
  DbValue(std::string_view v) : v_(std::string(v)) {}
  DbValue(const char* v) : v_(std::string(v)) {}
  template <class T>
  DbValue(const std::optional<T>& v) {
    if (v) *this = DbValue(*v);
  }

  bool is_null() const { return std::holds_alternative<std::monostate>(v_); }
  const Variant& value() const { return v_; }

 private:
  Variant v_;
};

// A list of parameters for one statement, bound in order to its `?` placeholders. Views the
// values: build it in the call (`{a, b}`) or from a vector that outlives the call.
class DbParams {
 public:
  DbParams() = default;
  DbParams(std::initializer_list<DbValue> values) : list_(values) {}
  DbParams(const std::vector<DbValue>& values) : vector_(&values) {}

  const DbValue* begin() const { return vector_ ? vector_->data() : list_.begin(); }
  const DbValue* end() const { return begin() + size(); }
  size_t size() const { return vector_ ? vector_->size() : list_.size(); }

 private:
  std::initializer_list<DbValue> list_;
  const std::vector<DbValue>* vector_ = nullptr;
};

// The column names of a result, shared by its rows.
struct DbColumns {
  std::vector<std::string> names;
};

// One row of a result, read by column: a 1-based index (as in SQL, in SELECT order) or the
// column's name (its alias when it has one). A column that is neither throws std::out_of_range
// (a programming error). Values convert as MySQL's client does: Int() of "42" is 42, String() of
// 42 is "42", Bool() is "not zero"; date, time and DECIMAL columns read as the driver's text
// (a DATETIME(3) as "2025-01-31 09:00:00.123000"). The plain getters read NULL as 0, false or "";
// the Opt getters as nullopt.
class DbRow {
 public:
  using Cell = std::variant<std::monostate, int64_t, double, std::string>;

  DbRow(std::shared_ptr<const DbColumns> columns, std::vector<Cell> cells)
      : columns_(std::move(columns)), cells_(std::move(cells)) {}

  size_t size() const { return cells_.size(); }
  bool IsNull(int column) const { return std::holds_alternative<std::monostate>(At(column)); }
  bool IsNull(std::string_view column) const { return IsNull(IndexOf(column)); }

  int64_t Int(int column) const;
  double Double(int column) const;
  bool Bool(int column) const { return Int(column) != 0; }
  std::string String(int column) const;
  std::optional<int64_t> OptInt(int column) const;
  std::optional<double> OptDouble(int column) const;
  std::optional<bool> OptBool(int column) const;
  std::optional<std::string> OptString(int column) const;

  int64_t Int(std::string_view column) const { return Int(IndexOf(column)); }
  double Double(std::string_view column) const { return Double(IndexOf(column)); }
  bool Bool(std::string_view column) const { return Bool(IndexOf(column)); }
  std::string String(std::string_view column) const { return String(IndexOf(column)); }
  std::optional<int64_t> OptInt(std::string_view column) const { return OptInt(IndexOf(column)); }
  std::optional<double> OptDouble(std::string_view column) const { return OptDouble(IndexOf(column)); }
  std::optional<bool> OptBool(std::string_view column) const { return OptBool(IndexOf(column)); }
  std::optional<std::string> OptString(std::string_view column) const { return OptString(IndexOf(column)); }

  // The 1-based index of the column named `name`.
  int IndexOf(std::string_view name) const;

 private:
  const Cell& At(int column) const;

  std::shared_ptr<const DbColumns> columns_;
  std::vector<Cell> cells_;
};

// One borrowed connection, lent to a Transaction()/Run() callback. Not thread-safe; never kept
// beyond the callback.
//
// Statements are prepared once per connection and cached by their text (re-prepared after a
// reconnect): build statement text from constants, and pass values as parameters. Every call
// throws DuplicateKey or DatabaseError for what the server refuses and DatabaseUnavailable when
// the connection is lost; a callback that catches DatabaseError should only act on the codes it
// expects and rethrow the rest (the transaction helper retries deadlocks by catching them).
class DbConnection {
 public:
  virtual ~DbConnection() = default;

  // Runs a statement that returns no rows; returns the affected rows.
  uint64_t Exec(std::string_view sql, DbParams params = {}) { return Run(sql, params, Mode::kPrepared, nullptr, 0); }
  // Runs a query; returns all its rows. A `CALL` of a procedure that selects rows returns those of
  // its first result (one result per procedure: the rest are read and dropped).
  std::vector<DbRow> Query(std::string_view sql, DbParams params = {}) {
    std::vector<DbRow> rows;
    Run(sql, params, Mode::kPrepared, &rows, kAllRows);
    return rows;
  }
  // The first row of a query, if any (later rows are dropped unread: add LIMIT 1 when many may
  // match, so the server does not send them).
  std::optional<DbRow> QueryOne(std::string_view sql, DbParams params = {}) {
    std::vector<DbRow> rows;
    Run(sql, params, Mode::kPrepared, &rows, 1);
    if (rows.empty()) return std::nullopt;
    return std::move(rows.front());
  }

  // A query whose columns are all integers (NULL reads as 0): appends its values to `out`, row
  // after row, with no object per row (for reads of thousands of rows).
  void QueryInts(std::string_view sql, DbParams params, std::vector<int64_t>& out) { RunInts(sql, params, out); }

  // Inserts several rows in one statement: `insert` is the head ("INSERT INTO t (a, b)"), each
  // row binds one value per placeholder, `tail` may add e.g. " ON DUPLICATE KEY UPDATE b =
  // VALUES(b)". Builds "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)" for the number of rows (cached
  // like any statement, one per row count). `row` replaces the text of one row when some columns
  // are computed, e.g. "(?, ?, UTC_TIMESTAMP(3))"; its `?` count must match. Every row must have
  // as many values as the first (else std::invalid_argument); no rows: no statement, 0. Returns
  // the affected rows; LastInsertId() is then the first new row's id.
  uint64_t InsertRows(std::string_view insert, const std::vector<std::vector<DbValue>>& rows,
                      std::string_view tail = {}, std::string_view row = {});

  // The same without preparing: the text goes to the server as is, nothing is cached. For
  // statements that cannot be prepared (CREATE PROCEDURE, ...) or whose text changes from call to
  // call (an IN list of ids read from the database). Never splice outside input into `sql`.
  uint64_t ExecUnprepared(std::string_view sql) { return Run(sql, {}, Mode::kUnprepared, nullptr, 0); }
  std::vector<DbRow> QueryUnprepared(std::string_view sql) {
    std::vector<DbRow> rows;
    Run(sql, {}, Mode::kUnprepared, &rows, kAllRows);
    return rows;
  }

  // A transaction's write of a row that racing transactions all take as their lock (a host's
  // booking lock): run it first in the transaction, otherwise it runs like Exec. On a Galera
  // cluster the host replicates this one statement at once (a streaming replication fragment), so
  // the row is locked on every node before the rest of the transaction runs: a racing transaction
  // on another node waits for it, or is aborted at this statement, cheaply, instead of being
  // aborted at commit after all its work.
  uint64_t ExecLock(std::string_view sql, DbParams params = {}) {
    return Run(sql, params, Mode::kLock, nullptr, 0);
  }

  // LAST_INSERT_ID() of this connection: the first AUTO_INCREMENT id of the last insert.
  virtual int64_t LastInsertId() = 0;

  // An INSERT of one row that answers `column` of the row it wrote (its AUTO_INCREMENT id, or what
  // its ON DUPLICATE KEY UPDATE set): in the statement itself where the server has INSERT …
  // RETURNING (MariaDB), else by LastInsertId() after it, so `column` must then be what
  // LAST_INSERT_ID() holds (the id, or the `LAST_INSERT_ID(expr)` the statement set). `lock`: the
  // insert is the transaction's lock row (ExecLock). One round trip instead of two.
  int64_t InsertReturning(std::string_view sql, DbParams params, std::string_view column = "id",
                          bool lock = false) {
    const Mode mode = lock ? Mode::kLock : Mode::kPrepared;
    if (!Returns(mode)) {
      Run(sql, params, mode, nullptr, 0);
      return LastInsertId();
    }
    std::string text(sql);
    text += " RETURNING ";
    text += column;
    std::vector<DbRow> rows;
    Run(text, params, mode, &rows, 1);
    return rows.empty() ? 0 : rows.front().Int(1);
  }

 protected:
  // kLock: a prepared statement run as ExecLock says.
  enum class Mode { kPrepared, kUnprepared, kLock };
  static constexpr size_t kAllRows = static_cast<size_t>(-1);
  // Whether a statement run in `mode` may end with RETURNING and hand its rows back.
  virtual bool Returns(Mode /*mode*/) const { return false; }
  // The one primitive the host implements. Runs `sql` with `params` (none when kUnprepared). When
  // `rows` is set the statement is a query and up to `max_rows` of its rows are appended there.
  // Returns the affected rows (0 for a query).
  virtual uint64_t Run(std::string_view sql, DbParams params, Mode mode, std::vector<DbRow>* rows,
                       size_t max_rows) = 0;
  // QueryInts; a host may read the driver's values straight into `out`.
  virtual void RunInts(std::string_view sql, DbParams params, std::vector<int64_t>& out) {
    std::vector<DbRow> rows;
    Run(sql, params, Mode::kPrepared, &rows, kAllRows);
    for (const DbRow& row : rows) {
      for (size_t i = 1; i <= row.size(); ++i) out.push_back(row.Int(static_cast<int>(i)));
    }
  }
};

class Database {
 public:
  virtual ~Database() = default;

  // Runs fn(conn) inside a transaction (READ COMMITTED) and commits. Rolls back when fn throws
  // and rethrows. A deadlock (1213) or lock wait timeout (1205) retries fn, a few times, so fn
  // must only have effects through the connection (or be idempotent). Connection loss throws
  // DatabaseUnavailable. fn must not start or end transactions itself.
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
