// Process metrics read from /proc and the registry that reports them with its own families.
#include <unistd.h>

#include <ctime>
#include <set>

#include <gtest/gtest.h>
#include <prometheus/counter.h>

#include "metrics/metrics_registry.hpp"
#include "metrics/process_metrics.hpp"

namespace rendezvous::core {
namespace {

TEST(ProcessMetricsTest, ReportsPlausibleValues) {
  ProcessCollector collector;
  std::map<std::string, prometheus::MetricFamily> by_name;
  for (auto& f : collector.Collect()) by_name[f.name] = f;
  ASSERT_EQ(by_name.size(), 6u);
  EXPECT_EQ(by_name["process_cpu_seconds_total"].type, prometheus::MetricType::Counter);
  EXPECT_GE(by_name["process_cpu_seconds_total"].metric.at(0).counter.value, 0);
  EXPECT_GT(by_name["process_resident_memory_bytes"].metric.at(0).gauge.value, 1024 * 1024);
  EXPECT_GE(by_name["process_virtual_memory_bytes"].metric.at(0).gauge.value,
            by_name["process_resident_memory_bytes"].metric.at(0).gauge.value);
  double start = by_name["process_start_time_seconds"].metric.at(0).gauge.value;
  EXPECT_LE(start, static_cast<double>(std::time(nullptr)) + 1);
  EXPECT_GT(start, static_cast<double>(std::time(nullptr)) - 3600);

  double fds_before = by_name["process_open_fds"].metric.at(0).gauge.value;
  int extra = dup(0);
  ASSERT_GE(extra, 0);
  double fds_after = 0;
  for (auto& f : collector.Collect())
    if (f.name == "process_open_fds") fds_after = f.metric.at(0).gauge.value;
  close(extra);
  EXPECT_EQ(fds_after, fds_before + 1);
  EXPECT_GE(by_name["process_max_fds"].metric.at(0).gauge.value, fds_before);
}

TEST(ProcessMetricsTest, RegistryCollectsItsFamiliesAndCollectables) {
  MetricsRegistry registry;
  prometheus::BuildCounter().Name("things_total").Help("Things.").Register(registry).Add({}).Increment();
  RegisterProcessMetrics(registry);
  std::set<std::string> names;
  for (const auto& f : registry.Collect()) names.insert(f.name);
  EXPECT_TRUE(names.count("things_total"));
  EXPECT_TRUE(names.count("process_open_fds"));
  std::string text = SerializeMetrics(registry);
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter"), std::string::npos) << text;
  EXPECT_NE(text.find("things_total 1"), std::string::npos) << text;
}

}  // namespace
}  // namespace rendezvous::core
