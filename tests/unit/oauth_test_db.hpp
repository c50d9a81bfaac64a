// Test helpers of the OAuth service tests that run against MariaDB: users 1 and 2, and a fixture
// holding the host's pool over a scratch database with OAuth migrations.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "client_service.hpp"
#include "log/logger.hpp"
#include "oauth_migrations.hpp"
#include "scratch_db.hpp"
#include "static_users.hpp"
#include "storage/migrator.hpp"
#include "storage/mysql_database.hpp"
#include "storage_test_util.hpp"

namespace rendezvous::oauth {

inline constexpr const char* kAppRedirect = "https://app.example.com/cb";

// A client named "App" of `owner`, redirecting to kAppRedirect.
inline NewClient AppClient(int64_t owner, std::vector<std::string> scopes) {
  NewClient n;
  n.owner_id = owner;
  n.settings.name = "App";
  n.settings.redirect_uris = {kAppRedirect};
  n.settings.scopes = std::move(scopes);
  return n;
}

// A fresh scratch database per test; OpenDatabase applies the given migrations as "oauth".
class OAuthDbTest : public ::testing::Test {
 protected:
  void OpenDatabase(const std::vector<Migration>& migrations) {
    db_ = std::make_unique<core::MysqlDatabase>(testing::OptionsFor(scratch_, 8), registry_, logger_);
    core::Migrator migrator(*db_, logger_);
    migrator.Add("oauth", migrations);
    migrator.Apply();
  }

  testing::ScratchDatabase scratch_;
  prometheus::Registry registry_;
  core::StderrLogger logger_{LogLevel::kError, true};
  // Users 1 and 2 (userN@example.com).
  testing::StaticUsers users_{
      {testing::TestUser(1, "User", "user1@example.com"), testing::TestUser(2, "User", "user2@example.com")}};
  std::unique_ptr<core::MysqlDatabase> db_;
};

}  // namespace rendezvous::oauth
