// Creates fine, fails to start.
#include <memory>

#include "rendezvous/plugin.hpp"

namespace {
class Failing final : public rendezvous::Plugin {
 public:
  rendezvous::Status Start() noexcept override {
    return {rendezvous::ErrorCode::kInternal, "deliberate start failure"};
  }
  void Stop() noexcept override {}
};
std::unique_ptr<rendezvous::Plugin> Create(rendezvous::PluginContext& ctx) {
  ctx.config().RejectUnknown();
  return std::make_unique<Failing>();
}
}  // namespace

RENDEZVOUS_DEFINE_PLUGIN("failing_start", &Create)
