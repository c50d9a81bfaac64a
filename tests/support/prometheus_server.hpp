// A real Prometheus (Debian's `prometheus`, found on PATH or named by $RDV_PROMETHEUS) for
// integration tests: one scrape job on loopback targets every second, optional rule files
// evaluated every second, its storage and config in a temporary folder removed at the end, its
// HTTP API on 127.0.0.1 at a port probed free. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "http_client.hpp"

namespace rendezvous::testing {

struct PrometheusOptions {
  std::string job = "rendezvous";
  std::vector<std::string> targets;      // "127.0.0.1:PORT"
  std::string metrics_path = "/metrics";
  std::vector<std::string> rule_files;   // absolute paths
};

class PrometheusServer {
 public:
  explicit PrometheusServer(PrometheusOptions options);
  ~PrometheusServer();
  PrometheusServer(const PrometheusServer&) = delete;
  PrometheusServer& operator=(const PrometheusServer&) = delete;

  // Starts Prometheus and waits (bounded) until /-/ready answers 200. False, with the reason and
  // Prometheus's log in `why`, when it could not be started.
  bool Start(std::string* why);
  void Stop();

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // GET /api/v1/query with `expr` evaluated now: the whole answer ({"status", "data"} or
  // {"status":"error", "errorType", "error"}); null when Prometheus did not answer JSON.
  nlohmann::json Query(const std::string& expr);
  // The `data.result` array of a successful instant query (empty otherwise).
  nlohmann::json Result(const std::string& expr);
  // GET of another API path ("/api/v1/rules"), parsed.
  nlohmann::json Get(const std::string& path);
  // Polls (bounded) until `expr` has a result; returns whether it did.
  bool AwaitResult(const std::string& expr, std::chrono::milliseconds timeout = std::chrono::seconds(30));
  std::string Log() const;

 private:
  bool StartOn(int port, std::string* why);

  PrometheusOptions options_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  HttpClient http_;
};

// The Prometheus binary: $RDV_PROMETHEUS, else `prometheus` on PATH ("" when there is none).
std::string PrometheusBinary();

}  // namespace rendezvous::testing
