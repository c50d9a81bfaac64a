#include <future>
#include <set>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "storage/migrator.hpp"
#include "storage/mysql_database.hpp"
#include "storage_test_util.hpp"

namespace rendezvous::testing {
namespace {

using core::Migrator;
using core::MysqlDatabase;

std::vector<Migration> Books() {
  return {
      {2, "add title",
       "ALTER TABLE books ADD COLUMN IF NOT EXISTS title VARCHAR(100) NOT NULL DEFAULT '';\n"
       "CREATE INDEX IF NOT EXISTS books_title ON books (title);\n"},
      {1, "create books",
       "CREATE TABLE IF NOT EXISTS books (\n  id BIGINT AUTO_INCREMENT PRIMARY KEY\n);\n"
       "INSERT IGNORE INTO books (id) VALUES (1);\n"},
  };
}

std::vector<Migration> Shelves() {
  return {{1, "create shelves", "CREATE TABLE IF NOT EXISTS shelves (id INT PRIMARY KEY)"}};
}

class MigratorTest : public ::testing::Test {
 protected:
  ScratchDatabase scratch_;
  prometheus::Registry registry_;
};

TEST_F(MigratorTest, AppliesOnceInVersionOrderAndIsIdempotent) {
  MysqlDatabase db(OptionsFor(scratch_), registry_, QuietLogger());
  Migrator m(db, QuietLogger());
  m.Add("books", Books());
  m.Add("shelves", Shelves());

  const auto pending = m.Pending();
  EXPECT_EQ(pending["pending"].size(), 3u);
  EXPECT_TRUE(pending["changed"].empty());

  const auto first = m.Apply();
  ASSERT_EQ(first["applied"].size(), 3u);
  EXPECT_EQ(first["applied"][0], (nlohmann::json{{"owner", "books"}, {"version", 1}, {"name", "create books"}}));
  EXPECT_EQ(first["applied"][1]["version"], 2);
  EXPECT_EQ(first["applied"][2]["owner"], "shelves");
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM books WHERE title = ''"), "1");
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM schema_migrations"), "3");
  EXPECT_EQ(scratch_.QueryValue("SELECT LENGTH(checksum) FROM schema_migrations LIMIT 1"), "64");

  EXPECT_TRUE(m.Apply()["applied"].empty());
  EXPECT_TRUE(m.Pending()["pending"].empty());
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM schema_migrations"), "3");

  // A new version of one owner is the only thing applied next time.
  Migrator later(db, QuietLogger());
  auto books = Books();
  books.push_back({3, "add isbn", "ALTER TABLE books ADD COLUMN IF NOT EXISTS isbn VARCHAR(20)"});
  later.Add("books", books);
  later.Add("shelves", Shelves());
  const auto third = later.Apply();
  ASSERT_EQ(third["applied"].size(), 1u);
  EXPECT_EQ(third["applied"][0]["version"], 3);
}

TEST_F(MigratorTest, ConcurrentApplyFromTwoInstancesAppliesEachVersionOnce) {
  MysqlDatabase db1(OptionsFor(scratch_), registry_, QuietLogger());
  prometheus::Registry registry2;
  MysqlDatabase db2(OptionsFor(scratch_), registry2, QuietLogger());
  auto run = [](Database& db) {
    Migrator m(db, QuietLogger());
    m.Add("books", Books());
    m.Add("shelves", Shelves());
    return m.Apply();
  };
  auto a = std::async(std::launch::async, run, std::ref(db1));
  auto b = std::async(std::launch::async, run, std::ref(db2));
  const auto ra = a.get();
  const auto rb = b.get();
  EXPECT_EQ(ra["applied"].size() + rb["applied"].size(), 3u);
  std::set<std::string> seen;
  for (const auto* r : {&ra, &rb}) {
    for (const auto& e : (*r)["applied"]) {
      EXPECT_TRUE(seen.insert(e["owner"].get<std::string>() + "/" + e["version"].dump()).second);
    }
  }
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM schema_migrations"), "3");
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM books"), "1");
}

TEST_F(MigratorTest, ChangedSqlOfAnAppliedVersionIsAnError) {
  MysqlDatabase db(OptionsFor(scratch_), registry_, QuietLogger());
  {
    Migrator m(db, QuietLogger());
    m.Add("books", Books());
    m.Apply();
  }
  auto changed = Books();
  changed[1].sql = "CREATE TABLE IF NOT EXISTS books (id INT PRIMARY KEY)";
  changed.push_back({3, "never", "CREATE TABLE never_created (id INT)"});
  Migrator m(db, QuietLogger());
  m.Add("books", changed);
  const auto pending = m.Pending();
  ASSERT_EQ(pending["changed"].size(), 1u);
  EXPECT_EQ(pending["changed"][0]["version"], 1);
  try {
    m.Apply();
    FAIL() << "checksum change accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("books v1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
  }
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM information_schema.tables WHERE "
                                "table_schema = DATABASE() AND table_name = 'never_created'"),
            "0");
  // Whitespace alone is not a change.
  auto spaced = Books();
  spaced[0].sql = "\n" + spaced[0].sql + "\n\n";
  Migrator ok(db, QuietLogger());
  ok.Add("books", spaced);
  EXPECT_TRUE(ok.Apply()["applied"].empty());
}

