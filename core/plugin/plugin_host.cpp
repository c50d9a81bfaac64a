#include "plugin/plugin_host.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <functional>
#include <set>
#include <stdexcept>

#include "config/config.hpp"
#include "config/config_value.hpp"

extern "C" {
using RendezvousEntry = const rendezvous_plugin_descriptor* (*)();
}

namespace rendezvous {
const char* HostBuildSignature();
}

namespace rendezvous::core {

struct PluginHost::Loaded {
  std::string name;
  std::string file;
  void* handle = nullptr;
  const rendezvous_plugin_descriptor* descriptor = nullptr;
  std::vector<std::string> depends_on;
  std::unique_ptr<Context> context;
  std::unique_ptr<Plugin> plugin;
};

class PluginHost::Context final : public PluginContext {
 public:
  Context(PluginHost& host, std::string name, ConfigNode config)
      : host_(host), name_(std::move(name)), config_(std::move(config)) {}

  const std::string& plugin_name() const override { return name_; }
  ConfigNode& config() override { return config_; }
  std::string ResolvePath(const std::string& relative) const override {
    if (relative.empty() || relative.front() == '/') return relative;
    return host_.services_.root_dir + "/" + relative;
  }
  const std::string& base_url() const override { return host_.services_.base_url; }
  const std::string& app_url() const override { return host_.services_.app_url; }
  const std::string& encryption_key() const override { return host_.services_.encryption_key; }

  void AddRoute(Route route) override { host_.routes_.push_back(std::move(route)); }
  void AddMigrations(std::vector<Migration> migrations) override {
    for (auto& [owner, list] : host_.migrations_) {
      if (owner != name_) continue;
      list.insert(list.end(), std::make_move_iterator(migrations.begin()), std::make_move_iterator(migrations.end()));
      return;
    }
    host_.migrations_.emplace_back(name_, std::move(migrations));
  }
  void AddBearerResolver(BearerKind kind, BearerResolver resolver) override {
    host_.resolvers_.emplace_back(kind, std::move(resolver));
  }
  void SetDpopResolver(DpopResolver resolver) override {
    if (host_.dpop_resolver_)
      throw std::runtime_error("plugin " + name_ + ": a DPoP resolver is already set");
    host_.dpop_resolver_ = std::move(resolver);
  }
  void AddAdminCommand(const std::string& group, AdminCommand command) override {
    if (!host_.commands_.emplace(group, std::move(command)).second)
      throw std::runtime_error("plugin " + name_ + ": admin command group '" + group + "' is already registered");
  }

  void AddCommand(const std::string& name, AdminCommand command) override {
    if (name == "serve" || name == "migrate" || name == "admin" || name == "help" || name.empty() ||
        name[0] == '-')
      throw std::runtime_error("plugin " + name_ + ": '" + name + "' cannot name a plugin's command");
    if (!host_.cli_commands_.emplace(name, std::move(command)).second)
      throw std::runtime_error("plugin " + name_ + ": command '" + name + "' is already registered");
  }

  Database& db() override { return *host_.services_.db; }
  Outbox& outbox() override { return *host_.services_.outbox; }
  Identity& identity() override { return *host_.services_.identity; }
  Mailer& mailer() override { return *host_.services_.mailer; }
  ScriptRuntime& scripts() override { return *host_.services_.scripts; }
  Metrics& metrics() override { return *host_.services_.metrics; }
  Logger& logger() override { return *host_.services_.logger; }

 protected:
  void ProvideRaw(const std::string& name, std::type_index type, std::shared_ptr<void> service) override {
    if (!host_.services_by_name_.emplace(name, std::make_pair(type, std::move(service))).second)
      throw std::runtime_error("plugin " + name_ + ": service '" + name + "' is already provided");
  }
  std::shared_ptr<void> FindRaw(const std::string& name, std::type_index type) override {
    auto it = host_.services_by_name_.find(name);
    if (it == host_.services_by_name_.end() || it->second.first != type) return nullptr;
    return it->second.second;
  }

