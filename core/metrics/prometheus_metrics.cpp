#include "metrics/prometheus_metrics.hpp"

#include <stdexcept>
#include <utility>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace rendezvous::core {
namespace {

// Prometheus label names: [a-zA-Z_][a-zA-Z0-9_]*, the __ prefix reserved.
bool IsLabelName(const std::string& name) {
  if (name.empty() || name.rfind("__", 0) == 0) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

class CounterChild final : public Metric {
 public:
  explicit CounterChild(prometheus::Counter& c) : c_(c) {}
  void Add(double amount) override {
    if (amount >= 0) c_.Increment(amount);
  }
  void Set(double) override {}
  void Observe(double) override {}

 private:
  prometheus::Counter& c_;
};

class GaugeChild final : public Metric {
 public:
  explicit GaugeChild(prometheus::Gauge& g) : g_(g) {}
  void Add(double amount) override { g_.Increment(amount); }
  void Set(double value) override { g_.Set(value); }
  void Observe(double) override {}

 private:
  prometheus::Gauge& g_;
};

class HistogramChild final : public Metric {
 public:
  explicit HistogramChild(prometheus::Histogram& h) : h_(h) {}
  void Add(double) override {}
  void Set(double) override {}
  void Observe(double value) override { h_.Observe(value); }

 private:
  prometheus::Histogram& h_;
};

}  // namespace

class PrometheusMetrics::Family final : public MetricFamily {
 public:
  Family(Kind kind, std::string help, std::vector<std::string> labels, std::vector<double> buckets,
         prometheus::Registry& registry, const std::string& name)
      : kind_(kind), help_(std::move(help)), labels_(std::move(labels)), buckets_(std::move(buckets)) {
    switch (kind_) {
      case Kind::kCounter:
        counters_ = &prometheus::BuildCounter().Name(name).Help(help_).Register(registry);
        break;
      case Kind::kGauge:
        gauges_ = &prometheus::BuildGauge().Name(name).Help(help_).Register(registry);
        break;
      case Kind::kHistogram:
        histograms_ = &prometheus::BuildHistogram().Name(name).Help(help_).Register(registry);
        break;
    }
  }

  bool Matches(Kind kind, const std::string& help, const std::vector<std::string>& labels,
               const std::vector<double>& buckets) const {
    return kind_ == kind && help_ == help && labels_ == labels && buckets_ == buckets;
  }

  Metric& With(const std::vector<std::string>& values) override {
    if (values.size() != labels_.size()) {
      throw std::invalid_argument("metric labels: " + std::to_string(values.size()) + " values for " +
                                  std::to_string(labels_.size()) + " label names");
    }
    std::lock_guard lock(mu_);
    auto it = children_.find(values);
    if (it != children_.end()) return *it->second;
    prometheus::Labels map;
    for (size_t i = 0; i < labels_.size(); ++i) map.emplace(labels_[i], values[i]);
    std::unique_ptr<Metric> child;
    switch (kind_) {
      case Kind::kCounter:
        child = std::make_unique<CounterChild>(counters_->Add(map));
        break;
      case Kind::kGauge:
        child = std::make_unique<GaugeChild>(gauges_->Add(map));
        break;
      case Kind::kHistogram:
        child = std::make_unique<HistogramChild>(histograms_->Add(map, buckets_));
        break;
    }
    return *children_.emplace(values, std::move(child)).first->second;
  }


 private:
  const Kind kind_;
  const std::string help_;
  const std::vector<std::string> labels_;
  const std::vector<double> buckets_;
  prometheus::Family<prometheus::Counter>* counters_ = nullptr;
  prometheus::Family<prometheus::Gauge>* gauges_ = nullptr;
  prometheus::Family<prometheus::Histogram>* histograms_ = nullptr;
  std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<Metric>> children_;
};

PrometheusMetrics::PrometheusMetrics(prometheus::Registry& registry) : registry_(registry) {}
PrometheusMetrics::~PrometheusMetrics() = default;

MetricFamily& PrometheusMetrics::Counter(const std::string& name, const std::string& help,
                                         const std::vector<std::string>& labels) {
  return Declare(Kind::kCounter, name, help, labels, {});
}

MetricFamily& PrometheusMetrics::Gauge(const std::string& name, const std::string& help,
                                       const std::vector<std::string>& labels) {
  return Declare(Kind::kGauge, name, help, labels, {});
}

MetricFamily& PrometheusMetrics::Histogram(const std::string& name, const std::string& help,
                                           const std::vector<std::string>& labels,
                                           const std::vector<double>& buckets) {
  for (size_t i = 1; i < buckets.size(); ++i) {
    if (!(buckets[i - 1] < buckets[i])) throw std::invalid_argument("metric " + name + ": buckets must increase");
  }
  return Declare(Kind::kHistogram, name, help, labels, buckets);
}

MetricFamily& PrometheusMetrics::Declare(Kind kind, const std::string& name, const std::string& help,
                                         const std::vector<std::string>& labels,
                                         const std::vector<double>& buckets) {
  std::lock_guard lock(mu_);
  auto it = families_.find(name);
  if (it != families_.end()) {
    if (!it->second->Matches(kind, help, labels, buckets)) {
      throw std::invalid_argument("metric " + name + " is already registered with another kind, help or labels");
    }
    return *it->second;
  }
  for (const std::string& label : labels) {
    if (!IsLabelName(label)) throw std::invalid_argument("metric " + name + ": invalid label name '" + label + "'");
  }
  // prometheus-cpp checks the family name (std::invalid_argument) on registering.
  auto family = std::make_unique<Family>(kind, help, labels, buckets, registry_, name);
  return *families_.emplace(name, std::move(family)).first->second;
}

}  // namespace rendezvous::core
