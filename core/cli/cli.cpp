#include "cli/cli.hpp"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/runtime.hpp"
#include "http/server.hpp"
#include "log/logger.hpp"
#include "metrics/process_metrics.hpp"
#include "rendezvous/cli_args.hpp"

namespace rendezvous::core {
namespace {

constexpr const char* kUsage = R"(usage: rendezvous COMMAND [--config FILE] ...
  serve                      run the server
  migrate                    apply pending database migrations
  admin user create --email E --name N --password P [--time-zone TZ] [--admin]
  admin api-key create --user-id ID [--name N]
  admin outbox parked [--consumer NAME] | replay ID | drop ID
  admin GROUP ...            admin commands of the enabled plugins (oauth-client, managed-user, booking ...)
  COMMAND ...                commands of the enabled plugins, e.g. the webhooks plugin's
                             lua check --hook filter|render --script FILE [--event FILE] [--webhook FILE]
  --version                  print the version, the build signature and the plugin ABI
--config defaults to etc/rendezvous.yaml.
)";

ServerOptions MakeServerOptions(const Config& c) {
  ServerOptions o;
  o.api_listen = c.api.listen;
  o.app_listen = c.app.listen;
  o.io_threads = c.io_threads;
  o.worker_threads = c.worker_threads;
  o.app_worker_threads = c.app_worker_threads;
  o.outbound_threads = c.outbound_threads;
  o.outbound_per_user = c.outbound_per_user;
  o.public_worker_threads = c.public_worker_threads;
  o.public_worker_nice = c.public_worker_nice;
  o.max_connections = static_cast<size_t>(c.max_connections);
  o.max_connections_per_ip = static_cast<size_t>(c.max_connections_per_ip);
  o.max_buffered_bytes = static_cast<size_t>(c.max_buffered_bytes);
  o.idle_timeout = std::chrono::seconds(c.idle_timeout);
  o.header_timeout = std::chrono::seconds(c.header_timeout);
  o.body_timeout = std::chrono::seconds(c.body_timeout);
  o.max_body_bytes = static_cast<size_t>(c.max_body_bytes);
  o.version_header = c.version_header;
  o.api_versions = c.api_versions;
  o.metrics_path = c.metrics.path;
  o.metrics_listen = c.metrics.listen;
  std::vector<AddressRange> trusted;
  for (const std::string& range : c.trusted_proxies) trusted.push_back(*ParseAddressRange(range));
  o.trusted_proxies = TrustedProxies(std::move(trusted));
  o.rate_limit_per_credential = c.rate_limit_per_credential;
  o.base_url = c.api.base_url;
  o.app_url = c.app.base_url;
  return o;
}

int Serve(Runtime& rt) {
  Logger& log = ProcessLogger();
  // Signals are taken by this thread with sigwait; every thread created from here on blocks them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  RegisterProcessMetrics(rt.registry());
  HttpServer server(MakeServerOptions(rt.config()), log, rt.registry());
  rt.identity().RegisterRoutes([&](Route r) { server.AddRoute(std::move(r)); });
  for (const auto& r : rt.plugins().routes()) server.AddRoute(r);
  server.SetBearerAuthenticator([&rt](std::string_view token) { return rt.Authenticate(token); });
  // The proof's htu is judged against the configured base URL, not the Host header: behind a
  // proxy the public URL is the one clients sign.
  if (rt.plugins().dpop_resolver()) {
    server.SetDpopAuthenticator([&rt](std::string_view token, std::string_view proof, std::string_view method,
                                      std::string_view path) {
      return rt.plugins().dpop_resolver()(token, proof, method, rt.config().api.base_url + std::string(path));
    });
  }
  server.SetSessionChecker([&rt](const Request& req) { return rt.identity().SessionUser(req).has_value(); });
  server.SetReadinessCheck([&rt] { return rt.db().Ping(); });

  rt.plugins().StartAll();
  rt.outbox().Start();
  server.Start();
  log.Info("listening", {{"listener", "api"}, {"port", server.api_port()}, {"base_url", rt.config().api.base_url}});
  log.Info("listening", {{"listener", "app"}, {"port", server.app_port()}, {"app_url", rt.config().app.base_url}});
  log.Info("ready", {{"plugins", rt.plugins().plugin_names()}});

  for (;;) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0) continue;
    if (sig == SIGHUP) {
      log.Info("reloading", {});
      rt.lua().ReloadAll();
      rt.plugins().ReloadAll();
      continue;
    }
    log.Info("shutting down", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
    break;
  }
  server.Shutdown(std::chrono::seconds(10));
  rt.outbox().Stop();
  rt.plugins().StopAll();
  log.Info("stopped", {});
  return 0;
}

