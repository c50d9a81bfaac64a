// Metrics a plugin exports on /metrics (Prometheus text format), without seeing the metrics
// library. A family has a name, a help text and its label names, declared once, up front; each
// combination of label values is one child, found with With():
//
//   MetricFamily& requests = ctx.metrics().Counter("calendar_ics_fetches_total",
//                                                  "ICS feed downloads by outcome.", {"outcome"});
//   requests.With({"ok"}).Increment();
//
// Ownership: the host owns families and children; references stay valid for the life of the
// process (plugins may keep them, e.g. captured in route handlers). Thread-safety: every call is
// thread-safe; keep a child reference on hot paths to skip the look-up in With().
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

namespace rendezvous {

// One time series: a counter, a gauge or a histogram. Calls that do not fit the family's kind
// are ignored (a counter has no Set, a gauge no Observe); a counter ignores negative amounts.
class Metric {
 public:
  virtual ~Metric() = default;
  void Increment() { Add(1.0); }
  virtual void Add(double amount) = 0;
  // Gauges: the current value.
  virtual void Set(double value) = 0;
  // Histograms: one observation (seconds, bytes, ...).
  virtual void Observe(double value) = 0;
};

class MetricFamily {
 public:
  virtual ~MetricFamily() = default;
  // The child for these label values, created on first use. Values are given in the order the
  // label names were declared; a different count throws std::invalid_argument.
  virtual Metric& With(const std::vector<std::string>& label_values) = 0;
  // The child of a family declared without labels.
  Metric& With() { return With(std::vector<std::string>{}); }
};

// The process's metrics, as lent to a plugin. Names follow Prometheus rules (`[a-zA-Z_:][a-zA-Z0-9_:]*`,
// counters end in _total); an invalid name or label, or a name already registered with another
// kind, help or label set, throws std::invalid_argument (a start-up error). Declaring the same
// family twice with the same shape returns the same family.
class Metrics {
 public:
  virtual ~Metrics() = default;
  virtual MetricFamily& Counter(const std::string& name, const std::string& help,
                                const std::vector<std::string>& labels = {}) = 0;
  virtual MetricFamily& Gauge(const std::string& name, const std::string& help,
                              const std::vector<std::string>& labels = {}) = 0;
  // `buckets`: the upper bounds, increasing (the +Inf bucket is implied).
  virtual MetricFamily& Histogram(const std::string& name, const std::string& help,
                                  const std::vector<std::string>& labels, const std::vector<double>& buckets) = 0;
};

}  // namespace rendezvous
