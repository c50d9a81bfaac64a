// Its factory throws (as a plugin does on bad config); the host must turn it into a clean error.
#include <memory>
#include <stdexcept>

#include "rendezvous/plugin.hpp"

namespace {
std::unique_ptr<rendezvous::Plugin> Create(rendezvous::PluginContext&) {
  throw std::runtime_error("deliberate failure in create");
}
}  // namespace

RENDEZVOUS_DEFINE_PLUGIN("throwing_create", &Create)
