#include "test_server.hpp"

#include <sys/stat.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "child_process.hpp"
#include "scratch_db.hpp"

namespace rendezvous::testing {
namespace {

std::string Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::string Indent(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out += "  " + line + "\n";
  return out;
}

}  // namespace

std::string BinDir() { return Env("RDV_BIN_DIR", RDV_DEFAULT_BIN_DIR); }
std::string TestPluginDir() { return Env("RDV_TEST_PLUGIN_DIR", RDV_DEFAULT_TEST_PLUGIN_DIR); }
std::string SourceDir() { return Env("RDV_SOURCE_DIR", RDV_DEFAULT_SOURCE_DIR); }
std::string ToolsDir() { return Env("RDV_TOOLS_DIR", RDV_DEFAULT_TOOLS_DIR); }

TestServer::TestServer(std::string database_name, TestServerOptions options)
    : database_name_(std::move(database_name)), options_(std::move(options)) {
  // The server's credential encryption key (DESIGN §5), fixed for tests unless the caller set one.
  ::setenv("RENDEZVOUS_ENCRYPTION_KEY", "cmVuZGV6dm91cy10ZXN0LWtleS0zMi1ieXRlcy0hISE=", 0);
  char tmpl[] = "/tmp/rdv-test-XXXXXX";
  char* d = mkdtemp(tmpl);
  if (!d) throw std::runtime_error("mkdtemp failed");
  dir_ = d;
  ::mkdir((dir_ + "/etc").c_str(), 0755);
  config_path_ = dir_ + "/etc/rendezvous.yaml";
  WriteConfig(BuildConfig());
}

TestServer::~TestServer() {
  if (pid_ > 0) Stop(SIGKILL);
  std::string cmd = "rm -rf '" + dir_ + "'";
  if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", dir_.c_str());
}

std::string TestServer::BuildConfig() const {
  std::string socket = options_.database_socket.empty() ? TestDbSocket() : options_.database_socket;
  std::string y;
  y += "server:\n";
  y += "  api: { listen: \"127.0.0.1:0\", base_url: \"" + options_.base_url + "\" }\n";
  y += "  app: { listen: \"127.0.0.1:0\", app_url: \"" + options_.app_url + "\" }\n";
  y += "  io_threads: 2\n  worker_threads: 4\n";
  y += Indent(options_.server_extra);
  y += "database:\n  socket: \"" + socket + "\"\n  user: root\n  password: \"\"\n  name: " + database_name_ + "\n  pool_size: 4\n";
  y += "logging: { level: info, format: json }\n";
  y += "plugins:\n" + Indent(options_.plugins);
  y += options_.top_extra;
  return y;
}

void TestServer::WriteConfig(const std::string& yaml) {
  std::ofstream(config_path_, std::ios::trunc) << yaml;
}

CliResult TestServer::Cli(const std::vector<std::string>& args, std::chrono::milliseconds timeout) const {
  static int counter = 0;
  std::string base = dir_ + "/cli" + std::to_string(++counter);
  std::vector<std::string> argv = {BinDir() + "/rendezvous"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--config");
  argv.push_back(config_path_);
  pid_t pid = Spawn(argv, base + ".out", base + ".err");
  CliResult r;
  r.exit_code = WaitFor(pid, timeout);
  r.out = ReadFile(base + ".out");
  r.err = ReadFile(base + ".err");
  return r;
}

void TestServer::Migrate() const {
  CliResult r = Cli({"migrate"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

bool TestServer::Start(std::string* why) {
  std::string log = dir_ + "/server.log";
  log_offset_ = ReadFile(log).size();
  pid_ = Spawn({BinDir() + "/rendezvous", "serve", "--config", config_path_}, dir_ + "/server.out", log);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      if (why) *why = Log();
      return false;
    }
    std::string text = ReadFile(log).substr(log_offset_);
    std::istringstream in(text);
    std::string line;
    bool ready = false;
    while (std::getline(in, line)) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_object()) continue;
      if (j.value("msg", "") == "listening") {
        if (j.value("listener", "") == "api") api_port_ = j.value("port", 0);
        if (j.value("listener", "") == "app") app_port_ = j.value("port", 0);
      }
      if (j.value("msg", "") == "ready") ready = true;
    }
    if (ready && api_port_ > 0 && app_port_ > 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (why) *why = "not ready within 30 s:\n" + Log();
  Stop(SIGKILL);
  return false;
}

int TestServer::Stop(int sig, std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  kill(pid_, sig);
  int rc = WaitFor(pid_, timeout);
  pid_ = -1;
  return rc;
}

void TestServer::Signal(int sig) const {
  if (pid_ > 0) kill(pid_, sig);
}

std::string TestServer::Log() const { return ReadFile(dir_ + "/server.log"); }

bool TestServer::AwaitLog(const std::string& needle, std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Log().find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

int64_t TestServer::CreateUser(const std::string& email, const std::string& name, const std::string& password,
                               bool admin) const {
  std::vector<std::string> args = {"admin", "user", "create", "--email", email, "--name", name, "--password", password};
  if (admin) args.push_back("--admin");
  CliResult r = Cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto j = r.Json();
  return j.is_object() ? j.value("id", int64_t{0}) : 0;
}

std::string TestServer::CreateApiKey(int64_t user_id) const {
  CliResult r = Cli({"admin", "api-key", "create", "--user-id", std::to_string(user_id)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto j = r.Json();
  return j.is_object() ? j.value("key", "") : "";
}

}  // namespace rendezvous::testing
