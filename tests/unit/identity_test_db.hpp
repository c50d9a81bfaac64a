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
#include "storage/migrator.hpp"
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

// Runs the statements of the identity migrations up to `up_to` (all by default) as the migrator
// splits them; every one can run twice.
inline void MigrateIdentity(testing::ScratchDatabase& scratch, int up_to = 1 << 30) {
  for (const Migration& m : IdentityMigrations()) {
    if (m.version > up_to) continue;
    for (const std::string& statement : SplitStatements(m.sql)) scratch.Exec(statement);
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
