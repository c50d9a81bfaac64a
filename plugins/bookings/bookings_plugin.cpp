// The bookings plugin's wiring. Its config is checked here; event types, bookings and slots
// arrive with the bookings issue.
#include <memory>

#include "rendezvous/plugin.hpp"

namespace rendezvous::bookings {
namespace {

struct BookingsConfig {
  long completion_sweep_interval = 60;
};

class BookingsPlugin final : public Plugin {
 public:
  explicit BookingsPlugin(BookingsConfig config) : config_(config) {}
  Status Start() noexcept override { return Status::Ok(); }
  void Stop() noexcept override {}

 private:
  BookingsConfig config_;
};

std::unique_ptr<Plugin> Create(PluginContext& ctx) {
  ConfigNode& c = ctx.config();
  BookingsConfig config;
  config.completion_sweep_interval = c.Int("completion_sweep_interval", 60, 1, 86400);
  c.RejectUnknown();
  return std::make_unique<BookingsPlugin>(config);
}

}  // namespace
}  // namespace rendezvous::bookings

RENDEZVOUS_DEFINE_PLUGIN("bookings", &rendezvous::bookings::Create)
