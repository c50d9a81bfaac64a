#include "prometheus_server.hpp"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "child_process.hpp"
#include "free_port.hpp"
#include "oauth_support.hpp"

namespace rendezvous::testing {
namespace {

std::string Quoted(const std::string& s) { return nlohmann::json(s).dump(); }

}  // namespace

std::string PrometheusBinary() {
  if (const char* named = std::getenv("RDV_PROMETHEUS"); named && *named) return named;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/prometheus";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

PrometheusServer::PrometheusServer(PrometheusOptions options) : options_(std::move(options)) {
  char tmpl[] = "/tmp/rdv-prometheus-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  std::ostringstream y;
  y << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n";
  if (!options_.rule_files.empty()) {
    y << "rule_files:\n";
    for (const std::string& f : options_.rule_files) y << "  - " << Quoted(f) << "\n";
  }
  y << "scrape_configs:\n  - job_name: " << Quoted(options_.job)
    << "\n    metrics_path: " << Quoted(options_.metrics_path) << "\n    static_configs:\n      - targets: [";
  for (size_t i = 0; i < options_.targets.size(); ++i) y << (i ? ", " : "") << Quoted(options_.targets[i]);
  y << "]\n";
  std::ofstream(dir_ + "/prometheus.yml") << y.str();
}

PrometheusServer::~PrometheusServer() {
  Stop();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

bool PrometheusServer::Start(std::string* why) {
  // The probed port may be taken before Prometheus binds it: then another one is tried.
  for (int attempt = 0; attempt < 5; ++attempt) {
    const int port = ProbeFreePort();
    if (port == 0) continue;
    if (StartOn(port, why)) return true;
    if (Log().find("address already in use") == std::string::npos) return false;
  }
  return false;
}

bool PrometheusServer::StartOn(int port, std::string* why) {
  const std::string binary = PrometheusBinary();
  if (binary.empty()) {
    if (why) *why = "no prometheus binary on PATH (Debian package `prometheus`, in the Makefile's PACKAGES)";
    return false;
  }
  port_ = port;
  std::filesystem::remove(dir_ + "/prometheus.log");
  pid_ = Spawn({binary, "--config.file=" + dir_ + "/prometheus.yml", "--storage.tsdb.path=" + dir_ + "/data",
                "--web.listen-address=127.0.0.1:" + std::to_string(port), "--storage.tsdb.retention.time=1d",
                "--log.level=info"},
               dir_ + "/prometheus.out", dir_ + "/prometheus.log");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      if (why) *why = "prometheus exited:\n" + Log();
      return false;
    }
    if (http_.Request("GET", url() + "/-/ready", "", {}, 1000).status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (why) *why = "prometheus not ready within 60 s:\n" + Log();
  Stop();
  return false;
}

void PrometheusServer::Stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  WaitFor(pid_, std::chrono::seconds(20));
  pid_ = -1;
}

nlohmann::json PrometheusServer::Query(const std::string& expr) {
  HttpResult r = http_.Request("POST", url() + "/api/v1/query", "query=" + FormEncode(expr),
                               {"Content-Type: application/x-www-form-urlencoded"});
  return r.Json();
}

nlohmann::json PrometheusServer::Result(const std::string& expr) {
  nlohmann::json answer = Query(expr);
  if (!answer.is_object() || answer.value("status", "") != "success") return nlohmann::json::array();
  const nlohmann::json& result = answer["data"]["result"];
  return result.is_array() ? result : nlohmann::json::array();
}

nlohmann::json PrometheusServer::Get(const std::string& path) { return http_.Get(url() + path).Json(); }

bool PrometheusServer::AwaitResult(const std::string& expr, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (Result(expr).empty()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

std::string PrometheusServer::Log() const { return ReadFile(dir_ + "/prometheus.log"); }

}  // namespace rendezvous::testing
