// The backup and restore of docs/operations.md with the real client tools: a dump taken with the
// guide's mariadb-dump options and loaded into another database serves the tokens issued before
// it (`migrate` finds nothing to do and refresh grants work); a dump without --routines loses the
// refresh procedure, so refresh grants fail after restoring it.
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "child_process.hpp"
#include "http_client.hpp"
#include "oauth_support.hpp"
#include "scratch_db.hpp"
#include "temp_dir.hpp"
#include "test_server.hpp"

namespace rendezvous::testing {
namespace {

class OperationsBackup : public ::testing::Test {
 protected:
  void SetUp() override {
    TestServer server(source_.name());
    server.Migrate();
    std::string why;
    ASSERT_TRUE(server.Start(&why)) << why;
    user_ = server.CreateUser("ada@example.com");
    grant_ = GrantOAuthToken(server, source_, user_, user_, {"PROFILE_READ"}, {"PROFILE_READ"});
    ASSERT_FALSE(grant_.refresh_token.empty());
    ASSERT_EQ(server.Stop(), 0);
  }

  // mariadb-dump of the source database with `options` (the client tools of the mariadb-client
  // package), loaded into `target`.
  void DumpAndRestore(const std::vector<std::string>& options, const ScratchDatabase& target) {
    const std::string dump = dir_.path() + "/" + target.name() + ".sql";
    std::vector<std::string> argv = {"/usr/bin/mariadb-dump", "--no-defaults", "--socket=" + source_.socket(), "-uroot"};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.push_back(source_.name());
    ASSERT_EQ(WaitFor(Spawn(argv, dump, dir_.path() + "/dump.err"), std::chrono::seconds(60)), 0)
        << ReadFile(dir_.path() + "/dump.err");
    ASSERT_EQ(WaitFor(Spawn({"/usr/bin/mariadb", "--no-defaults", "--socket=" + target.socket(), "-uroot",
                             target.name(), "-e", "source " + dump},
                            dir_.path() + "/load.out", dir_.path() + "/load.err"),
                      std::chrono::seconds(60)),
              0)
        << ReadFile(dir_.path() + "/load.err");
  }

  HttpResult Refresh(const TestServer& server) {
    return http_.Request("POST", server.api() + "/v2/auth/oauth2/token",
                         "grant_type=refresh_token&refresh_token=" + FormEncode(grant_.refresh_token) +
                             "&client_id=" + FormEncode(grant_.client_id) + "&client_secret=" +
                             FormEncode(grant_.client_secret),
                         {"Content-Type: application/x-www-form-urlencoded"});
  }

  rdv_test::TempDir dir_{"rdv-backup"};
  ScratchDatabase source_;
  HttpClient http_;
  int64_t user_ = 0;
  OAuthGrant grant_;
};

TEST_F(OperationsBackup, TheGuidesDumpRestoresAServingDatabase) {
  ScratchDatabase restored;
  DumpAndRestore({"--single-transaction", "--routines", "--hex-blob", "--default-character-set=utf8mb4"}, restored);
  if (HasFatalFailure()) return;
  TestServer server(restored.name());
  CliResult migrated = server.Cli({"migrate"});
  ASSERT_EQ(migrated.exit_code, 0) << migrated.err;
  EXPECT_EQ(migrated.Json()["applied"], nlohmann::json::array()) << migrated.out;
  std::string why;
  ASSERT_TRUE(server.Start(&why)) << why;
  HttpResult me = http_.Get(server.api() + "/v2/me", {"Authorization: Bearer " + grant_.access_token});
  EXPECT_EQ(me.status, 200) << me.body;
  HttpResult refreshed = Refresh(server);
  EXPECT_EQ(refreshed.status, 200) << refreshed.body;
}

TEST_F(OperationsBackup, ADumpWithoutRoutinesLosesTheRefreshProcedure) {
  ScratchDatabase restored;
  DumpAndRestore({"--single-transaction", "--hex-blob", "--default-character-set=utf8mb4"}, restored);
  if (HasFatalFailure()) return;
  TestServer server(restored.name());
  CliResult migrated = server.Cli({"migrate"});
  ASSERT_EQ(migrated.exit_code, 0) << migrated.err;
  EXPECT_EQ(migrated.Json()["applied"], nlohmann::json::array()) << "migrate does not bring the procedure back";
  std::string why;
  ASSERT_TRUE(server.Start(&why)) << why;
  EXPECT_GE(Refresh(server).status, 500);
}

}  // namespace
}  // namespace rendezvous::testing