int Migrate(Runtime& rt) {
  Migrator migrator(rt.db(), ProcessLogger());
  for (auto& [owner, migrations] : rt.AllMigrations()) migrator.Add(owner, migrations);
  std::cout << migrator.Apply().dump() << std::endl;
  return 0;
}

int AdminUser(Runtime& rt, const std::vector<std::string>& args) {
  CliArgs a(args, {"email", "name", "password", "time-zone", "username"}, {"admin"});
  if (a.positional().size() != 1 || a.positional()[0] != "create")
    throw std::invalid_argument(
        "usage: admin user create --email E --name N --password P [--time-zone TZ] [--username U] [--admin]");
  NewUser fields;
  fields.email = a.Require("email");
  fields.name = a.Require("name");
  fields.password = a.Require("password");
  fields.time_zone = a.Get("time-zone").value_or("UTC");
  fields.username = a.Get("username").value_or("");
  fields.is_admin = a.Flag("admin");
  if (a.Get("username") && fields.username.empty()) {
    std::cerr << "user create: username must be 1 to 64 characters" << std::endl;
    return 1;
  }
  auto user = rt.identity().CreateUser(fields);
  if (!user.ok()) {
    std::cerr << "user create: " << user.status().message() << std::endl;
    return 1;
  }
  Json out = {{"id", user->id},
              {"email", user->email},
              {"name", user->name},
              {"timeZone", user->time_zone},
              {"username", user->username}};
  if (user->is_admin) out["admin"] = true;
  std::cout << out.dump() << std::endl;
  return 0;
}

int AdminApiKey(Runtime& rt, const std::vector<std::string>& args) {
  CliArgs a(args, {"user-id", "name", "key-id"}, {});
  if (a.positional().size() != 1 || (a.positional()[0] != "create" && a.positional()[0] != "revoke"))
    throw std::invalid_argument("usage: admin api-key create --user-id ID [--name N] | revoke --user-id ID --key-id K");
  int64_t user_id = std::stoll(a.Require("user-id"));
  if (a.positional()[0] == "revoke") {
    Status s = rt.identity().RevokeApiKey(user_id, std::stoll(a.Require("key-id")));
    if (!s.ok()) {
      std::cerr << "api-key revoke: " << s.message() << std::endl;
      return 1;
    }
    std::cout << Json{{"revoked", true}}.dump() << std::endl;
    return 0;
  }
  auto key = rt.identity().CreateApiKey(user_id, a.Get("name").value_or("default"));
  if (!key.ok()) {
    std::cerr << "api-key create: " << key.status().message() << std::endl;
    return 1;
  }
  std::cout << Json{{"id", key->id}, {"key", key->key}}.dump() << std::endl;
  return 0;
}

