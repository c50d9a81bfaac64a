// The assembled process: config, database, outbox, mail and SMS, identity, Lua, metrics and plugins, built
// the same way for `serve`, `migrate` and `admin`. Owned by the command that runs.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "identity/identity_service.hpp"
#include "metrics/metrics_registry.hpp"
#include "metrics/prometheus_metrics.hpp"
#include "notify/mail_service.hpp"
#include "notify/sms_service.hpp"
#include "plugin/plugin_host.hpp"
#include "scripting/lua_runtime.hpp"
#include "storage/migrator.hpp"
#include "storage/mysql_database.hpp"
#include "storage/outbox_service.hpp"

namespace rendezvous::core {

class Runtime {
 public:
  // Loads config and plugins (no database connection is made yet). Throws ConfigError. `quiet`
  // (one-shot admin commands): only warnings and errors are logged, so stdout's JSON stands alone
  // and stderr stays empty unless something is wrong.
  explicit Runtime(const std::string& config_path, bool quiet = false);
  ~Runtime();

  Config& config() { return config_; }
  MetricsRegistry& registry() { return *registry_; }
  MysqlDatabase& db() { return *db_; }
  OutboxService& outbox() { return *outbox_; }
  MailService& mail() { return *mail_; }
  SmsService& sms() { return *sms_; }
  IdentityService& identity() { return *identity_; }
  LuaRuntime& lua() { return *lua_; }
  PluginHost& plugins() { return *plugins_; }

  // Every owner's migrations: the core's first, then each plugin's.
  std::vector<std::pair<std::string, std::vector<Migration>>> AllMigrations() const;
  // The single bearer authenticator of the HTTP layer: API keys by prefix, then plugin resolvers.
  std::optional<Principal> Authenticate(std::string_view token);

 private:
  Config config_;
  std::unique_ptr<MetricsRegistry> registry_;
  std::unique_ptr<PrometheusMetrics> plugin_metrics_;  // what plugins see of registry_
  std::unique_ptr<MysqlDatabase> db_;
  std::unique_ptr<OutboxService> outbox_;
  std::unique_ptr<MailService> mail_;  // its outbox consumer is subscribed at construction
  std::unique_ptr<SmsService> sms_;    // likewise
  std::unique_ptr<IdentityService> identity_;
  std::unique_ptr<LuaRuntime> lua_;
  std::unique_ptr<PluginHost> plugins_;
};

// Folder of the running executable.
std::string ExecutableDir();
// Where the plugins named without `path:` live: the folder of the host library (librendezvous_host.so)
// this process loaded, which the build puts next to the binary and an install puts with the plugins
// (<libdir>/rendezvous). The executable's folder when that cannot be told.
std::string PluginDir();

}  // namespace rendezvous::core
