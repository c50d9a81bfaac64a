#include "storage/mysql_connection.hpp"

#include <utility>

#include <cppconn/connection.h>
#include <cppconn/datatype.h>
#include <cppconn/exception.h>
#include <cppconn/metadata.h>
#include <cppconn/parameter_metadata.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/resultset_metadata.h>
#include <cppconn/statement.h>

namespace rendezvous::core {
namespace {

constexpr size_t kMaxCachedStatements = 256;

enum class Kind { kInt, kUnsigned, kDouble, kText };

// How a result's columns are read: integers and doubles by value (so no text round trip), every
// other type (DECIMAL, dates, strings, blobs) as the driver's text.
struct Shape {
  std::shared_ptr<const DbColumns> columns;
  std::vector<Kind> kinds;
};

Shape ShapeOf(sql::ResultSet& rs) {
  sql::ResultSetMetaData* md = rs.getMetaData();
  const unsigned n = md->getColumnCount();
  auto columns = std::make_shared<DbColumns>();
  Shape shape;
  columns->names.reserve(n);
  shape.kinds.reserve(n);
  for (unsigned i = 1; i <= n; ++i) {
    columns->names.push_back(md->getColumnLabel(i).asStdString());
    switch (md->getColumnType(i)) {
      case sql::DataType::TINYINT:
      case sql::DataType::SMALLINT:
      case sql::DataType::MEDIUMINT:
      case sql::DataType::INTEGER:
      case sql::DataType::BIGINT:
        shape.kinds.push_back(md->isSigned(i) ? Kind::kInt : Kind::kUnsigned);
        break;
      case sql::DataType::REAL:
      case sql::DataType::DOUBLE:
        shape.kinds.push_back(Kind::kDouble);
        break;
      default:
        shape.kinds.push_back(Kind::kText);
    }
  }
  shape.columns = std::move(columns);
  return shape;
}

void ReadRows(sql::ResultSet& rs, const Shape& shape, std::vector<DbRow>& out, size_t max_rows) {
  const size_t n = shape.kinds.size();
  for (size_t taken = 0; taken < max_rows && rs.next(); ++taken) {
    std::vector<DbRow::Cell> cells(n);
    for (size_t i = 0; i < n; ++i) {
      const auto col = static_cast<unsigned>(i + 1);
      if (rs.isNull(col)) continue;
      switch (shape.kinds[i]) {
        case Kind::kInt:
          cells[i] = static_cast<int64_t>(rs.getInt64(col));
          break;
        case Kind::kUnsigned:
          cells[i] = static_cast<int64_t>(rs.getUInt64(col));
          break;
        case Kind::kDouble:
          cells[i] = static_cast<double>(rs.getDouble(col));
          break;
        case Kind::kText:
          cells[i] = rs.getString(col).asStdString();
          break;
      }
    }
    out.emplace_back(shape.columns, std::move(cells));
  }
}

void Bind(sql::PreparedStatement& ps, DbParams params) {
  unsigned i = 1;
  for (const DbValue& p : params) {
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::monostate>) {
            ps.setNull(i, 0);
          } else if constexpr (std::is_same_v<T, int64_t>) {
            ps.setInt64(i, v);
          } else if constexpr (std::is_same_v<T, double>) {
            ps.setDouble(i, v);
          } else if constexpr (std::is_same_v<T, bool>) {
            ps.setBoolean(i, v);
          } else {
            ps.setString(i, v);
          }
        },
        p.value());
    ++i;
  }
}

[[noreturn]] void Translate(const sql::SQLException& e) {
  const int code = e.getErrorCode();
  if (IsConnectionErrorCode(code)) throw ConnectionLost(code, e.what());
  if (code == kDbErrorDuplicateKey) throw DuplicateKey(code, e.what());
  throw DatabaseError(code, e.what());
}

}  // namespace

