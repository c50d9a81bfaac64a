#include "storage/migrator.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>

#include <unistd.h>

#include <openssl/evp.h>

#include "storage/mysql_database.hpp"

namespace rendezvous::core {
namespace {

constexpr size_t kMaxOwnerLength = 128;
constexpr size_t kMaxNameLength = 255;

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

bool OnlyComments(const std::string& statement) {
  size_t pos = 0;
  while (pos < statement.size()) {
    auto end = statement.find('\n', pos);
    if (end == std::string::npos) end = statement.size();
    const std::string line = Trim(statement.substr(pos, end - pos));
    if (!line.empty() && line.rfind("--", 0) != 0 && line[0] != '#') return false;
    pos = end + 1;
  }
  return true;
}

void CreateTable(DbConnection& c) {
  c.ExecUnprepared(
      "CREATE TABLE IF NOT EXISTS schema_migrations ("
      " owner VARCHAR(128) NOT NULL,"
      " version INT NOT NULL,"
      " name VARCHAR(255) NOT NULL,"
      " checksum CHAR(64) NOT NULL,"
      " applied_at DATETIME(3) NOT NULL,"
      " PRIMARY KEY (owner, version)"
      ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci");
}

// The cluster-wide half of the migration lock: one row, taken by an INSERT of its primary key.
// Named locks (GET_LOCK) hold on one server only; on a Galera cluster two nodes would both grant
// them. Two INSERTs of the same key on different nodes cannot both commit: certification aborts
// one (error 1213), or it finds the other's row (1062). DDL commits implicitly, so the lock is a
// row that outlives transactions, not a row lock; a holder that died leaves it behind, and it is
// taken over once its heartbeat (refreshed before each migration) is older than kLockStale, or
// at once by a migrator on the same server: that one holds the server's GET_LOCK, so the row's
// holder has lost its session there (on a single server a crashed `migrate` blocks nothing).
constexpr auto kLockWait = std::chrono::seconds(60);
constexpr int kLockStaleSeconds = 600;

// On Galera a statement can be aborted by another node's replicated DDL (1213, brute-force
// abort); an aborted autocommit statement did nothing, so it runs again (bounded).
template <class F>
auto UnlessAborted(F&& fn) -> decltype(fn()) {
  for (int attempt = 1;; ++attempt) {
    try {
      return fn();
    } catch (const DatabaseError& e) {
      if (!IsRetryableTransactionError(e) || attempt >= 10) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20 * attempt));
  }
}

void CreateLockTable(DbConnection& c) {
  // Only when missing: on Galera even a no-op DDL runs cluster-wide and aborts the statements
  // of the migrator holding the lock that touch the table.
  std::optional<DbRow> row = c.QueryOne(
      "SELECT COUNT(*) FROM information_schema.tables"
      " WHERE table_schema = DATABASE() AND table_name = 'schema_migrations_lock'");
  if (row && row->Int(1) > 0) return;
  c.ExecUnprepared(
      "CREATE TABLE IF NOT EXISTS schema_migrations_lock ("
      " id TINYINT UNSIGNED NOT NULL,"
      " holder VARCHAR(128) NOT NULL,"
      " node VARCHAR(128) NOT NULL,"
      " heartbeat_at DATETIME(3) NOT NULL,"
      " PRIMARY KEY (id)"
      ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci");
}

std::string LockHolder() {
  char host[64] = {0};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = 0;
  std::random_device rd;
  return std::string(host) + ":" + std::to_string(getpid()) + ":" + std::to_string(rd());
}

void TakeClusterLock(DbConnection& c, const std::string& holder) {
  const auto deadline = std::chrono::steady_clock::now() + kLockWait;
  std::mt19937 rng{std::random_device{}()};
  std::uniform_int_distribution<int> pause_ms(50, 250);
  for (;;) {
    try {
      c.Exec("INSERT INTO schema_migrations_lock (id, holder, node, heartbeat_at)"
             " VALUES (1, ?, CONCAT(@@hostname, ':', @@port), UTC_TIMESTAMP(3))",
             {holder});
      return;
    } catch (const DatabaseError& e) {
      if (!IsRetryableTransactionError(e) && e.code() != kDbErrorDuplicateKey) throw;
    }
    UnlessAborted([&] {
      return c.Exec("DELETE FROM schema_migrations_lock WHERE id = 1"
           " AND (node = CONCAT(@@hostname, ':', @@port)"
           " OR heartbeat_at < UTC_TIMESTAMP(3) - INTERVAL " + std::to_string(kLockStaleSeconds) + " SECOND)");
    });
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string who;
      if (auto row = c.QueryOne("SELECT holder, heartbeat_at FROM schema_migrations_lock WHERE id = 1")) {
        who = " (held by " + row->String(1) + " since " + row->String(2) + " UTC)";
      }
      throw std::runtime_error("could not take the migration lock within 60 s" + who +
                               "; another instance is migrating, or one died while migrating:"
                               " its lock expires " + std::to_string(kLockStaleSeconds / 60) +
                               " minutes after its last heartbeat");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(rng)));
  }
}

void HeartbeatClusterLock(DbConnection& c, const std::string& holder) {
  if (UnlessAborted([&] {
        return c.Exec("UPDATE schema_migrations_lock SET heartbeat_at = UTC_TIMESTAMP(3) WHERE id = 1 AND holder = ?",
                      {holder});
      }) == 0) {
    // MariaDB reports changed rows: a heartbeat within the same millisecond changes nothing.
    if (!c.QueryOne("SELECT 1 FROM schema_migrations_lock WHERE id = 1 AND holder = ?", {holder})) {
      throw std::runtime_error("the migration lock was taken over (this migration stalled for over " +
                               std::to_string(kLockStaleSeconds / 60) + " minutes)");
    }
  }
}

using Applied = std::map<std::pair<std::string, int>, std::string>;  // (owner, version) -> checksum

Applied ReadApplied(DbConnection& c) {
  Applied out;
  for (const DbRow& row : c.Query("SELECT owner, version, checksum FROM schema_migrations")) {
    out[{row.String(1), static_cast<int>(row.Int(2))}] = row.String(3);
  }
  return out;
}

bool TableExists(DbConnection& c) {
  std::optional<DbRow> row = c.QueryOne(
      "SELECT COUNT(*) FROM information_schema.tables"
      " WHERE table_schema = DATABASE() AND table_name = 'schema_migrations'");
  return row && row->Int(1) > 0;
}

nlohmann::json Entry(const std::string& owner, const Migration& m) {
  return {{"owner", owner}, {"version", m.version}, {"name", m.name}};
}

std::string Describe(const std::string& owner, const Migration& m) {
  return "migration " + owner + " v" + std::to_string(m.version) + " (" + m.name + ")";
}

}  // namespace

