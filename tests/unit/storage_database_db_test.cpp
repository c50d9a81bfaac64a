#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <cppconn/connection.h>
#include <cppconn/statement.h>
#include <gtest/gtest.h>
#include <mysql_driver.h>
#include <prometheus/registry.h>

#include "storage/mysql_database.hpp"
#include "storage_test_util.hpp"

namespace rendezvous::testing {
namespace {

using core::MysqlDatabase;
using std::chrono::steady_clock;

std::string QueryString(DbConnection& c, const std::string& sql) {
  std::optional<DbRow> row = c.QueryOne(sql);
  return row ? row->String(1) : std::string();
}

// Statements this session has prepared so far (the server's count).
int64_t PreparedSoFar(DbConnection& c) {
  return c.QueryUnprepared("SHOW SESSION STATUS LIKE 'Com_stmt_prepare'").at(0).Int(2);
}

class DatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_.Exec("CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB");
  }
  ScratchDatabase scratch_;
  prometheus::Registry registry_;
};

TEST_F(DatabaseTest, CommitsAndRollsBack) {
  MysqlDatabase db(OptionsFor(scratch_), registry_, QuietLogger());
  db.Transaction([](DbConnection& c) { c.Exec("INSERT INTO t VALUES (1, 10)"); });
  EXPECT_THROW(db.Transaction([](DbConnection& c) {
    c.Exec("INSERT INTO t VALUES (2, 20)");
    throw std::runtime_error("abort");
  }),
               std::runtime_error);
  EXPECT_EQ(scratch_.QueryValue("SELECT GROUP_CONCAT(id ORDER BY id) FROM t"), "1");
  EXPECT_EQ(MetricValue(registry_, "db_transactions_total", {{"result", "commit"}}), 1);
  EXPECT_EQ(MetricValue(registry_, "db_transactions_total", {{"result", "rollback"}}), 1);

  const int64_t n = db.Transaction([](DbConnection& c) {
    std::optional<DbRow> row = c.QueryOne("SELECT v FROM t WHERE id = ?", {1});
    return row ? row->Int("v") : -1;
  });
  EXPECT_EQ(n, 10);
}

TEST_F(DatabaseTest, SqlErrorsPropagateAndConnectionStaysUsable) {
  MysqlDatabase db(OptionsFor(scratch_, 1), registry_, QuietLogger());
  db.Run([](DbConnection& c) { c.Exec("INSERT INTO t VALUES (1, 10)"); });
  try {
    db.Transaction([](DbConnection& c) { c.Exec("INSERT INTO t VALUES (1, 11)"); });
    FAIL() << "duplicate key accepted";
  } catch (const DuplicateKey& e) {
    EXPECT_EQ(e.code(), 1062);
  }
  EXPECT_EQ(MetricValue(registry_, "db_errors_total", {{"kind", "other"}}), 1);
  EXPECT_EQ(db.Run([](DbConnection& c) { return QueryString(c, "SELECT COUNT(*) FROM t"); }), "1");
}

TEST_F(DatabaseTest, SessionIsUtcStrictReadCommitted) {
  MysqlDatabase db(OptionsFor(scratch_), registry_, QuietLogger());
  db.Run([](DbConnection& c) {
    EXPECT_EQ(QueryString(c, "SELECT @@SESSION.time_zone"), "+00:00");
    EXPECT_NE(QueryString(c, "SELECT @@SESSION.sql_mode").find("STRICT_ALL_TABLES"),
              std::string::npos);
    EXPECT_EQ(QueryString(c, "SELECT @@SESSION.tx_isolation"), "READ-COMMITTED");
    EXPECT_EQ(QueryString(c, "SELECT @@character_set_client"), "utf8mb4");
  });
}

