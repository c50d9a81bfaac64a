// The Metrics facade of the public headers (rendezvous/metrics.hpp) over a prometheus-cpp
// registry: what plugins register shows on /metrics next to the core's own metrics.
// Thread-safe; the registry must outlive the object, which must outlive every plugin.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "rendezvous/metrics.hpp"

namespace prometheus {
class Registry;
}

namespace rendezvous::core {

class PrometheusMetrics final : public Metrics {
 public:
  explicit PrometheusMetrics(prometheus::Registry& registry);
  ~PrometheusMetrics() override;

  MetricFamily& Counter(const std::string& name, const std::string& help,
                        const std::vector<std::string>& labels = {}) override;
  MetricFamily& Gauge(const std::string& name, const std::string& help,
                      const std::vector<std::string>& labels = {}) override;
  MetricFamily& Histogram(const std::string& name, const std::string& help, const std::vector<std::string>& labels,
                          const std::vector<double>& buckets) override;

  class Family;

 private:
  enum class Kind { kCounter, kGauge, kHistogram };
  MetricFamily& Declare(Kind kind, const std::string& name, const std::string& help,
                        const std::vector<std::string>& labels, const std::vector<double>& buckets);

  prometheus::Registry& registry_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Family>> families_;
};

}  // namespace rendezvous::core
