#include "cli/runtime.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "log/logger.hpp"
#include "rendezvous/crypto.hpp"
#include "rendezvous/outbound.hpp"

namespace rendezvous::core {

std::string ExecutableDir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string path(buf, static_cast<size_t>(n));
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string PluginDir() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&PluginDir), &info) == 0 || info.dli_fname == nullptr)
    return ExecutableDir();
  char buf[PATH_MAX];
  if (::realpath(info.dli_fname, buf) == nullptr) return ExecutableDir();
  std::string path(buf);
  auto slash = path.rfind('/');
  return slash == std::string::npos ? ExecutableDir() : path.substr(0, slash);
}

namespace {

// The AES-256-GCM key for third-party credentials (DESIGN §5): 32 bytes, base64, in the variable
// named by security.encryption_key_env or, when that is unset or empty, in the file named by
// security.encryption_key_file. Neither: empty (features that encrypt refuse to work and say why);
// a malformed key or a named file that cannot be read: a config error.
std::string DecodeEncryptionKey(std::string text, const std::string& where) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  Result<std::string> raw = crypto::Base64Decode(text);
  if (!raw.ok() || raw->size() != 32)
    throw ConfigError(where + " must hold a 32-byte key in base64 (e.g. `openssl rand -base64 32`)");
  return std::move(raw).value();
}

std::string ReadEncryptionKey(const Config& config) {
  const std::string& name = config.security.encryption_key_env;
  const char* value = std::getenv(name.c_str());
  if (value != nullptr && *value != '\0')
    return DecodeEncryptionKey(value, config.file + ": security.encryption_key_env: the variable " + name);
  const std::string& path = config.security.encryption_key_file;
  if (path.empty()) return "";
  const std::string where = config.file + ": security.encryption_key_file: " + path;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(where + ": cannot read: " + std::strerror(errno));
  // A base64 key is 44 bytes; anything much longer is not a key file.
  std::string text(256, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw ConfigError(where + ": cannot read: I/O error");
  text.resize(static_cast<size_t>(in.gcount()));
  return DecodeEncryptionKey(std::move(text), where);
}

}  // namespace

Runtime::Runtime(const std::string& config_path, bool quiet)
    : config_(LoadConfig(config_path, ReadDefaultPlugins(PluginDir() + "/" + kDefaultPluginsFile))) {
  LogLevel level = ParseLogLevel(config_.logging.level);
  if (quiet && level < LogLevel::kWarn) level = LogLevel::kWarn;
  SetProcessLogger(std::make_unique<StderrLogger>(level, config_.logging.format == "json"));
  Logger& log = ProcessLogger();
  // Every outbound TLS connection (HTTP and SMTP) trusts these CAs; a file that cannot be loaded
  // stops the start.
  const Status trust = net::ConfigureTrust({config_.outbound.ca_file, config_.outbound.ca_dir});
  if (!trust.ok()) throw ConfigError(config_.file + ": outbound: " + trust.message());
  registry_ = std::make_unique<MetricsRegistry>();
  plugin_metrics_ = std::make_unique<PrometheusMetrics>(*registry_);

  DatabaseOptions dbo;
  dbo.host = config_.database.host;
  dbo.port = config_.database.port;
  dbo.socket = config_.database.socket.empty() ? "" : ResolveRelative(config_, config_.database.socket);
  dbo.user = config_.database.user;
  dbo.password = config_.database.password;
  dbo.name = config_.database.name;
  dbo.pool_size = config_.database.pool_size;
  db_ = std::make_unique<MysqlDatabase>(dbo, *registry_, log);
  OutboxOptions oo;
  oo.max_attempts = config_.outbox.max_attempts;
  outbox_ = std::make_unique<OutboxService>(*db_, *registry_, log, oo);

  MailOptions mo;
  mo.smtp_url = config_.mail.smtp_url;
  mo.smtp_user = config_.mail.smtp_user;
  mo.smtp_password = config_.mail.smtp_password;
  mo.from = config_.mail.from;
  mo.log_file = ResolveRelative(config_, config_.mail.log_file);
  mail_ = std::make_unique<MailService>(mo, *outbox_, *registry_, log);
  // Delivered by the outbox loops, which only `serve` starts; other commands just queue mails.
  mail_->Register();

  SmsOptions so;
  so.gateway_url = config_.sms.gateway_url;
  so.gateway_token = config_.sms.gateway_token;
  so.log_file = ResolveRelative(config_, config_.sms.log_file);
  sms_ = std::make_unique<SmsService>(so, *outbox_, *registry_, log);
  sms_->Register();

  IdentityOptions io;
  io.api_key_prefix = config_.security.api_key_prefix;
  io.app_url = config_.app.base_url;
  io.password_hash_threads = config_.security.password_hash_threads;
  io.password_hash_queue = static_cast<size_t>(config_.security.password_hash_queue);
  io.login_failures_per_ip = config_.security.login_failures_per_ip;
  identity_ = std::make_unique<IdentityService>(*db_, log, *registry_, io);
  identity_->EnableVerifiedResources(*mail_, *sms_);
  lua_ = std::make_unique<LuaRuntime>(*registry_, log);

  HostServices hs;
  hs.db = db_.get();
  hs.outbox = outbox_.get();
  hs.identity = identity_.get();
  hs.mailer = mail_.get();
  hs.scripts = lua_.get();
  hs.metrics = plugin_metrics_.get();
  hs.logger = &log;
  hs.base_url = config_.api.base_url;
  hs.app_url = config_.app.base_url;
  hs.root_dir = config_.root_dir;
  hs.config_file = config_.file;
  hs.encryption_key = ReadEncryptionKey(config_);
  plugins_ = std::make_unique<PluginHost>(hs);
  plugins_->Load(config_.plugins, PluginDir());
  identity_->SetUserExtensions(plugins_->FindAll<UserExtension>());
}

Runtime::~Runtime() {
  // The outbox loops call into the mail service and the plugins' consumers: they stop first
  // (a no-op when `serve` already stopped them). Plugins hold references into everything else.
  if (outbox_) outbox_->Stop();
  if (identity_) identity_->SetUserExtensions({});
  plugins_.reset();
}

std::vector<std::pair<std::string, std::vector<Migration>>> Runtime::AllMigrations() const {
  std::vector<std::pair<std::string, std::vector<Migration>>> all;
  all.emplace_back("outbox", OutboxService::Migrations());
  all.emplace_back("identity", IdentityService::Migrations());
  for (const auto& m : plugins_->migrations()) all.push_back(m);
  return all;
}

std::optional<Principal> Runtime::Authenticate(std::string_view token) {
  if (token.substr(0, config_.security.api_key_prefix.size()) == config_.security.api_key_prefix)
    return identity_->ResolveApiKey(token);
  for (const auto& [kind, resolver] : plugins_->resolvers()) {
    if (auto p = resolver(token)) return p;
  }
  return std::nullopt;
}

}  // namespace rendezvous::core