namespace {

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// `CREATE [DEFINER=...] PROCEDURE|FUNCTION` at the start of a statement being collected (after
// any leading comment lines).
bool StartsRoutine(const std::string& statement) {
  static const std::regex kRoutine(R"(^\s*CREATE\s+(DEFINER\s*=\s*\S+\s+)?(PROCEDURE|FUNCTION)\s)",
                                   std::regex::icase);
  size_t pos = 0;
  for (;;) {
    while (pos < statement.size() && std::isspace(static_cast<unsigned char>(statement[pos]))) ++pos;
    if (statement.compare(pos, 2, "--") != 0 && statement.compare(pos, 1, "#") != 0) break;
    const size_t nl = statement.find('\n', pos);
    if (nl == std::string::npos) return false;
    pos = nl + 1;
  }
  return std::regex_search(statement.substr(pos, 200), kRoutine);
}

}  // namespace

std::vector<std::string> SplitStatements(const std::string& sql) {
  std::vector<std::string> out;
  std::string current;
  auto flush = [&] {
    std::string s = Trim(current);
    current.clear();
    if (!s.empty() && !OnlyComments(s)) out.push_back(std::move(s));
  };
  size_t pos = 0;
  while (pos <= sql.size()) {
    auto end = sql.find('\n', pos);
    const bool last = end == std::string::npos;
    if (last) end = sql.size();
    std::string line = sql.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto tail = line.find_last_not_of(" \t");
    // A stored routine's body has statements of its own: it ends only at a line `END;`.
    const bool in_routine = StartsRoutine(current);
    const bool ends = tail != std::string::npos && line[tail] == ';' &&
                      (!in_routine || Upper(Trim(line)) == "END;");
    if (ends) {
      current += line.substr(0, tail);
      flush();
    } else {
      current += line;
      current += '\n';
    }
    if (last) break;
    pos = end + 1;
  }
  flush();
  return out;
}

