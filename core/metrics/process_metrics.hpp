// Process metrics in the Prometheus client conventions (process_cpu_seconds_total,
// process_resident_memory_bytes, ...), read from /proc/self on every scrape.
#pragma once

#include <memory>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

namespace rendezvous::core {

class MetricsRegistry;

// Reads /proc/self/{stat,fd} and /proc/stat at Collect(). Stateless apart from the boot time it
// caches; Collect() is thread-safe. Families it cannot read are left out rather than reported as 0.
class ProcessCollector final : public prometheus::Collectable {
 public:
  ProcessCollector();
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  double boot_time_seconds_ = 0;
};

// Attaches a ProcessCollector to the registry (owned by it from then on).
void RegisterProcessMetrics(MetricsRegistry& registry);

}  // namespace rendezvous::core
