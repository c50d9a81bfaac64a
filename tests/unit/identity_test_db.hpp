// Test helpers of the identity tests: the host's Database over a scratch database, the identity
// migrations applied to it, and a counter look-up in a prometheus registry.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <prometheus/registry.h>

#include "identity/migrations.hpp"
#include "rendezvous/database.hpp"
#include "scratch_db.hpp"
#include "storage/mysql_database.hpp"
#include "storage_test_util.hpp"

namespace rendezvous::core {

// The real pool over the scratch database.
class IdentityTestDatabase final : public Database {
 public:
  explicit IdentityTestDatabase(const testing::ScratchDatabase& scratch)
      : db_(testing::OptionsFor(scratch), registry_, testing::QuietLogger()) {}
  bool Ping() noexcept override { return db_.Ping(); }
  void RunTransaction(const std::function<void(DbConnection&)>& fn) override { db_.RunTransaction(fn); }
  void RunAutocommit(const std::function<void(DbConnection&)>& fn) override { db_.RunAutocommit(fn); }

 private:
  prometheus::Registry registry_;
  MysqlDatabase db_;
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
