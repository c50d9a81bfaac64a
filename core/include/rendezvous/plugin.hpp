// The plugin boundary. A plugin is a shared library (CMake MODULE) exporting one C entry point,
// `rendezvous_plugin_entry`, that returns a descriptor. The loader checks the ABI version and the
// build signature, then calls `create` with the plugin's context. Nothing throws across the
// boundary: create/start/stop/reload are noexcept and report failures as Status.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <typeindex>
#include <vector>

#include "rendezvous/config_node.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/http.hpp"
#include "rendezvous/identity.hpp"
#include "rendezvous/log.hpp"
#include "rendezvous/mailer.hpp"
#include "rendezvous/metrics.hpp"
#include "rendezvous/outbox.hpp"
#include "rendezvous/scripting.hpp"
#include "rendezvous/status.hpp"

#define RENDEZVOUS_PLUGIN_ABI_VERSION 19u

#define RENDEZVOUS_STR2(x) #x
#define RENDEZVOUS_STR(x) RENDEZVOUS_STR2(x)
#if defined(__SANITIZE_ADDRESS__)
#define RENDEZVOUS_SIG_ASAN "asan"
#else
#define RENDEZVOUS_SIG_ASAN "noasan"
#endif
#if defined(NDEBUG)
#define RENDEZVOUS_SIG_BUILD "ndebug"
#else
#define RENDEZVOUS_SIG_BUILD "debug"
#endif
// Compiler, standard library ABI, C++ standard, assertions, sanitizers. Plugin and host must agree.
#define RENDEZVOUS_BUILD_SIGNATURE                                                        \
  "gcc-" RENDEZVOUS_STR(__GNUC__) "/glibcxx-" RENDEZVOUS_STR(_GLIBCXX_USE_CXX11_ABI) "/cxx-" \
      RENDEZVOUS_STR(__cplusplus) "/" RENDEZVOUS_SIG_BUILD "/" RENDEZVOUS_SIG_ASAN

namespace rendezvous {

class PluginContext;

class Plugin {
 public:
  virtual ~Plugin() = default;
  // Begin background work. Routes, migrations, consumers and resolvers were registered in the
  // factory; they are live once every plugin has started.
  virtual Status Start() noexcept = 0;
  // Stop background work; called in reverse start order. Must return within a few seconds.
  virtual void Stop() noexcept = 0;
  // SIGHUP: reread scripts or other reloadable state. The previous state stays on failure.
  virtual Status Reload() noexcept { return Status::Ok(); }
};

// An `admin <group> ...` command: args after the group, JSON printed to `out` on success.
// Returns the process exit code.
using AdminCommand =
    std::function<int(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)>;

// What the host lends one plugin. Owned by the host; valid until the plugin is destroyed.
// Registration calls are for the factory only (start-up, single-threaded); getters are
// thread-safe.
class PluginContext {
 public:
  virtual ~PluginContext() = default;

  virtual const std::string& plugin_name() const = 0;
  // The plugin's config mapping (plugins.<name>), `enabled`/`path` already consumed.
  virtual ConfigNode& config() = 0;
  // Folder relative paths in config resolve against (DESIGN §8).
  virtual std::string ResolvePath(const std::string& relative) const = 0;
  virtual const std::string& base_url() const = 0;
  virtual const std::string& app_url() const = 0;
  // The AES-256-GCM key (raw 32 bytes) for third-party credentials at rest, read from the variable
  // named by security.encryption_key_env; empty when that variable is unset. Use with
  // Encrypt/Decrypt (crypto.hpp).
  virtual const std::string& encryption_key() const = 0;

  virtual void AddRoute(Route route) = 0;
  virtual void AddMigrations(std::vector<Migration> migrations) = 0;
  virtual void AddBearerResolver(BearerKind kind, BearerResolver resolver) = 0;
  // The resolver of tokens sent with a DPoP proof (http.hpp). One plugin at most sets one; a
  // second throws.
  virtual void SetDpopResolver(DpopResolver resolver) = 0;
  virtual void AddAdminCommand(const std::string& group, AdminCommand command) = 0;
  // A command of its own, `rendezvous <name> ...` (args after the name), run like an admin command
  // (the plugins created, nothing started). A name the host uses (serve, migrate, admin, help) or
  // another plugin registered throws.
  virtual void AddCommand(const std::string& name, AdminCommand command) = 0;