TEST_F(DatabaseTest, PreparedStatementsAreCachedPerConnectionAndCleared) {
  MysqlDatabase db(OptionsFor(scratch_, 1), registry_, QuietLogger());
  int64_t prepared = 0;
  db.Run([&](DbConnection& c) {
    prepared = PreparedSoFar(c);
    EXPECT_EQ(c.QueryOne("SELECT ? + 1", {41})->Int(1), 42);
    EXPECT_EQ(c.QueryOne("SELECT ? + 1", {1})->Int(1), 2);
    EXPECT_EQ(PreparedSoFar(c), prepared + 1);
  });
  db.Run([&](DbConnection& c) {
    // The same connection (pool of one) kept its statement.
    EXPECT_EQ(c.QueryOne("SELECT ? + 1", {2})->Int(1), 3);
    EXPECT_EQ(PreparedSoFar(c), prepared + 1);
    // Parameters were cleared: executing without binding fails.
    EXPECT_THROW(c.Query("SELECT ? + 1"), DatabaseError);
  });
  EXPECT_EQ(db.Run([](DbConnection& c) {
    c.Exec("INSERT INTO t VALUES (5, 1)");
    return c.LastInsertId();
  }),
            0);
}

// A procedure's rows come back through Query; its closing status is read with them, so the
// connection (a pool of one) runs the next statement, prepared or not, at once.
TEST_F(DatabaseTest, ACallThatSelectsRowsLeavesTheConnectionReady) {
  scratch_.Exec(
      "CREATE PROCEDURE add_and_count(IN p_id INT) MODIFIES SQL DATA BEGIN"
      " INSERT IGNORE INTO t VALUES (p_id, 1); SELECT COUNT(*), ROW_COUNT() FROM t; END");
  MysqlDatabase db(OptionsFor(scratch_, 1), registry_, QuietLogger());
  for (int round = 0; round < 2; ++round) {
    db.Run([&](DbConnection& c) {
      std::optional<DbRow> first = c.QueryOne("CALL add_and_count(?)", {2 * round + 1});
      ASSERT_TRUE(first);
      EXPECT_EQ(first->Int(1), 2 * round + 1);
      std::vector<DbRow> again = c.Query("CALL add_and_count(?)", {2 * round + 2});
      ASSERT_EQ(again.size(), 1u);
      EXPECT_EQ(again[0].Int(1), 2 * round + 2);
      EXPECT_EQ(c.QueryOne("SELECT ? + 1", {41})->Int(1), 42);
      EXPECT_EQ(c.QueryUnprepared("SELECT COUNT(*) FROM t").at(0).Int(1), 2 * round + 2);
    });
  }
}

TEST_F(DatabaseTest, LastInsertId) {
  scratch_.Exec("CREATE TABLE a (id BIGINT AUTO_INCREMENT PRIMARY KEY, x INT)");
  MysqlDatabase db(OptionsFor(scratch_), registry_, QuietLogger());
  const auto ids = db.Transaction([](DbConnection& c) {
    c.Exec("INSERT INTO a (x) VALUES (1)");
    const int64_t a = c.LastInsertId();
    c.Exec("INSERT INTO a (x) VALUES (?)", {2});
    return std::make_pair(a, c.LastInsertId());
  });
  EXPECT_EQ(ids.first, 1);
  EXPECT_EQ(ids.second, 2);
}

