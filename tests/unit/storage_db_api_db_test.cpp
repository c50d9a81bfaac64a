// The public database API over the real pool and a scratch database: typed parameters (NULL and
// std::optional included), typed and nullable row getters by index and by name, Exec/Query/
// QueryOne, multi-row inserts, last insert id and the mapping of server errors.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "storage/mysql_connection.hpp"
#include "storage/mysql_database.hpp"
#include "storage_test_util.hpp"

namespace rendezvous::testing {
namespace {

using core::MysqlDatabase;

class DbApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_.Exec(
        "CREATE TABLE v (id BIGINT AUTO_INCREMENT PRIMARY KEY, n BIGINT NULL, d DOUBLE NULL, b TINYINT(1) NULL,"
        " s VARCHAR(100) NULL, bin VARBINARY(16) NULL, at DATETIME(3) NULL, dec_col DECIMAL(10,2) NULL,"
        " UNIQUE KEY uq_v_s (s)) ENGINE=InnoDB");
  }
  ScratchDatabase scratch_;
  prometheus::Registry registry_;
  MysqlDatabase db_{OptionsFor(scratch_), registry_, QuietLogger()};
};

TEST_F(DbApiTest, TypedValuesRoundTrip) {
  const std::string binary("a\0b", 3);
  const int64_t id = db_.Run([&](DbConnection& c) {
    EXPECT_EQ(c.Exec("INSERT INTO v (n, d, b, s, bin, at, dec_col) VALUES (?, ?, ?, ?, ?, ?, ?)",
                     {int64_t{9007199254740993}, 2.5, true, std::string("héllo"), binary,
                      "2025-01-31 09:00:00.123", "12.50"}),
              1u);
    return c.LastInsertId();
  });
  std::optional<DbRow> row =
      db_.Run([&](DbConnection& c) { return c.QueryOne("SELECT id, n, d, b, s, bin, at, dec_col FROM v WHERE id = ?", {id}); });
  ASSERT_TRUE(row);
  EXPECT_EQ(row->size(), 8u);
  EXPECT_EQ(row->Int(1), id);
  EXPECT_EQ(row->Int("n"), 9007199254740993);
  EXPECT_DOUBLE_EQ(row->Double("d"), 2.5);
  EXPECT_TRUE(row->Bool("b"));
  EXPECT_EQ(row->String("s"), "héllo");
  EXPECT_EQ(row->String("bin"), binary);
  EXPECT_EQ(row->String("at").substr(0, 23), "2025-01-31 09:00:00.123");
  EXPECT_EQ(row->String("dec_col"), "12.50");
  EXPECT_DOUBLE_EQ(row->Double("dec_col"), 12.5);
  EXPECT_EQ(row->Int("dec_col"), 12);
  EXPECT_EQ(row->String("n"), "9007199254740993");
  EXPECT_EQ(row->IndexOf("s"), 5);
  EXPECT_THROW(row->Int("missing"), std::out_of_range);
  EXPECT_THROW(row->Int(9), std::out_of_range);
  EXPECT_THROW(row->Int(0), std::out_of_range);
}

TEST_F(DbApiTest, NullAndOptionalBindAndRead) {
  const std::optional<std::string> none;
  const std::optional<int64_t> seven = 7;
  db_.Run([&](DbConnection& c) {
    c.Exec("INSERT INTO v (n, d, b, s) VALUES (?, ?, ?, ?)", {seven, nullptr, std::nullopt, none});
  });
  std::optional<DbRow> row = db_.Run([](DbConnection& c) { return c.QueryOne("SELECT n, d, b, s, at FROM v"); });
  ASSERT_TRUE(row);
  EXPECT_EQ(row->OptInt("n"), 7);
  EXPECT_TRUE(row->IsNull("d"));
  EXPECT_EQ(row->OptDouble("d"), std::nullopt);
  EXPECT_EQ(row->OptBool("b"), std::nullopt);
  EXPECT_EQ(row->OptString("s"), std::nullopt);
  EXPECT_EQ(row->OptString("at"), std::nullopt);
  // The plain getters read NULL as zero, false or empty.
  EXPECT_EQ(row->Double("d"), 0.0);
  EXPECT_FALSE(row->Bool("b"));
  EXPECT_EQ(row->String("s"), "");
  EXPECT_FALSE(row->IsNull("n"));
}

