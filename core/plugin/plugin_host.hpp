// Loads plugins (dlopen) from the `plugins:` section, gives each a PluginContext, and runs their
// lifecycle: create in config order, start in dependency order, stop in reverse.
// Not thread-safe: used by main() during start-up and shutdown only. Libraries are never
// dlclose()d: handlers registered by a plugin stay callable for the life of the process.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <typeindex>
#include <utility>
#include <vector>

#include "rendezvous/plugin.hpp"

namespace rendezvous::core {

struct PluginEntry;

// What the host lends every plugin (owned by main).
struct HostServices {
  Database* db = nullptr;
  Outbox* outbox = nullptr;
  Identity* identity = nullptr;
  Mailer* mailer = nullptr;
  ScriptRuntime* scripts = nullptr;
  Metrics* metrics = nullptr;
  Logger* logger = nullptr;
  std::string base_url;
  std::string app_url;
  std::string root_dir;
  std::string config_file;
  std::string encryption_key;  // raw 32 bytes, or empty when not configured
};

class PluginHost {
 public:
  explicit PluginHost(HostServices services);
  ~PluginHost();
  PluginHost(const PluginHost&) = delete;
  PluginHost& operator=(const PluginHost&) = delete;

  // Loads and creates every enabled plugin. `builtin_dir` is where `rendezvous_<name>.so` is looked
  // for when an entry has no `path`. Throws ConfigError (with file:line) or std::runtime_error
  // naming the library file on any problem; nothing is half-loaded on failure.
  void Load(const std::vector<PluginEntry>& entries, const std::string& builtin_dir);
  // Starts plugins in dependency order. On a failure, stops the ones started and throws.
  void StartAll();
  void StopAll() noexcept;
  // SIGHUP: Reload() on every plugin; failures are logged, the rest go on.
  void ReloadAll() noexcept;

  std::vector<std::string> plugin_names() const;
  // What plugins registered, for the HTTP server, the migrator, the bearer registry and the CLI.
  const std::vector<Route>& routes() const { return routes_; }
  const std::vector<std::pair<std::string, std::vector<Migration>>>& migrations() const { return migrations_; }
  const std::vector<std::pair<BearerKind, BearerResolver>>& resolvers() const { return resolvers_; }
  // Empty when no plugin checks DPoP proofs.
  const DpopResolver& dpop_resolver() const { return dpop_resolver_; }
  const std::map<std::string, AdminCommand>& admin_commands() const { return commands_; }
  // The plugins' own commands (`rendezvous <name> ...`, PluginContext::AddCommand).
  const std::map<std::string, AdminCommand>& cli_commands() const { return cli_commands_; }
  // A service a plugin provided (PluginContext::Provide) under `name` with type T; null when none
  // was. For the host's own wiring after Load().
  template <class T>
  std::shared_ptr<T> Find(const std::string& name) const {
    auto it = services_by_name_.find(name);
    if (it == services_by_name_.end() || it->second.first != std::type_index(typeid(T))) return nullptr;
    return std::static_pointer_cast<T>(it->second.second);
  }
  // Every service of type T the plugins provided, whatever its name (in the order of the names):
  // how the host takes the extension points it offers (user_extension.hpp).
  template <class T>
  std::vector<std::shared_ptr<T>> FindAll() const {
    std::vector<std::shared_ptr<T>> found;
    for (const auto& [name, service] : services_by_name_) {
      if (service.first == std::type_index(typeid(T)))
        found.push_back(std::static_pointer_cast<T>(service.second));
    }
    return found;
  }

 private:
  class Context;
  struct Loaded;

  HostServices services_;
  std::vector<std::unique_ptr<Loaded>> plugins_;  // in start order after Load()
  std::vector<Loaded*> started_;
  std::vector<Route> routes_;
  std::vector<std::pair<std::string, std::vector<Migration>>> migrations_;
  std::vector<std::pair<BearerKind, BearerResolver>> resolvers_;
  DpopResolver dpop_resolver_;
  std::map<std::string, AdminCommand> commands_;
  std::map<std::string, AdminCommand> cli_commands_;
  std::map<std::string, std::pair<std::type_index, std::shared_ptr<void>>> services_by_name_;
};

}  // namespace rendezvous::core