// A parked event's id as typed by an operator: digits only, positive.
std::optional<int64_t> ParkedId(const std::string& text) {
  if (text.empty() || text.size() > 18 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const int64_t id = std::stoll(text);
  if (id <= 0) return std::nullopt;
  return id;
}

int AdminOutbox(Runtime& rt, const std::vector<std::string>& args) {
  constexpr const char* kOutboxUsage = "usage: admin outbox parked [--consumer NAME] | replay ID | drop ID";
  CliArgs a(args, {"consumer"}, {});
  const std::vector<std::string>& words = a.positional();
  if (words.empty()) throw std::invalid_argument(kOutboxUsage);
  const std::string& verb = words[0];
  if (verb == "parked") {
    if (words.size() != 1) throw std::invalid_argument(kOutboxUsage);
    Json parked = Json::array();
    for (const ParkedEvent& p : rt.outbox().ListParked(a.Get("consumer").value_or(""))) {
      parked.push_back({{"id", p.id},
                        {"eventId", p.event_id},
                        {"consumer", p.consumer},
                        {"topic", p.topic},
                        {"type", p.type},
                        {"attempts", p.attempts},
                        {"lastError", p.last_error},
                        {"parkedAt", p.parked_at}});
    }
    std::cout << Json{{"parked", parked}}.dump() << std::endl;
    return 0;
  }
  if ((verb != "replay" && verb != "drop") || words.size() != 2 || a.Get("consumer"))
    throw std::invalid_argument(kOutboxUsage);
  const std::optional<int64_t> id = ParkedId(words[1]);
  if (!id) {
    std::cerr << "outbox " << verb << ": '" << words[1] << "' is not a parked event id (a positive number)"
              << std::endl;
    return 2;
  }
  const bool done = verb == "replay" ? rt.outbox().Replay(*id) : rt.outbox().Drop(*id);
  if (!done) {
    std::cerr << "outbox " << verb << ": no parked event has id " << *id
              << " (`admin outbox parked` lists them)" << std::endl;
    return 1;
  }
  std::cout << Json{{verb == "replay" ? "replayed" : "dropped", *id}}.dump() << std::endl;
  return 0;
}

int Admin(Runtime& rt, const std::vector<std::string>& args) {
  if (args.empty()) throw std::invalid_argument(kUsage);
  const std::string group = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (group == "user") return AdminUser(rt, rest);
  if (group == "api-key") return AdminApiKey(rt, rest);
  if (group == "outbox") return AdminOutbox(rt, rest);
  const auto& commands = rt.plugins().admin_commands();
  auto it = commands.find(group);
  if (it == commands.end())
    throw std::invalid_argument("unknown admin command '" + group + "' (is its plugin enabled?)");
  return it->second(rest, std::cout, std::cerr);
}

}  // namespace

int RunCli(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string config_path = "etc/rendezvous.yaml";
  std::vector<std::string> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--config") {
      if (i + 1 >= args.size()) {
        std::cerr << "--config needs a file\n";
        return 2;
      }
      config_path = args[++i];
    } else if (args[i].rfind("--config=", 0) == 0) {
      config_path = args[i].substr(9);
    } else {
      rest.push_back(args[i]);
    }
  }
  if (!rest.empty() && rest[0] == "--version") {
    // Reads no configuration: the release and the build signature plugins must be built with.
    std::cout << Json{{"version", RENDEZVOUS_VERSION},
                      {"buildSignature", RENDEZVOUS_BUILD_SIGNATURE},
                      {"pluginAbi", RENDEZVOUS_PLUGIN_ABI_VERSION}}
                     .dump()
              << std::endl;
    return 0;
  }
  if (rest.empty() || rest[0] == "--help" || rest[0] == "help") {
    std::cerr << kUsage;
    return rest.empty() ? 2 : 0;
  }
  const std::string command = rest[0];
  // A word that cannot name a command is refused before the config is read.
  if (command.empty() || command[0] == '-') {
    std::cerr << "unknown command '" << command << "'\n" << kUsage;
    return 2;
  }
  try {
    const bool host_command = command == "serve" || command == "migrate" || command == "admin";
    Runtime rt(config_path, command != "serve" && command != "migrate");
    if (command == "serve") return Serve(rt);
    if (command == "migrate") return Migrate(rt);
    if (host_command) return Admin(rt, std::vector<std::string>(rest.begin() + 1, rest.end()));
    // A plugin's own command (PluginContext::AddCommand), e.g. the webhooks plugin's `lua check`.
    const auto& commands = rt.plugins().cli_commands();
    auto it = commands.find(command);
    if (it == commands.end()) {
      std::cerr << "unknown command '" << command << "' (is its plugin enabled?)\n" << kUsage;
      return 2;
    }
    return it->second(std::vector<std::string>(rest.begin() + 1, rest.end()), std::cout, std::cerr);
  } catch (const ConfigError& e) {
    std::cerr << "configuration error: " << e.what() << std::endl;
    return 78;  // EX_CONFIG
  } catch (const std::invalid_argument& e) {
    std::cerr << e.what() << std::endl;
    return 2;
  } catch (const DatabaseUnavailable& e) {
    std::cerr << "database unavailable: " << e.what() << std::endl;
    return 69;  // EX_UNAVAILABLE
  } catch (const DatabaseError& e) {
    std::cerr << "database error: " << e.what() << " (" << e.code() << ")" << std::endl;
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << std::endl;
    return 1;
  }
}

}  // namespace rendezvous::core
