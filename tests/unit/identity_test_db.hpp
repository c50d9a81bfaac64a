// Test helpers of the identity tests: a one-connection Database over Connector/C++ (so that the
// tests depend only on the public Database interface), the identity migrations applied to a
// scratch database, and a counter look-up in a prometheus registry.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <cppconn/connection.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_driver.h>
#include <prometheus/registry.h>

#include "identity/migrations.hpp"
#include "rendezvous/database.hpp"
#include "scratch_db.hpp"

namespace rendezvous::core {

class IdentityTestConnection final : public DbConnection {
 public:
  explicit IdentityTestConnection(std::unique_ptr<sql::Connection> c) : conn_(std::move(c)) {}
  sql::PreparedStatement& Prepare(const std::string& sql) override {
    auto& slot = statements_[sql];
    if (!slot) slot.reset(conn_->prepareStatement(sql));
    slot->clearParameters();
    return *slot;
  }
  uint64_t Execute(const std::string& sql) override {
    std::unique_ptr<sql::Statement> st(conn_->createStatement());
    return static_cast<uint64_t>(st->executeUpdate(sql));
  }
  int64_t LastInsertId() override {
    std::unique_ptr<sql::Statement> st(conn_->createStatement());
    std::unique_ptr<sql::ResultSet> rs(st->executeQuery("SELECT LAST_INSERT_ID()"));
    rs->next();
    return rs->getInt64(1);
  }
  sql::Connection& Raw() override { return *conn_; }

 private:
  std::unique_ptr<sql::Connection> conn_;
  std::map<std::string, std::unique_ptr<sql::PreparedStatement>> statements_;
};

class IdentityTestDatabase final : public Database {
 public:
  explicit IdentityTestDatabase(const testing::ScratchDatabase& scratch) {
    sql::ConnectOptionsMap o;
    o["hostName"] = sql::SQLString("localhost");
    o["socket"] = sql::SQLString(scratch.socket());
    o["userName"] = sql::SQLString("root");
    o["password"] = sql::SQLString("");
    o["schema"] = sql::SQLString(scratch.name());
    conn_ = std::make_unique<IdentityTestConnection>(
        std::unique_ptr<sql::Connection>(sql::mysql::get_mysql_driver_instance()->connect(o)));
  }
  bool Ping() noexcept override { return true; }
  void RunTransaction(const std::function<void(DbConnection&)>& fn) override {
    std::lock_guard lock(mu_);
    conn_->Raw().setAutoCommit(false);
    try {
      fn(*conn_);
      conn_->Raw().commit();
    } catch (...) {
      conn_->Raw().rollback();
      conn_->Raw().setAutoCommit(true);
      throw;
    }
    conn_->Raw().setAutoCommit(true);
  }
  void RunAutocommit(const std::function<void(DbConnection&)>& fn) override {
    std::lock_guard lock(mu_);
    fn(*conn_);
  }

 private:
  std::mutex mu_;
  std::unique_ptr<IdentityTestConnection> conn_;
};

inline void MigrateIdentity(testing::ScratchDatabase& scratch) {
  for (const Migration& m : IdentityMigrations()) {
    std::string sql = m.sql;
    size_t start = 0;
    while (start < sql.size()) {
      size_t end = sql.find(";\n", start);
      std::string stmt = sql.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (stmt.find_first_not_of(" \n") != std::string::npos) scratch.Exec(stmt);
      if (end == std::string::npos) break;
      start = end + 2;
    }
  }
}

inline double CounterValue(prometheus::Registry& registry, const std::string& name, const std::string& result) {
  for (const auto& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const auto& metric : family.metric) {
      for (const auto& label : metric.label) {
        if (label.name == "result" && label.value == result) return metric.counter.value;
      }
    }
  }
  return -1;
}

}  // namespace rendezvous::core
