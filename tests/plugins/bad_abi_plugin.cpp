// Declares an ABI version the host does not speak.
#include "rendezvous/plugin.hpp"

namespace {
rendezvous::Plugin* Create(rendezvous::PluginContext*, std::string* error) noexcept {
  *error = "must never be called";
  return nullptr;
}
const char* const kDeps[] = {nullptr};
const rendezvous_plugin_descriptor kDescriptor = {999, RENDEZVOUS_BUILD_SIGNATURE, "bad_abi", kDeps, &Create};
}  // namespace

RENDEZVOUS_PLUGIN_EXPORT const rendezvous_plugin_descriptor* rendezvous_plugin_entry() { return &kDescriptor; }