  virtual Database& db() = 0;
  virtual Outbox& outbox() = 0;
  virtual Identity& identity() = 0;
  virtual Mailer& mailer() = 0;
  virtual ScriptRuntime& scripts() = 0;
  // The plugin's metrics on /metrics (metrics.hpp).
  virtual Metrics& metrics() = 0;
  virtual Logger& logger() = 0;

  // Cross-plugin services by name ("<plugin>.<service>"), typed by a contract of
  // rendezvous/contracts/ (docs/plugin-api.md), or by an extension point of the host
  // (user_extension.hpp), which the host takes whatever its name. A service is provided in the factory and
  // found from Start() on (every factory has run by then); null when no enabled plugin provides it.
  template <class T>
  void Provide(const std::string& name, std::shared_ptr<T> service) {
    ProvideRaw(name, std::type_index(typeid(T)), std::static_pointer_cast<void>(std::move(service)));
  }
  template <class T>
  std::shared_ptr<T> Find(const std::string& name) {
    return std::static_pointer_cast<T>(FindRaw(name, std::type_index(typeid(T))));
  }

 protected:
  virtual void ProvideRaw(const std::string& name, std::type_index type, std::shared_ptr<void> service) = 0;
  virtual std::shared_ptr<void> FindRaw(const std::string& name, std::type_index type) = 0;
};

}  // namespace rendezvous

extern "C" {

struct rendezvous_plugin_descriptor {
  uint32_t abi_version;          // RENDEZVOUS_PLUGIN_ABI_VERSION
  const char* build_signature;   // RENDEZVOUS_BUILD_SIGNATURE
  const char* name;              // must equal the config key under plugins:
  const char* const* depends_on; // null-terminated list of plugin names started before this one
  // Creates the plugin: reads and checks its config, registers routes and the rest. On failure
  // returns null and writes the reason (config errors with file:line) into `error`.
  rendezvous::Plugin* (*create)(rendezvous::PluginContext* context, std::string* error) noexcept;
};

typedef const rendezvous_plugin_descriptor* (*rendezvous_plugin_entry_fn)();
}

#define RENDEZVOUS_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))

// Declares a plugin's entry point. `FACTORY` is a callable
// `std::unique_ptr<rendezvous::Plugin>(rendezvous::PluginContext&)` that may throw ConfigError;
// the names after it are the plugins this one depends on:
//   RENDEZVOUS_DEFINE_PLUGIN("reports", &MakeReports, "ledger")   // reports calls a ledger service
#define RENDEZVOUS_DEFINE_PLUGIN(NAME, FACTORY, ...)                                         \
  namespace {                                                                                   \
  rendezvous::Plugin* rendezvous_create_(rendezvous::PluginContext* ctx, std::string* error) noexcept { \
    try {                                                                                       \
      return (FACTORY)(*ctx).release();                                                         \
    } catch (const std::exception& e) {                                                         \
      *error = e.what();                                                                        \
    } catch (...) {                                                                             \
      *error = "unknown error";                                                                 \
    }                                                                                           \
    return nullptr;                                                                             \
  }                                                                                             \
  const char* const rendezvous_deps_[] = {__VA_ARGS__ __VA_OPT__(, ) nullptr};                                     \
  const rendezvous_plugin_descriptor rendezvous_descriptor_ = {                                 \
      RENDEZVOUS_PLUGIN_ABI_VERSION, RENDEZVOUS_BUILD_SIGNATURE, NAME, rendezvous_deps_,        \
      &rendezvous_create_};                                                                     \
  }                                                                                             \
  RENDEZVOUS_PLUGIN_EXPORT const rendezvous_plugin_descriptor* rendezvous_plugin_entry() {      \
    return &rendezvous_descriptor_;                                                             \
  }
