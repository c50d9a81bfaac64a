// /metrics over HTTP: the exposition passes `promtool check metrics`, and the HTTP metrics carry
// the route template, never the raw path.
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "http/server.hpp"
#include "raw_http.hpp"
#include "metrics/metrics_registry.hpp"
#include "metrics/process_metrics.hpp"

namespace rendezvous::core {
namespace {

using namespace std::chrono_literals;

// Runs promtool on the text; returns its exit status and output.
std::pair<int, std::string> Promtool(const std::string& text) {
  char path[] = "/tmp/rdv-metrics-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  FILE* f = fdopen(fd, "w");
  fwrite(text.data(), 1, text.size(), f);
  fclose(f);
  std::string cmd = "/usr/bin/promtool check metrics < " + std::string(path) + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (p && fgets(buf, sizeof buf, p)) out += buf;
  int status = p ? pclose(p) : -1;
  unlink(path);
  return {status == -1 ? -1 : WEXITSTATUS(status), out};
}

double SampleValue(const std::string& text, const std::string& series_prefix) {
  size_t pos = text.find(series_prefix);
  if (pos == std::string::npos) return -1;
  size_t eol = text.find('\n', pos + 1);
  size_t space = text.rfind(' ', eol);
  return std::stod(text.substr(space + 1, eol - space - 1));
}

TEST(HttpMetricsTest, MetricsEndpointPassesPromtool) {
  rdv_test::MemoryLogger logger;
  MetricsRegistry registry;
  RegisterProcessMetrics(registry);
  ServerOptions o;
  o.api_listen = "127.0.0.1:0";
  o.app_listen = "127.0.0.1:0";
  HttpServer server(o, logger, registry);
  Route r;
  r.pattern = "/v2/items/:id";
  r.handler = [](Request&) { return Response::Success(true); };
  server.AddRoute(r);
  server.Start();
  uint16_t port = server.api_port();

  ASSERT_TRUE(rdv_test::Fetch(port, "GET", "/v2/items/42"));
  ASSERT_TRUE(rdv_test::Fetch(port, "GET", "/v2/items/43"));
  ASSERT_TRUE(rdv_test::Fetch(port, "GET", "/no/such/path"));
  ASSERT_TRUE(rdv_test::Fetch(port, "GET", "/healthz"));

  auto m = rdv_test::Fetch(port, "GET", "/metrics");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->status, 200);
  EXPECT_EQ(m->Header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  const std::string& text = m->body;

  auto [code, output] = Promtool(text);
  EXPECT_EQ(code, 0) << output << "\n" << text;

  EXPECT_NE(text.find("http_route=\"/v2/items/:id\""), std::string::npos) << text;
  EXPECT_NE(text.find("http_route=\"unmatched\""), std::string::npos);
  EXPECT_EQ(text.find("/v2/items/42"), std::string::npos);
  EXPECT_EQ(text.find("/no/such/path"), std::string::npos);
  EXPECT_NE(text.find("http_server_request_duration_seconds_bucket{"), std::string::npos);
  EXPECT_NE(text.find("le=\"0.0005\""), std::string::npos);
  EXPECT_NE(text.find("http_response_status_code=\"404\""), std::string::npos);
  EXPECT_NE(text.find("http_server_worker_queue_depth"), std::string::npos);
  for (const char* name : {"process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes",
                           "process_open_fds", "process_max_fds", "process_start_time_seconds"})
    EXPECT_NE(text.find(std::string("\n") + name + " "), std::string::npos) << name;
  EXPECT_GT(SampleValue(text, "\nprocess_resident_memory_bytes "), 0);
  EXPECT_GT(SampleValue(text, "\nprocess_open_fds "), 2);

  // Every request finished: the in-flight gauge returns to zero (only /metrics itself was active
  // while it rendered).
  auto deadline = rdv_test::Clock::now() + 5s;
  double active = -1;
  while (rdv_test::Clock::now() < deadline) {
    auto again = rdv_test::Fetch(port, "GET", "/metrics");
    ASSERT_TRUE(again);
    active = SampleValue(again->body, "http_server_active_requests{listener=\"api\"} ");
    if (active == 1) break;
  }
  EXPECT_EQ(active, 1);
  server.Shutdown(1s);
}

}  // namespace
}  // namespace rendezvous::core