 private:
  PluginHost& host_;
  std::string name_;
  ConfigNode config_;
};

namespace {

bool FileExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string Where(const std::string& file, int line, const std::string& name) {
  return file + ":" + std::to_string(line) + ": plugins." + name;
}

}  // namespace

PluginHost::PluginHost(HostServices services) : services_(std::move(services)) {}

PluginHost::~PluginHost() {
  StopAll();
  // Plugin objects go before their libraries would; the libraries themselves stay mapped.
  for (auto it = plugins_.rbegin(); it != plugins_.rend(); ++it) (*it)->plugin.reset();
}

void PluginHost::Load(const std::vector<PluginEntry>& entries, const std::string& builtin_dir) {
  std::vector<std::unique_ptr<Loaded>> loaded;
  std::set<std::string> enabled;
  for (const auto& e : entries)
    if (e.enabled) enabled.insert(e.name);

  std::map<std::string, std::string> name_to_file;
  for (const auto& e : entries) {
    if (!e.enabled) continue;
    const std::string where = Where(services_.config_file, e.line, e.name);
    std::string file = e.path.empty() ? builtin_dir + "/rendezvous_" + e.name + ".so" : e.path;
    if (!FileExists(file))
      throw ConfigError(where + ": no plugin library " + file +
                        (e.path.empty() ? " (unknown plugin name, or set `path:`)" : ""));
    void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* err = ::dlerror();
      throw ConfigError(where + ": cannot load " + file + ": " + (err ? err : "dlopen failed"));
    }
    auto entry = reinterpret_cast<RendezvousEntry>(::dlsym(handle, "rendezvous_plugin_entry"));
    if (!entry)
      throw ConfigError(where + ": " + file + " is not a Rendezvous plugin: symbol rendezvous_plugin_entry is missing");
    const rendezvous_plugin_descriptor* d = entry();
    if (!d) throw ConfigError(where + ": " + file + ": rendezvous_plugin_entry returned no descriptor");
    if (d->abi_version != RENDEZVOUS_PLUGIN_ABI_VERSION)
      throw ConfigError(where + ": " + file + ": plugin ABI version " + std::to_string(d->abi_version) +
                        ", this host speaks version " + std::to_string(RENDEZVOUS_PLUGIN_ABI_VERSION));
    const std::string sig = d->build_signature ? d->build_signature : "";
    if (sig != HostBuildSignature())
      throw ConfigError(where + ": " + file + ": plugin built as '" + sig + "', host built as '" +
                        HostBuildSignature() + "'; rebuild the plugin with the host");
    const std::string dname = d->name ? d->name : "";
    if (dname != e.name)
      throw ConfigError(where + ": " + file + " is plugin '" + dname + "', configured as '" + e.name + "'");
    if (!d->create) throw ConfigError(where + ": " + file + ": descriptor has no create function");
    auto [it, fresh] = name_to_file.emplace(dname, file);
    if (!fresh)
      throw ConfigError(where + ": duplicate plugin name '" + dname + "' (" + it->second + " and " + file + ")");

    auto l = std::make_unique<Loaded>();
    l->name = e.name;
    l->file = file;
    l->handle = handle;
    l->descriptor = d;
    for (const char* const* dep = d->depends_on; dep && *dep; ++dep) {
      if (!enabled.count(*dep))
        throw ConfigError(where + ": plugin '" + e.name + "' needs plugin '" + *dep + "', which is not enabled");
      l->depends_on.emplace_back(*dep);
    }
    ConfigNode node(ConfigValue{e.node}, services_.config_file, "plugins." + e.name, e.line);
    node.MarkRead("enabled");
    node.MarkRead("path");
    l->context = std::make_unique<Context>(*this, e.name, std::move(node));
    loaded.push_back(std::move(l));
  }

  // Dependency order (stable with respect to config order); a cycle is a config error.
  std::vector<std::unique_ptr<Loaded>> ordered;
  std::set<std::string> placed;
  while (!loaded.empty()) {
    auto ready = std::find_if(loaded.begin(), loaded.end(), [&](const auto& l) {
      return std::all_of(l->depends_on.begin(), l->depends_on.end(),
                         [&](const std::string& d) { return placed.count(d) != 0; });
    });
    if (ready == loaded.end())
      throw ConfigError(services_.config_file + ": plugins: dependency cycle among " + loaded.front()->name);
    placed.insert((*ready)->name);
    ordered.push_back(std::move(*ready));
    loaded.erase(ready);
  }

  for (auto& l : ordered) {
    std::string error;
    Plugin* p = l->descriptor->create(l->context.get(), &error);
    if (!p)
      throw ConfigError((error.empty() ? std::string("creation failed") : error) + " (plugin '" + l->name + "', " +
                        l->file + ")");
    l->plugin.reset(p);
    services_.logger->Info("plugin loaded", {{"plugin", l->name}, {"file", l->file}});
  }
  plugins_ = std::move(ordered);
}

void PluginHost::StartAll() {
  for (auto& l : plugins_) {
    Status s = l->plugin->Start();
    if (!s.ok()) {
      StopAll();
      throw std::runtime_error("plugin " + l->name + " (" + l->file + ") failed to start: " + s.message());
    }
    started_.push_back(l.get());
  }
}

void PluginHost::StopAll() noexcept {
  while (!started_.empty()) {
    Loaded* l = started_.back();
    started_.pop_back();
    l->plugin->Stop();
    services_.logger->Info("plugin stopped", {{"plugin", l->name}});
  }
}

void PluginHost::ReloadAll() noexcept {
  for (auto* l : started_) {
    Status s = l->plugin->Reload();
    if (!s.ok()) services_.logger->Warn("plugin reload failed", {{"plugin", l->name}, {"error", s.message()}});
  }
}

std::vector<std::string> PluginHost::plugin_names() const {
  std::vector<std::string> out;
  for (const auto& l : plugins_) out.push_back(l->name);
  return out;
}

}  // namespace rendezvous::core
