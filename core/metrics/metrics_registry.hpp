// The process's metrics registry: a prometheus::Registry that also reports collectables computed
// at scrape time (process metrics, pool gauges read from their source). Everything that takes a
// prometheus::Registry& (plugins, the HTTP layer) sees one registry; Collect() returns both.
// Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/registry.h>

namespace rendezvous::core {

class MetricsRegistry : public prometheus::Registry {
 public:
  // The collectable is owned by the registry and collected after the registry's own families.
  void AddCollectable(std::shared_ptr<prometheus::Collectable> collectable);

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  mutable std::mutex extra_mu_;
  std::vector<std::shared_ptr<prometheus::Collectable>> extra_;
};

// Text exposition format 0.0.4 of everything the registry collects (a MetricsRegistry's
// collectables included, through the virtual Collect()).
std::string SerializeMetrics(const prometheus::Registry& registry);

// Content-Type of SerializeMetrics' output.
inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace rendezvous::core