TEST_F(DbApiTest, QueryQueryOneAndAffectedRows) {
  db_.Run([](DbConnection& c) {
    for (int i = 1; i <= 3; ++i) c.Exec("INSERT INTO v (n) VALUES (?)", {i * 10});
    const std::vector<DbRow> rows = c.Query("SELECT n FROM v WHERE n >= ? ORDER BY n", {20});
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].Int(1), 20);
    EXPECT_EQ(rows[1].Int("n"), 30);
    EXPECT_EQ(c.QueryOne("SELECT n FROM v WHERE n > ?", {100}), std::nullopt);
    EXPECT_EQ(c.QueryOne("SELECT n FROM v ORDER BY n DESC")->Int(1), 30);
    EXPECT_EQ(c.Exec("UPDATE v SET n = n + 1 WHERE n < ?", {25}), 2u);
    EXPECT_EQ(c.QueryUnprepared("SELECT COUNT(*) AS c FROM v WHERE n IN (11, 21)").at(0).Int("c"), 2);
  });
}

TEST_F(DbApiTest, InsertRowsBindsEveryRowInOneStatement) {
  db_.Transaction([](DbConnection& c) {
    EXPECT_EQ(c.InsertRows("INSERT INTO v (n, s)", {}), 0u);
    EXPECT_EQ(c.InsertRows("INSERT INTO v (n, s)", {{1, "a"}, {2, std::optional<std::string>()}, {3, "c"}}), 3u);
    const int64_t first = c.LastInsertId();
    EXPECT_EQ(c.QueryOne("SELECT MIN(id) FROM v")->Int(1), first);
    // A computed column in the row text, and a tail.
    EXPECT_EQ(c.InsertRows("INSERT INTO v (n, s, at)", {{4, "a"}, {5, "e"}}, " ON DUPLICATE KEY UPDATE n = VALUES(n)",
                           "(?, ?, UTC_TIMESTAMP(3))"),
              3u);  // one insert (1) and one update of "a" (2)
    EXPECT_EQ(c.QueryOne("SELECT n FROM v WHERE s = 'a'")->Int(1), 4);
    EXPECT_THROW(c.InsertRows("INSERT INTO v (n, s)", {{1, "x"}, {2}}), std::invalid_argument);
    EXPECT_THROW(c.InsertRows("INSERT INTO v (n, s)", {{1, "x"}}, "", "(?)"), std::invalid_argument);
  });
  EXPECT_EQ(scratch_.QueryValue("SELECT GROUP_CONCAT(n ORDER BY n) FROM v"), "2,3,4,5");
}

// A cached statement keeps no value between runs: each run binds every placeholder again (a run
// with a value missing fails before anything is sent), and the values of a run with more text or a
// NULL do not leak into the next.
TEST_F(DbApiTest, EveryRunOfACachedStatementBindsAllItsPlaceholders) {
  db_.Run([](DbConnection& c) {
    const char* insert = "INSERT INTO v (n, s, d) VALUES (?, ?, ?)";
    EXPECT_EQ(c.Exec(insert, {int64_t{1}, std::string(90, 'x'), 1.5}), 1u);
    try {
      c.Exec(insert, {int64_t{2}, std::string("short")});
      ADD_FAILURE() << "a run with a value missing was sent";
    } catch (const DatabaseError& e) {
      EXPECT_EQ(e.code(), kDbErrorParamsNotBound);
    }
    EXPECT_THROW(c.Exec(insert, {int64_t{2}, std::string("y"), 2.5, int64_t{4}}), DatabaseError);
    EXPECT_EQ(c.Exec(insert, {int64_t{3}, std::string("z"), nullptr}), 1u);
    EXPECT_EQ(c.Exec(insert, {nullptr, std::string("w"), 4.5}), 1u);
    const std::vector<DbRow> rows = c.Query("SELECT n, s, d FROM v ORDER BY id");
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0].String("s"), std::string(90, 'x'));
    EXPECT_EQ(rows[1].Int("n"), 3);
    EXPECT_EQ(rows[1].String("s"), "z");
    EXPECT_TRUE(rows[1].IsNull("d"));
    EXPECT_TRUE(rows[2].IsNull("n"));
    EXPECT_EQ(rows[2].String("s"), "w");
    EXPECT_DOUBLE_EQ(rows[2].Double("d"), 4.5);
  });
}

