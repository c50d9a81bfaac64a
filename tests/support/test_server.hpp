// Runs the real `rendezvous` binary for integration tests: writes a config (listeners on port 0,
// the given test database), runs CLI commands, starts and stops `serve`, reads its log.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rendezvous::testing {

struct CliResult {
  int exit_code = -1;  // -1: did not exit in time (killed)
  std::string out;
  std::string err;
  nlohmann::json Json() const { return nlohmann::json::parse(out, nullptr, false); }
};

struct TestServerOptions {
  std::string database_socket;   // default: the shared test instance
  std::string server_extra;      // YAML lines added under `server:` (unindented; indented here)
  std::string plugins;           // YAML lines under `plugins:` (unindented; indented here)
  std::string top_extra;         // more top-level YAML
  std::string base_url = "http://127.0.0.1:8080";  // server.api.base_url (the listener is on port 0)
  std::string app_url = "http://127.0.0.1:8081";   // server.app.app_url
};

// Paths from the CTest environment.
std::string BinDir();
std::string TestPluginDir();
std::string SourceDir();
std::string ToolsDir();

class TestServer {
 public:
  TestServer(std::string database_name, TestServerOptions options = {});
  ~TestServer();
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  const std::string& dir() const { return dir_; }
  const std::string& config_path() const { return config_path_; }
  // Replaces the config file with this text (for bad-config tests).
  void WriteConfig(const std::string& yaml);

  // Runs `rendezvous ARGS --config <config>` to completion (bounded by `timeout`).
  CliResult Cli(const std::vector<std::string>& args, std::chrono::milliseconds timeout = std::chrono::seconds(60)) const;
  // `migrate`, failing the test unless it exits 0.
  void Migrate() const;
  // Starts `serve` and waits (bounded) for its "ready" log line. Returns false (with the log in
  // `why`) when the process exited or did not become ready.
  bool Start(std::string* why = nullptr);
  // Sends `sig` and waits for the exit; returns the exit status (or -1).
  int Stop(int sig = 15, std::chrono::milliseconds timeout = std::chrono::seconds(20));
  void Signal(int sig) const;
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  std::string api() const { return "http://127.0.0.1:" + std::to_string(api_port_); }
  std::string app() const { return "http://127.0.0.1:" + std::to_string(app_port_); }
  int api_port() const { return api_port_; }
  int app_port() const { return app_port_; }
  // The server's stderr so far.
  std::string Log() const;
  // Waits (bounded) until the log contains `needle`.
  bool AwaitLog(const std::string& needle, std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

  // Helpers over the CLI.
  int64_t CreateUser(const std::string& email, const std::string& name = "Test User",
                     const std::string& password = "correct horse battery", bool admin = false) const;
  std::string CreateApiKey(int64_t user_id) const;

 private:
  std::string BuildConfig() const;

  std::string database_name_;
  TestServerOptions options_;
  std::string dir_;
  std::string config_path_;
  pid_t pid_ = -1;
  int api_port_ = 0;
  int app_port_ = 0;
  size_t log_offset_ = 0;
};

}  // namespace rendezvous::testing