bool IsConnectionErrorCode(int code) noexcept {
  switch (code) {
    case 1040:  // ER_CON_COUNT_ERROR
    case 1043:  // ER_HANDSHAKE_ERROR
    case 1047:  // WSREP not ready: a Galera node outside the primary component serves no query
    case 1053:  // ER_SERVER_SHUTDOWN
    case 1081:  // ER_IPSOCK_ERROR
    case 1152:  // ER_ABORTING_CONNECTION
    case 1158:  // ER_NET_READ_ERROR
    case 1159:  // ER_NET_READ_INTERRUPTED
    case 1160:  // ER_NET_ERROR_ON_WRITE
    case 1161:  // ER_NET_WRITE_INTERRUPTED
    case 1184:  // ER_NEW_ABORTING_CONNECTION
    case 1243:  // ER_UNKNOWN_STMT_HANDLER: the statement cache no longer matches the session
    case 1927:  // ER_CONNECTION_KILLED (MariaDB)
    case 2001:  // CR_SOCKET_CREATE_ERROR
    case 2002:  // CR_CONNECTION_ERROR
    case 2003:  // CR_CONN_HOST_ERROR
    case 2004:  // CR_IPSOCK_ERROR
    case 2005:  // CR_UNKNOWN_HOST
    case 2006:  // CR_SERVER_GONE_ERROR
    case 2011:  // CR_TCP_CONNECTION
    case 2012:  // CR_SERVER_HANDSHAKE_ERR
    case 2013:  // CR_SERVER_LOST
    case 2014:  // CR_COMMANDS_OUT_OF_SYNC: protocol state unknown
    case 2026:  // CR_SSL_CONNECTION_ERROR
    case 2048:  // CR_CONN_UNKNOW_PROTOCOL
    case 2055:  // CR_SERVER_LOST_EXTENDED
    case 4031:  // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8)
      return true;
    default:
      return false;
  }
}

bool ServerHasReturning(std::string_view version) {
  // MariaDB's replication prefix, sent to clients that predate MariaDB 10: "5.5.5-10.11.6-MariaDB".
  if (version.rfind("5.5.5-", 0) == 0) version.remove_prefix(6);
  if (version.find("MariaDB") == std::string_view::npos) return false;
  int major = 0;
  int minor = 0;
  size_t at = 0;
  for (; at < version.size() && version[at] >= '0' && version[at] <= '9'; ++at)
    major = major * 10 + (version[at] - '0');
  if (at == 0 || at >= version.size() || version[at] != '.') return false;
  const size_t minor_at = ++at;
  for (; at < version.size() && version[at] >= '0' && version[at] <= '9'; ++at)
    minor = minor * 10 + (version[at] - '0');
  if (at == minor_at) return false;
  return major > 10 || (major == 10 && minor >= 5);
}

bool IsRetryableTransactionError(const DatabaseError& e) noexcept {
  return e.code() == kDbErrorDeadlock || e.code() == kDbErrorLockWaitTimeout;
}

struct MysqlConnection::Cached {
  std::unique_ptr<sql::PreparedStatement> ps;
  std::optional<Shape> shape;  // learnt from the first result
  // A CALL: the procedure's rows are followed by its own status, which must be read before the
  // connection runs anything else.
  bool call = false;
  // Its placeholders. Every run binds each of them again (Connector/C++ replaces a parameter's
  // buffer when it is set), so a cached statement is not cleared between runs: clearing frees and
  // the next run allocates every parameter's buffer again, hundreds for a multi-row insert.
  size_t params = 0;
};

MysqlConnection::MysqlConnection(std::unique_ptr<sql::Connection> raw) : raw_(std::move(raw)) {
  // MariaDB has had INSERT … RETURNING since 10.5; MySQL has none. The version is the one the
  // server announced when the connection opened: no query.
  try {
    returning_ = ServerHasReturning(std::string(raw_->getMetaData()->getDatabaseProductVersion()));
  } catch (const sql::SQLException&) {
    returning_ = false;
  }
}

MysqlConnection::~MysqlConnection() {
  // Statements belong to the connection: free them before closing it.
  stmts_.clear();
  plain_.reset();
  try {
    raw_->close();
  } catch (...) {
  }
}

MysqlConnection::Cached& MysqlConnection::Prepare(std::string_view sql) {
  std::string key(sql);
  auto it = stmts_.find(key);
  if (it != stmts_.end()) return *it->second;
  auto cached = std::make_unique<Cached>();
  cached->ps.reset(raw_->prepareStatement(key));
  // The metadata belongs to the statement.
  cached->params = static_cast<size_t>(cached->ps->getParameterMetaData()->getParameterCount());
  cached->call = key.size() > 5 && (key.compare(0, 5, "CALL ") == 0 || key.compare(0, 5, "call ") == 0);
  return *stmts_.emplace(std::move(key), std::move(cached)).first->second;
}