std::string MigrationChecksum(const std::string& sql) {
  std::string joined;
  for (const auto& s : SplitStatements(sql)) {
    if (!joined.empty()) joined += ";\n";
    joined += s;
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(joined.data(), joined.size(), digest, &len, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 failed");
  }
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  return hex;
}

Migrator::Migrator(Database& db, Logger& logger) : db_(db), logger_(logger) {}

void Migrator::Add(const std::string& owner, std::vector<Migration> migrations) {
  if (owner.empty() || owner.size() > kMaxOwnerLength) {
    throw std::invalid_argument("migration owner must have 1 to 128 characters");
  }
  for (const auto& o : owners_) {
    if (o.name == owner) throw std::invalid_argument("migrations of '" + owner + "' added twice");
  }
  std::set<int> versions;
  for (const auto& m : migrations) {
    if (m.version < 1) throw std::invalid_argument(Describe(owner, m) + ": version must be >= 1");
    if (!versions.insert(m.version).second) {
      throw std::invalid_argument(Describe(owner, m) + ": duplicate version");
    }
    if (m.name.empty() || m.name.size() > kMaxNameLength) {
      throw std::invalid_argument(Describe(owner, m) + ": name must have 1 to 255 characters");
    }
    if (SplitStatements(m.sql).empty()) {
      throw std::invalid_argument(Describe(owner, m) + ": no SQL statement");
    }
  }
  std::sort(migrations.begin(), migrations.end(),
            [](const Migration& a, const Migration& b) { return a.version < b.version; });
  owners_.push_back(Owner{owner, std::move(migrations)});
}

nlohmann::json Migrator::Pending() {
  nlohmann::json pending = nlohmann::json::array();
  nlohmann::json changed = nlohmann::json::array();
  db_.Run([&](DbConnection& c) {
    Applied applied;
    if (TableExists(c)) applied = ReadApplied(c);
    for (const auto& owner : owners_) {
      for (const auto& m : owner.migrations) {
        auto it = applied.find({owner.name, m.version});
        if (it == applied.end()) {
          pending.push_back(Entry(owner.name, m));
        } else if (it->second != MigrationChecksum(m.sql)) {
          changed.push_back(Entry(owner.name, m));
        }
      }
    }
  });
  return {{"pending", pending}, {"changed", changed}};
}

nlohmann::json Migrator::Apply() {
  nlohmann::json applied_now = nlohmann::json::array();
  db_.Run([&](DbConnection& c) {
    {
      std::optional<DbRow> row = c.QueryOne("SELECT GET_LOCK(CONCAT('rendezvous.migrate.', MD5(DATABASE())), 60)");
      if (!row || row->OptInt(1) != 1) {
        throw std::runtime_error(
            "could not take the migration lock within 60 s (another instance is migrating?)");
      }
    }
    // The lock is per session: released explicitly, or by the server when the connection dies.
    const std::string holder = LockHolder();
    bool cluster_locked = false;
    auto release = [&]() noexcept {
      try {
        if (cluster_locked) {
          UnlessAborted([&] { return c.Exec("DELETE FROM schema_migrations_lock WHERE id = 1 AND holder = ?", {holder}); });
        }
      } catch (...) {
      }
      try {
        c.QueryOne("SELECT RELEASE_LOCK(CONCAT('rendezvous.migrate.', MD5(DATABASE())))");
      } catch (...) {
      }
    };
    try {
      CreateLockTable(c);
      TakeClusterLock(c, holder);
      cluster_locked = true;
      CreateTable(c);
      const Applied applied = ReadApplied(c);
      for (const auto& owner : owners_) {
        int max_applied = 0;
        for (const auto& [key, sum] : applied) {
          if (key.first == owner.name) max_applied = std::max(max_applied, key.second);
        }
        for (const auto& m : owner.migrations) {
          const std::string checksum = MigrationChecksum(m.sql);
          auto it = applied.find({owner.name, m.version});
          if (it != applied.end()) {
            if (it->second != checksum) {
              throw std::runtime_error(Describe(owner.name, m) +
                                       " was applied with different SQL (checksum mismatch); "
                                       "add a new version instead of editing an applied one");
            }
            continue;
          }
          if (m.version < max_applied) {
            logger_.Warn("applying a migration older than the newest applied one",
                         {{"owner", owner.name}, {"version", m.version}});
          }
          HeartbeatClusterLock(c, holder);
          const auto statements = SplitStatements(m.sql);
          for (size_t i = 0; i < statements.size(); ++i) {
            try {
              UnlessAborted([&] { return c.ExecUnprepared(statements[i]); });
            } catch (const DatabaseError& e) {
              throw std::runtime_error(Describe(owner.name, m) + ", statement " +
                                       std::to_string(i + 1) + " failed: " + e.what() +
                                       " (error " + std::to_string(e.code()) + ")");
            }
          }
          UnlessAborted([&] {
            return c.Exec(
                "INSERT INTO schema_migrations (owner, version, name, checksum, applied_at)"
                " VALUES (?, ?, ?, ?, UTC_TIMESTAMP(3))",
                {owner.name, m.version, m.name, checksum});
          });
          logger_.Info("migration applied",
                       {{"owner", owner.name}, {"version", m.version}, {"name", m.name}});
          applied_now.push_back(Entry(owner.name, m));
        }
      }
    } catch (...) {
      release();
      throw;
    }
    release();
  });
  return {{"applied", applied_now}};
}

}  // namespace rendezvous::core
