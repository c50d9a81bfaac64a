// The metrics facade plugins see, over a real prometheus-cpp registry and the /metrics text.
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "metrics/metrics_registry.hpp"
#include "metrics/prometheus_metrics.hpp"

namespace rendezvous::core {
namespace {

bool Has(const std::string& text, const std::string& line) { return text.find(line) != std::string::npos; }

TEST(MetricsFacade, CountersGaugesAndHistogramsShowOnMetrics) {
  MetricsRegistry registry;
  PrometheusMetrics metrics(registry);
  MetricFamily& fetches = metrics.Counter("test_fetches_total", "Fetches by outcome.", {"outcome"});
  fetches.With({"ok"}).Increment();
  fetches.With({"ok"}).Add(2);
  fetches.With({"timeout"}).Increment();
  fetches.With({"ok"}).Add(-5);  // counters only go up
  metrics.Gauge("test_queue_depth", "Items waiting.").With().Set(4);
  MetricFamily& took = metrics.Histogram("test_seconds", "Time taken.", {"step"}, {0.1, 1});
  took.With({"parse"}).Observe(0.05);
  took.With({"parse"}).Observe(0.5);

  const std::string text = SerializeMetrics(registry);
  EXPECT_TRUE(Has(text, "# HELP test_fetches_total Fetches by outcome.")) << text;
  EXPECT_TRUE(Has(text, "test_fetches_total{outcome=\"ok\"} 3")) << text;
  EXPECT_TRUE(Has(text, "test_fetches_total{outcome=\"timeout\"} 1")) << text;
  EXPECT_TRUE(Has(text, "test_queue_depth 4")) << text;
  EXPECT_TRUE(Has(text, "test_seconds_bucket{step=\"parse\",le=\"0.1\"} 1")) << text;
  EXPECT_TRUE(Has(text, "test_seconds_count{step=\"parse\"} 2")) << text;
}

TEST(MetricsFacade, DeclaringAgainReturnsTheFamilyOrRefusesAnotherShape) {
  MetricsRegistry registry;
  PrometheusMetrics metrics(registry);
  MetricFamily& a = metrics.Counter("test_total", "Help.", {"x"});
  EXPECT_EQ(&metrics.Counter("test_total", "Help.", {"x"}), &a);
  EXPECT_EQ(&a.With({"1"}), &a.With({"1"}));
  EXPECT_THROW(metrics.Counter("test_total", "Help.", {"y"}), std::invalid_argument);
  EXPECT_THROW(metrics.Gauge("test_total", "Help.", {"x"}), std::invalid_argument);
  EXPECT_THROW(a.With({"1", "2"}), std::invalid_argument);
  EXPECT_THROW(metrics.Counter("bad name", "Help."), std::invalid_argument);
  EXPECT_THROW(metrics.Counter("test2_total", "Help.", {"bad-label"}), std::invalid_argument);
  EXPECT_THROW(metrics.Histogram("test_h", "Help.", {}, {1, 0.5}), std::invalid_argument);
}

}  // namespace
}  // namespace rendezvous::core