TEST_F(DatabaseTest, DeadlockIsRetriedUntilBothCommit) {
  scratch_.Exec("INSERT INTO t VALUES (1, 0), (2, 0)");
  MysqlDatabase db(OptionsFor(scratch_), registry_, QuietLogger());

  std::mutex mu;
  std::condition_variable cv;
  int first_locks = 0;
  auto wait_both = [&] {
    std::unique_lock<std::mutex> lk(mu);
    ++first_locks;
    cv.notify_all();
    cv.wait_for(lk, std::chrono::seconds(5), [&] { return first_locks >= 2; });
  };
  auto worker = [&](int first, int second) {
    int attempts = 0;
    db.Transaction([&](DbConnection& c) {
      ++attempts;
      c.Exec("UPDATE t SET v = v + 1 WHERE id = ?", {first});
      if (attempts == 1) wait_both();  // both hold their first row: the next update deadlocks
      c.Exec("UPDATE t SET v = v + 1 WHERE id = ?", {second});
    });
    return attempts;
  };
  auto a = std::async(std::launch::async, worker, 1, 2);
  auto b = std::async(std::launch::async, worker, 2, 1);
  const int attempts = a.get() + b.get();

  EXPECT_GE(attempts, 3);
  EXPECT_EQ(scratch_.QueryValue("SELECT GROUP_CONCAT(v ORDER BY id) FROM t"), "2,2");
  EXPECT_GE(MetricValue(registry_, "db_errors_total", {{"kind", "deadlock_retry"}}), 1);
  EXPECT_EQ(MetricValue(registry_, "db_transactions_total", {{"result", "commit"}}), 2);
}

TEST_F(DatabaseTest, TransactionAbortedOnEveryRetryIsUnavailableNotAnError) {
  MysqlDatabase db(OptionsFor(scratch_), registry_, QuietLogger());
  int attempts = 0;
  const auto start = std::chrono::steady_clock::now();
  // What a Galera node answers to a transaction that loses certification, every time.
  EXPECT_THROW(db.Transaction([&](DbConnection& c) {
    ++attempts;
    c.ExecUnprepared("BEGIN NOT ATOMIC SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213; END");
  }),
               DatabaseUnavailable);
  EXPECT_EQ(attempts, 31);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));  // bounded back-off
  EXPECT_EQ(MetricValue(registry_, "db_transaction_retries_total", {{"cause", "deadlock"}}), 30);
  EXPECT_EQ(MetricValue(registry_, "db_errors_total", {{"kind", "retries_exhausted"}}), 1);
  // Off a cluster the node gauge shows its one empty series; the database answered.
  EXPECT_EQ(MetricValue(registry_, "db_cluster_node", {{"wsrep_node_name", ""}}), 0);
  EXPECT_EQ(MetricValue(registry_, "db_ready", {}), 1);
}

TEST_F(DatabaseTest, ExhaustedPoolThrowsAfterAcquireTimeout) {
  auto options = OptionsFor(scratch_, 2);
  options.acquire_timeout = std::chrono::milliseconds(300);
  MysqlDatabase db(options, registry_, QuietLogger());

  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> holding{0};
  auto hold = [&] {
    db.Run([&](DbConnection&) {
      ++holding;
      released.wait();
    });
  };
  std::thread h1(hold), h2(hold);
  const auto deadline = steady_clock::now() + std::chrono::seconds(10);
  while (holding < 2 && steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_EQ(holding.load(), 2);
  EXPECT_EQ(MetricValue(registry_, "db_pool_connections", {{"state", "in_use"}}), 2);

  const auto start = steady_clock::now();
  EXPECT_THROW(db.Run([](DbConnection&) {}), DatabaseUnavailable);
  const auto waited = steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(290));
  EXPECT_LT(waited, std::chrono::seconds(3));
  EXPECT_EQ(MetricValue(registry_, "db_pool_acquire_timeouts_total"), 1);

  release.set_value();
  h1.join();
  h2.join();
  EXPECT_EQ(db.Run([](DbConnection& c) { return QueryString(c, "SELECT 7"); }), "7");
  EXPECT_EQ(MetricValue(registry_, "db_pool_connections", {{"state", "idle"}}), 2);
  EXPECT_EQ(MetricValue(registry_, "db_pool_connections", {{"state", "in_use"}}), 0);
  EXPECT_EQ(MetricValue(registry_, "db_pool_size"), 2);
}