TEST_F(MigratorTest, FailedVersionIsNotRecordedAndCanBeFixedAndRerun) {
  MysqlDatabase db(OptionsFor(scratch_), registry_, QuietLogger());
  std::vector<Migration> broken = {
      {1, "ok", "CREATE TABLE IF NOT EXISTS a (id INT PRIMARY KEY)"},
      {2, "half",
       "CREATE TABLE IF NOT EXISTS b (id INT PRIMARY KEY);\n"
       "ALTER TABLE missing_table ADD COLUMN x INT;\n"},
  };
  {
    Migrator m(db, QuietLogger());
    m.Add("x", broken);
    try {
      m.Apply();
      FAIL() << "broken migration applied";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("x v2 (half)"), std::string::npos) << what;
      EXPECT_NE(what.find("statement 2"), std::string::npos) << what;
      EXPECT_NE(what.find("missing_table"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(scratch_.QueryValue("SELECT GROUP_CONCAT(version) FROM schema_migrations"), "1");
  broken[1].sql =
      "CREATE TABLE IF NOT EXISTS b (id INT PRIMARY KEY);\n"
      "ALTER TABLE b ADD COLUMN IF NOT EXISTS x INT;\n";
  Migrator fixed(db, QuietLogger());
  fixed.Add("x", broken);
  const auto r = fixed.Apply();
  ASSERT_EQ(r["applied"].size(), 1u);
  EXPECT_EQ(r["applied"][0]["version"], 2);
  // The lock was released each time: another session can take it at once.
  EXPECT_EQ(scratch_.QueryValue("SELECT GET_LOCK(CONCAT('rendezvous.migrate.', MD5(DATABASE())), 0)"), "1");
}

TEST(MigratorAdd, RejectsBadDefinitions) {
  struct NoDb : Database {
    bool Ping() noexcept override { return false; }
    void RunTransaction(const std::function<void(DbConnection&)>&) override {}
    void RunAutocommit(const std::function<void(DbConnection&)>&) override {}
  } db;
  Migrator m(db, QuietLogger());
  EXPECT_THROW(m.Add("", {}), std::invalid_argument);
  EXPECT_THROW(m.Add("a", {{0, "zero", "SELECT 1"}}), std::invalid_argument);
  EXPECT_THROW(m.Add("a", {{1, "x", "SELECT 1"}, {1, "y", "SELECT 2"}}), std::invalid_argument);
  EXPECT_THROW(m.Add("a", {{1, "x", "-- nothing\n"}}), std::invalid_argument);
  m.Add("a", {{1, "x", "SELECT 1"}});
  EXPECT_THROW(m.Add("a", {{2, "y", "SELECT 1"}}), std::invalid_argument);
}

}  // namespace
}  // namespace rendezvous::testing