void MysqlConnection::BindAll(Cached& st, DbParams params) {
  // Each placeholder bound on every run (a value left from an earlier run is never sent).
  if (params.size() != st.params) {
    throw DatabaseError(kDbErrorParamsNotBound, "the statement has " + std::to_string(st.params) +
                                                    " placeholders; " + std::to_string(params.size()) +
                                                    " values were given");
  }
  Bind(*st.ps, params);
}

uint64_t MysqlConnection::Run(std::string_view sql, DbParams params, Mode mode, std::vector<DbRow>* rows,
                              size_t max_rows) {
  try {
    if (mode == Mode::kUnprepared) {
      if (!plain_) plain_.reset(raw_->createStatement());
      const std::string text(sql);
      if (rows == nullptr) return static_cast<uint64_t>(plain_->executeUpdate(text));
      std::unique_ptr<sql::ResultSet> rs(plain_->executeQuery(text));
      ReadRows(*rs, ShapeOf(*rs), *rows, max_rows);
      return 0;
    }
    Cached& st = Prepare(sql);
    BindAll(st, params);
    if (mode == Mode::kLock && replicate_locks_) return ExecReplicated(*st.ps);
    if (rows == nullptr) return static_cast<uint64_t>(st.ps->executeUpdate());
    std::unique_ptr<sql::ResultSet> rs(st.ps->executeQuery());
    // The shape is learnt once per statement; a table altered since (tests, migrations) shows as
    // another column count.
    if (!st.shape || st.shape->kinds.size() != rs->getMetaData()->getColumnCount()) st.shape = ShapeOf(*rs);
    ReadRows(*rs, *st.shape, *rows, max_rows);
    if (st.call) {
      rs.reset();
      while (st.ps->getMoreResults()) std::unique_ptr<sql::ResultSet>(st.ps->getResultSet()).reset();
    }
    return 0;
  } catch (const sql::SQLException& e) {
    Translate(e);
  }
}

// The statement is one fragment of its own: replicated, certified and applied on every node (the
// row locked there) before it returns. Streaming is switched off again at once, so the rest of the
// transaction replicates at commit as usual. A session left streaming would replicate every later
// statement: when switching off fails the connection is given up.
uint64_t MysqlConnection::ExecReplicated(sql::PreparedStatement& ps) {
  if (!plain_) plain_.reset(raw_->createStatement());
  plain_->execute("SET SESSION wsrep_trx_fragment_size = 1");
  uint64_t affected = 0;
  try {
    affected = static_cast<uint64_t>(ps.executeUpdate());
  } catch (const sql::SQLException&) {
    StopStreaming();
    throw;
  }
  StopStreaming();
  return affected;
}

void MysqlConnection::StopStreaming() {
  try {
    plain_->execute("SET SESSION wsrep_trx_fragment_size = 0");
  } catch (const sql::SQLException& e) {
    throw ConnectionLost(e.getErrorCode(), std::string("could not end streaming replication: ") + e.what());
  }
}

void MysqlConnection::RunInts(std::string_view sql, DbParams params, std::vector<int64_t>& out) {
  try {
    Cached& st = Prepare(sql);
    BindAll(st, params);
    std::unique_ptr<sql::ResultSet> rs(st.ps->executeQuery());
    const unsigned n = rs->getMetaData()->getColumnCount();
    out.reserve(out.size() + rs->rowsCount() * n);
    while (rs->next()) {
      for (unsigned col = 1; col <= n; ++col) out.push_back(static_cast<int64_t>(rs->getInt64(col)));
    }
  } catch (const sql::SQLException& e) {
    Translate(e);
  }
}

int64_t MysqlConnection::LastInsertId() {
  std::optional<DbRow> row = QueryOne("SELECT LAST_INSERT_ID()");
  return row ? row->Int(1) : 0;
}

bool MysqlConnection::Validate() noexcept {
  try {
    return raw_->isValid();
  } catch (...) {
    return false;
  }
}

void MysqlConnection::TrimStatementCache() {
  if (stmts_.size() > kMaxCachedStatements) stmts_.clear();
}

}  // namespace rendezvous::core
