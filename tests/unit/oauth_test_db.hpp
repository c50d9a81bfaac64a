// Test helpers of the OAuth service tests that run against MariaDB: an Identity that knows users
// 1 and 2, and a fixture holding the host's pool over a scratch database with OAuth migrations.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "client_service.hpp"
#include "log/logger.hpp"
#include "scratch_db.hpp"
#include "storage/migrator.hpp"
#include "storage/mysql_database.hpp"
#include "storage_test_util.hpp"

namespace rendezvous::oauth {

// Users 1 and 2 (userN@example.com); the rest of Identity is not used by the services.
class FakeIdentity final : public Identity {
 public:
  std::optional<User> FindUser(int64_t id) override {
    if (id != 1 && id != 2) return std::nullopt;
    User u;
    u.id = id;
    u.email = "user" + std::to_string(id) + "@example.com";
    u.name = "User";
    return u;
  }
  std::optional<User> FindUserByEmail(const std::string&) override { return std::nullopt; }
  Result<User> CreateUser(const std::string&, const std::string&, const std::string&, const std::string&,
                          bool) override {
    return Status(ErrorCode::kInternal, "not here");
  }
  std::optional<User> SessionUser(const Request&) override { return std::nullopt; }
  std::string CsrfToken(const Request&, Response&) override { return ""; }
  bool CheckCsrf(const Request&, const std::string&) override { return false; }
  Json UserJson(const User&) override { return Json::object(); }
};

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
  FakeIdentity identity_;
  std::unique_ptr<core::MysqlDatabase> db_;
};

}  // namespace rendezvous::oauth