TEST_F(DatabaseTest, ConnectionIsNeverReturnedWithAnOpenTransaction) {
  MysqlDatabase db(OptionsFor(scratch_, 1), registry_, QuietLogger());
  EXPECT_THROW(db.Run([](DbConnection& c) {
    c.ExecUnprepared("START TRANSACTION");
    c.Exec("INSERT INTO t VALUES (9, 9)");
    throw std::runtime_error("midway");
  }),
               std::runtime_error);
  db.Run([](DbConnection& c) {
    EXPECT_EQ(QueryString(c, "SELECT @@in_transaction"), "0");
  });
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM t"), "0");
}

TEST_F(DatabaseTest, KilledConnectionIsDiscarded) {
  MysqlDatabase db(OptionsFor(scratch_, 1), registry_, QuietLogger());
  const std::string id =
      db.Run([](DbConnection& c) { return QueryString(c, "SELECT CONNECTION_ID()"); });
  scratch_.Exec("KILL " + id);
  // The pooled connection is dead now; its next use (without idle validation, it was used just
  // now) fails as unavailable or is replaced; either way the one after works on a new connection.
  try {
    db.Run([](DbConnection& c) { QueryString(c, "SELECT 1"); });
  } catch (const DatabaseUnavailable&) {
  }
  const std::string id2 =
      db.Run([](DbConnection& c) { return QueryString(c, "SELECT CONNECTION_ID()"); });
  EXPECT_NE(id2, id);
  // A transaction on a connection that died while idle is retried on a fresh one.
  const std::string id3 =
      db.Run([](DbConnection& c) { return QueryString(c, "SELECT CONNECTION_ID()"); });
  scratch_.Exec("KILL " + id3);
  db.Transaction([](DbConnection& c) { c.Exec("INSERT INTO t VALUES (3, 3)"); });
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM t"), "1");
  EXPECT_GE(MetricValue(registry_, "db_errors_total", {{"kind", "connection"}}), 1);
}

TEST(DatabaseDownTest, UnavailableQuicklyThenRecoversWithTheSameObject) {
  PrivateMariadb server;
  {
    sql::ConnectOptionsMap o;
    o["hostName"] = sql::SQLString("localhost");
    o["socket"] = sql::SQLString(server.socket());
    o["userName"] = sql::SQLString("root");
    o["password"] = sql::SQLString("");
    std::unique_ptr<sql::Connection> c(sql::mysql::get_mysql_driver_instance()->connect(o));
    std::unique_ptr<sql::Statement> st(c->createStatement());
    st->execute("CREATE DATABASE IF NOT EXISTS rdv");
    st->execute("CREATE TABLE IF NOT EXISTS rdv.t (id INT PRIMARY KEY)");
  }
  prometheus::Registry registry;
  core::DatabaseOptions options;
  options.socket = server.socket();
  options.user = "root";
  options.name = "rdv";
  options.pool_size = 2;
  options.connect_timeout = std::chrono::seconds(1);
  MysqlDatabase db(options, registry, QuietLogger());
  ASSERT_TRUE(db.Ping());
  db.Transaction([](DbConnection& c) { c.Exec("INSERT INTO t VALUES (1)"); });

  server.Stop();
  auto start = steady_clock::now();
  EXPECT_THROW(db.Transaction([](DbConnection& c) { c.Exec("INSERT INTO t VALUES (2)"); }),
               DatabaseUnavailable);
  EXPECT_THROW(db.Run([](DbConnection& c) { QueryString(c, "SELECT 1"); }), DatabaseUnavailable);
  EXPECT_FALSE(db.Ping());
  EXPECT_LT(steady_clock::now() - start, std::chrono::seconds(3));
  EXPECT_GE(MetricValue(registry, "db_errors_total", {{"kind", "connection"}}), 1);

  server.Start();
  // mariadb.sh returns once the server answers: the very next call must work.
  EXPECT_TRUE(db.Ping());
  db.Transaction([](DbConnection& c) { c.Exec("INSERT INTO t VALUES (3)"); });
  EXPECT_EQ(db.Run([](DbConnection& c) { return QueryString(c, "SELECT COUNT(*) FROM t"); }), "2");
}

}  // namespace
}  // namespace rendezvous::testing
