#include "metrics/metrics_registry.hpp"

#include <sstream>

#include <prometheus/text_serializer.h>

namespace rendezvous::core {

void MetricsRegistry::AddCollectable(std::shared_ptr<prometheus::Collectable> collectable) {
  std::lock_guard lock(extra_mu_);
  extra_.push_back(std::move(collectable));
}

std::vector<prometheus::MetricFamily> MetricsRegistry::Collect() const {
  auto families = prometheus::Registry::Collect();
  std::vector<std::shared_ptr<prometheus::Collectable>> extra;
  {
    std::lock_guard lock(extra_mu_);
    extra = extra_;
  }
  for (const auto& c : extra) {
    auto more = c->Collect();
    families.insert(families.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return families;
}

std::string SerializeMetrics(const prometheus::Registry& registry) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry.Collect());
  return out.str();
}

}  // namespace rendezvous::core