// InsertReturning answers the new row's id, or the value an ON DUPLICATE KEY UPDATE set, as
// LAST_INSERT_ID() would; on MariaDB in the insert's own statement (no SELECT after it), also for
// a lock row.
TEST_F(DbApiTest, InsertReturningAnswersTheIdOrTheUpdatedValueInOneStatement) {
  scratch_.Exec("CREATE TABLE counters (k BIGINT PRIMARY KEY, c BIGINT NOT NULL) ENGINE=InnoDB");
  db_.Run([&](DbConnection& c) {
    const auto selects = [&] { return c.QueryOne("SHOW SESSION STATUS LIKE 'Com_select'")->Int("Value"); };
    const int64_t before = selects();
    const int64_t first = c.InsertReturning("INSERT INTO v (n) VALUES (?)", {int64_t{1}});
    const int64_t second = c.InsertReturning("INSERT INTO v (n) VALUES (?)", {int64_t{2}});
    const char* count =
        "INSERT INTO counters (k, c) VALUES (?, LAST_INSERT_ID(1)) ON DUPLICATE KEY UPDATE c = "
        "LAST_INSERT_ID(c + 1)";
    const int64_t once = c.InsertReturning(count, {int64_t{7}}, "c", true);
    const int64_t twice = c.InsertReturning(count, {int64_t{7}}, "c", true);
    EXPECT_EQ(selects() - before, 0) << "an insert answered by a SELECT after it";
    EXPECT_EQ(second, first + 1);
    EXPECT_EQ(c.QueryOne("SELECT n FROM v WHERE id = ?", {second})->Int(1), 2);
    EXPECT_EQ(once, 1);
    EXPECT_EQ(twice, 2);
    EXPECT_EQ(c.LastInsertId(), 2) << "LAST_INSERT_ID() agrees";
  });
}

// MariaDB from 10.5 runs INSERT … RETURNING, as its handshake announces it; MySQL never.
TEST(ServerVersion, ReturningIsMariaDbFromTenFive) {
  EXPECT_TRUE(core::ServerHasReturning("10.11.6-MariaDB-0+deb12u1"));
  EXPECT_TRUE(core::ServerHasReturning("5.5.5-10.11.6-MariaDB-log"));
  EXPECT_TRUE(core::ServerHasReturning("11.4.2-MariaDB"));
  EXPECT_TRUE(core::ServerHasReturning("10.5.0-MariaDB"));
  EXPECT_FALSE(core::ServerHasReturning("10.4.32-MariaDB"));
  EXPECT_FALSE(core::ServerHasReturning("8.0.36"));
  EXPECT_FALSE(core::ServerHasReturning("MariaDB"));
  EXPECT_FALSE(core::ServerHasReturning(""));
}

TEST_F(DbApiTest, ServerErrorsAreMappedOnce) {
  db_.Run([](DbConnection& c) { c.Exec("INSERT INTO v (s) VALUES (?)", {"taken"}); });
  try {
    db_.Run([](DbConnection& c) { c.Exec("INSERT INTO v (s) VALUES (?)", {"taken"}); });
    FAIL() << "duplicate accepted";
  } catch (const DuplicateKey& e) {
    EXPECT_EQ(e.code(), kDbErrorDuplicateKey);
  }
  // A duplicate caught inside a transaction leaves it usable: the callback decides.
  const bool duplicate = db_.Transaction([](DbConnection& c) {
    try {
      c.Exec("INSERT INTO v (s) VALUES (?)", {"taken"});
      return false;
    } catch (const DuplicateKey&) {
      c.Exec("INSERT INTO v (s) VALUES (?)", {"other"});
      return true;
    }
  });
  EXPECT_TRUE(duplicate);
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM v"), "2");
  try {
    db_.Run([](DbConnection& c) { c.Query("SELECT no_such_column FROM v"); });
    FAIL() << "bad column accepted";
  } catch (const DuplicateKey&) {
    FAIL() << "not a duplicate";
  } catch (const DatabaseError& e) {
    EXPECT_EQ(e.code(), 1054);
  }
}

}  // namespace
}  // namespace rendezvous::testing
