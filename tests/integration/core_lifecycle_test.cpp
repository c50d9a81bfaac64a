// Start-up failures, disabled plugins, database outages, Lua reload and idle connections.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "eventually.hpp"
#include "http_client.hpp"
#include "scratch_db.hpp"
#include "test_server.hpp"

namespace rendezvous::testing {
namespace {

std::string PluginEntry(const std::string& name, const std::string& extra = "") {
  return name + ":\n  path: \"" + TestPluginDir() + "/rendezvous_" + name + ".so\"\n" + extra;
}

// `serve` must exit non-zero, quickly, with `needle` in its message.
void ExpectStartupFailure(TestServer& server, const std::string& needle) {
  CliResult r = server.Cli({"serve"}, std::chrono::seconds(20));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, -1) << "serve did not exit";
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
}

TEST(CoreStartup, BrokenPluginsStopStartup) {
  ScratchDatabase db;
  for (const auto& [name, needle] : std::vector<std::pair<std::string, std::string>>{
           {"bad_abi", "ABI version 999"},
           {"no_entry", "rendezvous_plugin_entry is missing"},
           {"throwing_create", "deliberate failure in create"},
           {"failing_start", "deliberate start failure"}}) {
    TestServerOptions o;
    o.plugins = PluginEntry(name);
    TestServer server(db.name(), o);
    SCOPED_TRACE(name);
    ExpectStartupFailure(server, needle);
    ExpectStartupFailure(server, "rendezvous_" + name + ".so");
  }
  TestServerOptions missing;
  missing.plugins = "ghost:\n  path: /nonexistent/rendezvous_ghost.so\n";
  TestServer server(db.name(), missing);
  ExpectStartupFailure(server, "/nonexistent/rendezvous_ghost.so");
  TestServerOptions unknown;
  unknown.plugins = "ghost: {}\n";
  TestServer server2(db.name(), unknown);
  ExpectStartupFailure(server2, "plugins.ghost");
}

TEST(CoreStartup, BadConfigNamesFileAndLine) {
  ScratchDatabase db;
  TestServer server(db.name());
  server.WriteConfig("server:\n  io_threads: 2\n  worker_threadz: 4\n");
  CliResult r = server.Cli({"serve"}, std::chrono::seconds(20));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(server.config_path() + ":3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("worker_threadz"), std::string::npos) << r.err;

  server.WriteConfig("server:\n  io_threads: many\n");
  r = server.Cli({"migrate"}, std::chrono::seconds(20));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(server.config_path() + ":2"), std::string::npos) << r.err;

  server.WriteConfig("plugins:\n  webhooks:\n    timeout: -5\n");
  r = server.Cli({"serve"}, std::chrono::seconds(20));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(":3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("timeout"), std::string::npos) << r.err;
}

// The credential encryption key (security.encryption_key_env): malformed stops start-up with
// exit 78 naming the variable and never printing its value.
TEST(CoreStartup, MalformedEncryptionKeyStopsStartup) {
  ScratchDatabase db;
  TestServerOptions o;
  o.top_extra = "security:\n  encryption_key_env: RDV_TEST_SHORT_KEY\n";
  TestServer server(db.name(), o);
  ::setenv("RDV_TEST_SHORT_KEY", "c2hvcnQta2V5LXZhbHVl", 1);  // "short-key-value": 15 bytes
  CliResult r = server.Cli({"migrate"}, std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 78) << r.err;
  EXPECT_NE(r.err.find("RDV_TEST_SHORT_KEY"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("32-byte"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("c2hvcnQta2V5LXZhbHVl"), std::string::npos) << r.err;
  ::setenv("RDV_TEST_SHORT_KEY", "bm90IGJhc2U2NCE=!!", 1);  // not base64 at all
  EXPECT_EQ(server.Cli({"migrate"}, std::chrono::seconds(20)).exit_code, 78);
  // Unset: fine (features that encrypt say so when used).
  ::unsetenv("RDV_TEST_SHORT_KEY");
  EXPECT_EQ(server.Cli({"migrate"}, std::chrono::seconds(20)).exit_code, 0);
}

// security.encryption_key_file: with the variable unset, the key comes from the file (relative to
// the config folder's parent), so commands run as the README shows print nothing on stderr; a file
// that is missing or holds no key stops the command with exit 78, never printing what it holds.
TEST(CoreStartup, EncryptionKeyFromFile) {
  ScratchDatabase db;
  TestServerOptions o;
  o.plugins = "calendar: {}\n";
  o.top_extra =
      "security:\n  encryption_key_env: RDV_TEST_UNSET_KEY\n  encryption_key_file: var/encryption.key\n";
  TestServer server(db.name(), o);
  ::unsetenv("RDV_TEST_UNSET_KEY");
  ::mkdir((server.dir() + "/var").c_str(), 0700);
  const std::string key_file = server.dir() + "/var/encryption.key";

  CliResult r = server.Cli({"migrate"}, std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 78) << r.err;
  EXPECT_NE(r.err.find("security.encryption_key_file: " + key_file + ": cannot read"), std::string::npos)
      << r.err;

  std::ofstream(key_file) << "c2hvcnQta2V5LXZhbHVl\n";  // "short-key-value": 15 bytes
  r = server.Cli({"migrate"}, std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 78) << r.err;
  EXPECT_NE(r.err.find("32-byte"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("c2hvcnQta2V5LXZhbHVl"), std::string::npos) << r.err;

  std::ofstream(key_file, std::ios::trunc) << "cmVuZGV6dm91cy10ZXN0LWtleS0zMi1ieXRlcy0hISE=\n";
  r = server.Cli({"migrate"}, std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("\"level\":\"warn"), std::string::npos) << r.err;
  r = server.Cli({"admin", "user", "create", "--email", "ada@example.com", "--name", "Ada", "--password",
                  "a long password"},
                 std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  r = server.Cli({"admin", "api-key", "create", "--user-id", std::to_string(r.Json()["id"].get<long>())},
                 std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");

  // Without the file, the calendar plugin says it has no key: the check above can fail.
  std::remove(key_file.c_str());
  server.WriteConfig("database:\n  socket: \"" + TestDbSocket() + "\"\n  user: root\n  name: " + db.name() +
                     "\nsecurity:\n  encryption_key_env: RDV_TEST_UNSET_KEY\nplugins:\n  calendar: {}\n");
  r = server.Cli({"admin", "user", "create", "--email", "bob@example.com", "--name", "Bob", "--password",
                  "a long password"},
                 std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("no credential encryption key"), std::string::npos) << r.err;
}

TEST(CoreStartup, DisabledPluginHasNoRoutesNorMetrics) {
  ScratchDatabase db;
  TestServerOptions on;
  on.plugins = PluginEntry("hello");
  {
    TestServer server(db.name(), on);
    server.Migrate();
    std::string why;
    ASSERT_TRUE(server.Start(&why)) << why;
    HttpClient http;
    EXPECT_EQ(http.Get(server.api() + "/v2/hello").status, 200);
    EXPECT_NE(http.Get(server.api() + "/metrics").body.find("hello_requests_total"), std::string::npos);
  }
  TestServerOptions off;
  off.plugins = PluginEntry("hello", "  enabled: false\n");
  TestServer server(db.name(), off);
  std::string why;
  ASSERT_TRUE(server.Start(&why)) << why;
  HttpClient http;
  auto r = http.Get(server.api() + "/v2/hello");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.Json()["error"]["code"], "not_found");
  EXPECT_EQ(http.Get(server.api() + "/metrics").body.find("hello_requests_total"), std::string::npos);
  EXPECT_EQ(http.Get(server.api() + "/healthz").status, 200);
}

TEST(CoreStartup, MigrateIsIdempotent) {
  ScratchDatabase db;
  TestServerOptions o;
  o.plugins = PluginEntry("hello");
  TestServer server(db.name(), o);
  CliResult first = server.Cli({"migrate"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_GE(first.Json()["applied"].size(), 3u) << first.out;
  CliResult second = server.Cli({"migrate"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.Json()["applied"].size(), 0u) << second.out;
  // Two at once: both succeed, nothing applied twice.
  ScratchDatabase db2;
  TestServer a(db2.name(), o), b(db2.name(), o);
  CliResult ra, rb;
  std::thread ta([&] { ra = a.Cli({"migrate"}); });
  std::thread tb([&] { rb = b.Cli({"migrate"}); });
  ta.join();
  tb.join();
  EXPECT_EQ(ra.exit_code, 0) << ra.err;
  EXPECT_EQ(rb.exit_code, 0) << rb.err;
  EXPECT_EQ(ra.Json()["applied"].size() + rb.Json()["applied"].size(), first.Json()["applied"].size());
}

// The migrations every deployed database has applied: once applied, a version's SQL never changes
// (the migrator refuses a database whose checksum differs), wherever its definition lives. A schema
// change is a new version; the ones below stay as they are.
TEST(CoreStartup, AppliedMigrationsKeepTheirVersionsAndSql) {
  ScratchDatabase db;
  TestServer server(db.name());
  CliResult r = server.Cli({"migrate"}, std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> applied;
  std::istringstream rows(
      db.QueryValue("SELECT GROUP_CONCAT(CONCAT_WS(' ', owner, version, checksum) SEPARATOR '\\n') FROM "
                    "schema_migrations"));
  for (std::string row; std::getline(rows, row);) applied.insert(row);
  for (const char* pinned : {
           "bookings 1 ce591b12576c9c2804f493fa3f71052cb4b2869e8ff4929b65decde5fc1306ce",
           "bookings 2 65ecaefe4f9f11e03f0db53e883252f3322ce54c4f2a7c62d1e5123c863f5de2",
           "bookings 3 fc872958268f2641b257518ce5cf17a11e06f3b2be31bf116ad8ccee16229944",
           "bookings 4 bc485648ea12347318b0d3611826838f8e9c5ce596de3c375a65c465f999e031",
           "bookings 5 a9fa65246b2800d82eb064da3ec50f6a4d69685a725db918a1699832c9a212f0",
           "calendar 1 462935b35ee4a445ddf27664691cc9833473575fe81da597253bc566a2b12887",
           "calendar 2 48cd84bb282c2bdd500062763e12edd5da89bd8f18ae1f849b655fae6034db20",
           "calendar 3 6e3a11acf4638f0e157615a90df76fce78e8c4adc227e98dd1123198020e31ae",
           "calendar 4 a241f3c37ebe114e4fefd239af64c5cfb246c99dcacefdbaaf1fcbdb6608a741",
           "identity 1 de9e91e1d6589438affa2057e3eeccd5e3506a74c329265d60d6281b09a51d85",
           "identity 2 e9320df5a7576180d4abf125f2608d713b49c621526016f4a97347fc9ecec6ea",
           "oauth 1 0e88574030c18513578307c2ceb53b68b776007fc97d7b254730277476e9fefc",
           "oauth 2 207e47000681db59f8558a26f519cfd0285d42560141c1ff62347338ae7b981d",
           "oauth 3 da412cbcbea8a9ba46e275f6f28ef43139f8560965cb474d5197dea6940fad9c",
           "outbox 1 caf18ca6551b34de1b8434a3a3c509d38f97dd2ffff0c1f586f192ab0d27c9cf",
           "outbox 2 d444709e5aa1c098d6da0efd6c7eed4670e922e8f17cda801f682fd4dcbde04b",
           "webhooks 1 7259ea7fbb12c6433464e7331d209db04bbd1a0b30df39d870c3c84a4193799a",
           "webhooks 2 d4c236b4e601ca8d4550fc0da3f7c2bb148335978912a2a5400674e6f2d313e3",
           "webhooks 3 4db1cb86b861a1be96cfda00ea68604afd08b8a7c3c614c1e4a2f2dba991b02b",
           "webhooks 4 914e7326676f0e48132595b7caebc8ee8a517eb464900663527ca961d58ef803",
           "webhooks 5 48b0c3d5d91b54460f486950a9770c3fba5d304b607244287add663bdad2f350",
           "webhooks 6 8b43ecdc7cf68b4fdfa4b980f64ea9b9fab9f32f5ad2471063304dc0037a89a4",
           "webhooks 7 6227017ef58db5840a149fc1c8ad2703115d28c7a2a64e3338e4947d32a842f2",
       }) {
    EXPECT_EQ(applied.count(pinned), 1u) << pinned << " is no longer what `migrate` applies";
  }
  CliResult again = server.Cli({"migrate"}, std::chrono::seconds(60));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.Json()["applied"].size(), 0u) << again.out;
}

TEST(CoreStartup, AdminUserCreateShape) {
  ScratchDatabase db;
  TestServer server(db.name());
  server.Migrate();
  CliResult r = server.Cli({"admin", "user", "create", "--email", "Grace@Example.com", "--name", "Grace Hopper",
                            "--password", "a long password", "--time-zone", "America/New_York"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = r.Json();
  EXPECT_GT(j["id"].get<int64_t>(), 0);
  EXPECT_EQ(j["email"], "grace@example.com");
  EXPECT_EQ(j["name"], "Grace Hopper");
  EXPECT_EQ(j["timeZone"], "America/New_York");
  CliResult dup = server.Cli({"admin", "user", "create", "--email", "grace@example.com", "--name", "G", "--password", "x"});
  EXPECT_NE(dup.exit_code, 0);
  EXPECT_FALSE(dup.err.empty());
  CliResult bad = server.Cli({"admin", "user", "create", "--email", "nope", "--name", "G", "--password", "x"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_EQ(db.QueryValue("SELECT COUNT(*) FROM users"), "1");
  // The password is stored hashed.
  EXPECT_EQ(db.QueryValue("SELECT COUNT(*) FROM users WHERE password_hash LIKE '%a long password%'"), "0");
}

TEST(CoreOutage, DatabaseDownAnswers503AndRecovers) {
  // A private MariaDB of this test's own, so stopping it disturbs no other test.
  char tmpl[] = "/tmp/rdv-outage-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string tool = ToolsDir() + "/mariadb.sh";
  ASSERT_EQ(std::system((tool + " start " + dir + " >/dev/null").c_str()), 0);
  std::string socket = dir + "/mysqld.sock";
  // Make the database on the private instance.
  ASSERT_EQ(std::system(("mariadb --no-defaults -S " + socket + " -uroot -e 'CREATE DATABASE outage'").c_str()), 0);
  TestServerOptions o;
  o.database_socket = socket;
  o.plugins = PluginEntry("hello");
  {
    TestServer server("outage", o);
    server.Migrate();
    std::string why;
    ASSERT_TRUE(server.Start(&why)) << why;
    int64_t user = server.CreateUser("bob@example.com");
    std::string key = server.CreateApiKey(user);
    HttpClient http;
    std::vector<std::string> auth = {"Authorization: Bearer " + key};
    ASSERT_EQ(http.Get(server.api() + "/v2/hello/items/1", auth).status, 404);
    ASSERT_EQ(http.Get(server.api() + "/readyz").status, 200);

    ASSERT_EQ(std::system((tool + " stop " + dir).c_str()), 0);
    auto t0 = std::chrono::steady_clock::now();
    auto down = http.Get(server.api() + "/v2/hello/items/1", auth);
    auto elapsed = std::chrono::steady_clock::now() - t0;
    EXPECT_EQ(down.status, 503) << down.body;
    EXPECT_EQ(down.Json()["error"]["code"], "service_unavailable");
    EXPECT_LT(elapsed, std::chrono::seconds(5));
    EXPECT_EQ(http.Get(server.api() + "/readyz").status, 503);
    EXPECT_EQ(http.Get(server.api() + "/healthz").status, 200);

    ASSERT_EQ(std::system((tool + " start " + dir + " >/dev/null").c_str()), 0);
    long status = 0;
    EXPECT_TRUE(Eventually("the item route answering 404",
                           {std::chrono::seconds(20), std::chrono::milliseconds(100)},
                           [&] {
                             status = http.Get(server.api() + "/v2/hello/items/1", auth).status;
                             return status == 404;
                           }))
        << "last status " << status;
    EXPECT_EQ(http.Get(server.api() + "/readyz").status, 200);
  }
  std::system((tool + " stop " + dir + "; rm -rf " + dir).c_str());
}

TEST(CoreScripting, LuaScriptReloadsOnSighup) {
  ScratchDatabase db;
  char tmpl[] = "/tmp/rdv-lua-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string script = dir + "/hello.lua";
  std::ofstream(script) << "function greet(name) return 'hello ' .. name end\n";
  TestServerOptions o;
  o.plugins = PluginEntry("hello", "  script: \"" + script + "\"\n");
  TestServer server(db.name(), o);
  server.Migrate();
  std::string why;
  ASSERT_TRUE(server.Start(&why)) << why;
  HttpClient http;
  EXPECT_EQ(http.Get(server.api() + "/v2/hello/lua?name=ada").Json()["data"], "hello ada");
  // A script that does not compile leaves the previous one in force.
  std::ofstream(script, std::ios::trunc) << "function greet(name) return 'broken' .. end\n";
  server.Signal(SIGHUP);
  ASSERT_TRUE(server.AwaitLog("reloading"));
  ASSERT_TRUE(server.AwaitLog("reload failed"));
  EXPECT_NE(server.Log().find("hello:1:"), std::string::npos) << server.Log();
  EXPECT_EQ(http.Get(server.api() + "/v2/hello/lua?name=ada").Json()["data"], "hello ada");
  std::ofstream(script, std::ios::trunc) << "function greet(name) return 'bonjour ' .. name end\n";
  server.Signal(SIGHUP);
  std::string got;
  EXPECT_TRUE(
      Eventually("the reloaded script's greeting", {std::chrono::seconds(10)},
                 [&] {
                   got = http.Get(server.api() + "/v2/hello/lua?name=ada").Json()["data"].get<std::string>();
                   return got == "bonjour ada";
                 }))
      << "last answer " << got;
  std::system(("rm -rf " + dir).c_str());
}

TEST(CoreConnections, ThousandIdleConnectionsDoNotBlockOthers) {
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = std::min<rlim_t>(rl.rlim_max, 8192);
  setrlimit(RLIMIT_NOFILE, &rl);
  ScratchDatabase db;
  TestServerOptions o;
  o.server_extra = "idle_timeout: 2\nheader_timeout: 2\n";
  TestServer server(db.name(), o);
  std::string why;
  ASSERT_TRUE(server.Start(&why)) << why;
  std::vector<int> fds;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server.api_port()));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  for (int i = 0; i < 1000; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << i;
    fds.push_back(fd);
  }
  HttpClient http;
  auto r = http.Get(server.api() + "/healthz");
  EXPECT_EQ(r.status, 200);
  // The idle ones are closed by the server after idle_timeout: reading them ends in EOF.
  timeval tv{15, 0};
  int closed = 0;
  for (int fd : fds) {
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    // The server may answer 408 before closing; read to the end of the stream.
    char buf[512];
    ssize_t n = 0;
    while ((n = recv(fd, buf, sizeof buf, 0)) > 0) {
    }
    if (n == 0 || errno == ECONNRESET) ++closed;
    close(fd);
  }
  EXPECT_EQ(closed, 1000);
  EXPECT_EQ(http.Get(server.api() + "/healthz").status, 200);
}

}  // namespace
}  // namespace rendezvous::testing
