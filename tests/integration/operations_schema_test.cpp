// What a MySQL cluster needs of the schema, and the grants docs/operations.md gives: after every
// migration of every plugin each table is InnoDB with a primary key and the only routines are the
// OAuth procedures; the guide's two accounts (DDL for `migrate`, DML and EXECUTE on the grant
// procedures for `serve`), taken from the guide's SQL, migrate and serve a refresh grant and its
// reuse detection, and without EXECUTE the refresh grant fails.
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "child_process.hpp"
#include "http_client.hpp"
#include "oauth_support.hpp"
#include "scratch_db.hpp"
#include "test_server.hpp"

namespace rendezvous::testing {
namespace {

TEST(OperationsSchema, EveryTableIsInnoDbWithAPrimaryKeyAndTheOnlyRoutinesAreTheOAuthProcedures) {
  ScratchDatabase db;
  TestServer server(db.name());
  server.Migrate();
  EXPECT_EQ(db.QueryValue("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()"),
            "41");
  const std::string without_key = db.QueryValue(
      "SELECT COALESCE(GROUP_CONCAT(t.table_name), '') FROM information_schema.tables t"
      " WHERE t.table_schema = DATABASE() AND NOT EXISTS (SELECT 1 FROM information_schema.table_constraints "
      "c"
      "   WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name AND c.constraint_type = "
      "'PRIMARY KEY')");
  EXPECT_EQ(without_key, "") << "tables without a primary key";
  EXPECT_EQ(db.QueryValue("SELECT COALESCE(GROUP_CONCAT(table_name), '') FROM information_schema.tables"
                          " WHERE table_schema = DATABASE() AND engine <> 'InnoDB'"),
            "");
  EXPECT_EQ(db.QueryValue("SELECT GROUP_CONCAT(CONCAT(routine_type, ' ', routine_name) ORDER BY routine_name)"
                          " FROM information_schema.routines WHERE routine_schema = DATABASE()"),
            "PROCEDURE oauth_exchange_code,PROCEDURE oauth_refresh_grant,PROCEDURE oauth_revoke_grant,"
            "PROCEDURE oauth_rotate_refresh_token");
}

// The ```sql block of docs/operations.md's "Grants", for this database and these account names.
std::vector<std::string> GuideGrants(const std::string& database, const std::string& migrate_user,
                                     const std::string& serve_user, const std::string& password) {
  const std::string guide = ReadFile(SourceDir() + "/docs/operations.md");
  const size_t grants = guide.find("**Grants.**");
  const size_t begin = guide.find("```sql\n", grants);
  const size_t end = guide.find("```", begin + 7);
  EXPECT_NE(grants, std::string::npos);
  EXPECT_NE(begin, std::string::npos);
  if (grants == std::string::npos || begin == std::string::npos || end == std::string::npos) return {};
  std::string sql = guide.substr(begin + 7, end - begin - 7);
  sql = std::regex_replace(sql, std::regex("--[^\n]*"), "");
  sql = std::regex_replace(sql, std::regex("'rendezvous_migrate'@'10\\.0\\.%'"),
                           "'" + migrate_user + "'@'localhost'");
  sql = std::regex_replace(sql, std::regex("'rendezvous'@'10\\.0\\.%'"), "'" + serve_user + "'@'localhost'");
  sql = std::regex_replace(sql, std::regex("IDENTIFIED BY '\\.\\.\\.'"), "IDENTIFIED BY '" + password + "'");
  sql = std::regex_replace(sql, std::regex("\\brendezvous\\."), "`" + database + "`.");
  std::vector<std::string> statements;
  size_t at = 0;
  for (size_t semi = sql.find(';'); semi != std::string::npos; at = semi + 1, semi = sql.find(';', at))
    statements.push_back(sql.substr(at, semi - at));
  return statements;
}

class Accounts {
 public:
  Accounts(const ScratchDatabase& db, std::vector<std::string> users) : db_(db), users_(std::move(users)) {}
  ~Accounts() {
    for (const auto& u : users_) db_.Exec("DROP USER IF EXISTS '" + u + "'@'localhost'");
  }

 private:
  const ScratchDatabase& db_;
  std::vector<std::string> users_;
};

// The test server's config with another database account.
void UseAccount(TestServer& server, const std::string& user, const std::string& password) {
  const std::string yaml = ReadFile(server.config_path());
  static const std::regex kAccount("\n  user: [^\n]*\n  password: [^\n]*\n");
  ASSERT_TRUE(std::regex_search(yaml, kAccount)) << yaml;
  server.WriteConfig(
      std::regex_replace(yaml, kAccount, "\n  user: " + user + "\n  password: \"" + password + "\"\n"));
}

TEST(OperationsSchema, TheGuidesAccountsMigrateAndServeAndTheProcedureNeedsExecute) {
  ScratchDatabase db;
  const std::string migrate_user = db.name() + "_m";
  const std::string serve_user = db.name() + "_s";
  const std::string password = "guide-grants-pw";
  Accounts accounts(db, {migrate_user, serve_user});
  const std::vector<std::string> statements = GuideGrants(db.name(), migrate_user, serve_user, password);
  ASSERT_EQ(statements.size(), 7u);

  // The procedure-level grant needs the procedure: the accounts and the schema grants first.
  TestServer server(db.name());
  for (const std::string& s : statements)
    if (s.find("ON PROCEDURE") == std::string::npos) db.Exec(s);
  UseAccount(server, migrate_user, password);
  server.Migrate();
  for (const std::string& s : statements)
    if (s.find("ON PROCEDURE") != std::string::npos) db.Exec(s);

  UseAccount(server, serve_user, password);
  // DDL is not the serving account's: `migrate` needs the other one.
  EXPECT_NE(server.Cli({"migrate"}).exit_code, 0);
  std::string why;
  ASSERT_TRUE(server.Start(&why)) << why;
  const int64_t user = server.CreateUser("ada@example.com");
  ASSERT_GT(user, 0);
  OAuthGrant grant = GrantOAuthToken(server, db, user, user, {"PROFILE_READ"}, {"PROFILE_READ"});
  ASSERT_FALSE(grant.refresh_token.empty());

  HttpClient http;
  auto refresh = [&](const std::string& token) {
    return http.Request("POST", server.api() + "/v2/auth/oauth2/token",
                        "grant_type=refresh_token&refresh_token=" + FormEncode(token) + "&client_id=" +
                            FormEncode(grant.client_id) + "&client_secret=" + FormEncode(grant.client_secret),
                        {"Content-Type: application/x-www-form-urlencoded"});
  };
  HttpResult rotated = refresh(grant.refresh_token);
  ASSERT_EQ(rotated.status, 200) << rotated.body;
  const std::string next = rotated.Json().value("refresh_token", "");
  ASSERT_FALSE(next.empty());
  // Reuse detection revokes through oauth_revoke_grant, which the serving account may not execute:
  // the grant procedure runs it with its definer's rights, revocation log row included.
  EXPECT_EQ(refresh(grant.refresh_token).status, 400);
  EXPECT_EQ(db.QueryValue("SELECT COUNT(*) FROM oauth_revocations WHERE kind = 'grant'"), "1");

  db.Exec("REVOKE EXECUTE ON PROCEDURE `" + db.name() + "`.oauth_refresh_grant FROM '" + serve_user +
          "'@'localhost'");
  HttpResult denied = refresh(next);
  EXPECT_GE(denied.status, 500) << denied.body;
  EXPECT_NE(server.Log().find("oauth_refresh_grant"), std::string::npos) << "the denial is not logged";
  EXPECT_NE(http.Get(server.api() + "/metrics")
                .body.find("oauth_token_grants_total{grant_type=\"refresh_token\",outcome=\"failed\"} 1\n"),
            std::string::npos);
}

}  // namespace
}  // namespace rendezvous::testing
