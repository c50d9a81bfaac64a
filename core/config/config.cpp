#include "config/config.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <yaml-cpp/eventhandler.h>

#include "config/config_value.hpp"
#include "http/client_address.hpp"
#include "log/logger.hpp"
#include "rendezvous/text.hpp"
#include "rendezvous/url.hpp"

namespace rendezvous::core {
namespace {

namespace fs = std::filesystem;

constexpr std::uintmax_t kMaxConfigBytes = 1 << 20;
// sockaddr_un::sun_path holds 108 bytes including the terminating NUL.
constexpr size_t kMaxSocketPath = 107;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || IsDigit(c); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

bool IsHostName(const std::string& host) {
  if (host.empty() || host.size() > 253) return false;
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return false;
    return std::all_of(host.begin() + 1, host.end() - 1, [](char c) {
      return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.';
    });
  }
  return std::all_of(host.begin(), host.end(), [](char c) { return IsAlnum(c) || c == '-' || c == '.'; });
}

bool IsPort(const std::string& text, long min) {
  if (text.empty() || text.size() > 5 || !std::all_of(text.begin(), text.end(), IsDigit)) return false;
  const long port = std::stol(text);
  return port >= min && port <= 65535;
}

std::string Listen(ConfigNode& node, const std::string& def) {
  const std::string value = node.String("listen", def);
  const size_t colon = value.rfind(':');
  if (colon == std::string::npos || !IsHostName(value.substr(0, colon)) || !IsPort(value.substr(colon + 1), 0))
    node.Fail("listen", "must be host:port with a port between 0 and 65535 (e.g. 127.0.0.1:8080)");
  return value;
}

// The URL of a config value, parsed by the kit (rendezvous/url.hpp) and of one of `schemes`, whose
// host is a name or an address; nullopt otherwise.
std::optional<net::Url> ConfigUrl(const std::string& value, std::initializer_list<const char*> schemes) {
  Result<net::Url> url = net::ParseUrl(value);
  if (!url.ok() || (!url->ipv6 && !net::IsDnsName(url->host))) return std::nullopt;
  for (const char* scheme : schemes) {
    if (url->scheme == scheme) return std::move(*url);
  }
  return std::nullopt;
}

// A URL that does not parse but names a user: the value carries credentials.
bool CarriesUserInfo(const std::string& value) {
  return value.find('@') != std::string::npos && !net::ParseUrl(value).ok();
}

// An absolute http(s) URL without query or fragment, returned without trailing '/'.
std::string BaseUrl(ConfigNode& node, const std::string& key, const std::string& def) {
  std::string value = node.String(key, def);
  const char* kMessage = "must be an absolute http:// or https:// URL without query or fragment";
  if (value.size() > 2048) node.Fail(key, "must be at most 2048 characters long");
  if (CarriesUserInfo(value)) node.Fail(key, "must not carry user information");
  std::optional<net::Url> url = ConfigUrl(value, {"http", "https"});
  if (!url || url->query || url->fragment) node.Fail(key, kMessage);
  for (std::string& path = url->path; !path.empty() && path.back() == '/'; path.pop_back()) value.pop_back();
  // The scheme in its canonical lower case (RFC 3986 §3.1): the URL is the issuer and the prefix
  // of every link and DPoP htu the server compares.
  const size_t colon = value.find(':');
  return text::AsciiLower(std::string_view(value).substr(0, colon)) + value.substr(colon);
}

// RFC 9110 token characters.
bool IsToken(const std::string& s) {
  static const std::string kExtra = "!#$%&'*+-.^_`|~";
  return !s.empty() && s.size() <= 128 &&
         std::all_of(s.begin(), s.end(), [](char c) { return IsAlnum(c) || kExtra.find(c) != std::string::npos; });
}

bool IsDate(const std::string& s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (!IsDigit(s[i])) return false;
  const int year = std::stoi(s.substr(0, 4));
  const int month = std::stoi(s.substr(5, 2));
  const int day = std::stoi(s.substr(8, 2));
  if (month < 1 || month > 12 || day < 1) return false;
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  const int max_day = kDays[month - 1] + (month == 2 && leap ? 1 : 0);
  return day <= max_day;
}

bool IsEnvName(const std::string& s) {
  if (s.empty() || s.size() > 256 || IsDigit(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsAlnum(c) || c == '_'; });
}

bool IsPluginName(const std::string& s) {
  if (s.empty() || s.size() > 64 || !(s[0] >= 'a' && s[0] <= 'z')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsLowerAlnum(c) || c == '_'; });
}

std::string ResolveAgainst(const std::string& root_dir, const std::string& path) {
  if (path.empty()) return path;
  const fs::path p(path);
  if (p.is_absolute()) return path;
  return (fs::path(root_dir) / p).lexically_normal().string();
}

void ReadServer(ConfigNode server, Config& c) {
  {
    ConfigNode api = server.Child("api");
    c.api.listen = Listen(api, c.api.listen);
    c.api.base_url = BaseUrl(api, "base_url", c.api.base_url);
    api.RejectUnknown();
  }
  {
    ConfigNode app = server.Child("app");
    c.app.listen = Listen(app, c.app.listen);
    c.app.base_url = BaseUrl(app, "app_url", c.app.base_url);
    app.RejectUnknown();
  }
  c.io_threads = static_cast<int>(server.Int("io_threads", c.io_threads, 1, 64));
  c.idle_timeout = static_cast<int>(server.Int("idle_timeout", c.idle_timeout, 1, 86400));
  c.header_timeout = static_cast<int>(server.Int("header_timeout", c.header_timeout, 1, 86400));
  c.body_timeout = static_cast<int>(server.Int("body_timeout", c.body_timeout, 1, 86400));
  c.worker_threads = static_cast<int>(server.Int("worker_threads", c.worker_threads, 1, 1024));
  c.max_body_bytes = server.Int("max_body_bytes", c.max_body_bytes, 1024, 1L << 30);
  c.app_worker_threads = static_cast<int>(server.Int("app_worker_threads", c.app_worker_threads, 1, 1024));
  c.outbound_threads = static_cast<int>(server.Int("outbound_threads", c.outbound_threads, 1, 1024));
  c.outbound_per_user = static_cast<int>(server.Int("outbound_per_user", c.outbound_per_user, 1, 1024));
  c.public_worker_threads =
      static_cast<int>(server.Int("public_worker_threads", c.public_worker_threads, 1, 1024));
  c.public_worker_nice = static_cast<int>(server.Int("public_worker_nice", c.public_worker_nice, 0, 19));
  c.max_connections = server.Int("max_connections", c.max_connections, 1, 1000000);
  c.max_connections_per_ip = server.Int("max_connections_per_ip", c.max_connections_per_ip, 1, 1000000);
  c.max_buffered_bytes = server.Int("max_buffered_bytes", c.max_buffered_bytes, 1L << 20, 64L << 30);
  {
    ConfigNode limit = server.Child("rate_limit");
    c.rate_limit_per_credential = limit.Int("per_credential", c.rate_limit_per_credential, 0, 10000000);
    limit.RejectUnknown();
  }

  c.trusted_proxies = server.StringList("trusted_proxies", c.trusted_proxies);
  for (size_t i = 0; i < c.trusted_proxies.size(); ++i) {
    if (!ParseAddressRange(c.trusted_proxies[i]))
      server.FailItem("trusted_proxies", i, "must be an IP address or a CIDR range (10.0.0.0/8, fd00::/8)");
  }

  std::string header = server.String("version_header", c.version_header);
  if (!IsToken(header)) server.Fail("version_header", "must be an HTTP header name (letters, digits, '-', ...)");
  std::transform(header.begin(), header.end(), header.begin(),
                 [](char ch) { return ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch - 'A' + 'a') : ch; });
  c.version_header = header;

  const std::vector<std::string> versions = server.StringList("api_versions", c.api_versions);
  if (versions.empty()) server.Fail("api_versions", "must list at least one version");
  std::set<std::string> seen;
  for (size_t i = 0; i < versions.size(); ++i) {
    if (!IsDate(versions[i])) server.FailItem("api_versions", i, "must be a date YYYY-MM-DD");
    if (!seen.insert(versions[i]).second) server.FailItem("api_versions", i, "repeats " + versions[i]);
  }
  c.api_versions = versions;
  server.RejectUnknown();
}

void ReadDatabase(ConfigNode db, Config& c) {
  auto& d = c.database;
  d.host = db.String("host", d.host);
  d.port = static_cast<int>(db.Int("port", d.port, 1, 65535));
  d.socket = ResolveAgainst(c.root_dir, db.String("socket", d.socket));
  if (d.socket.size() > kMaxSocketPath)
    db.Fail("socket", "resolves to " + d.socket + ", longer than the " + std::to_string(kMaxSocketPath) +
                          " bytes a Unix socket path may have");
  if (d.socket.empty() && !IsHostName(d.host)) db.Fail("host", "must be a host name or IP address");
  d.user = db.String("user", d.user);
  if (d.user.empty() || d.user.size() > 128) db.Fail("user", "must be a user name of 1 to 128 characters");
  d.password = db.Secret("password", d.password);
  d.name = db.String("name", d.name);
  if (d.name.empty() || d.name.size() > 64 ||
      !std::all_of(d.name.begin(), d.name.end(), [](char ch) { return IsAlnum(ch) || ch == '_' || ch == '$'; }))
    db.Fail("name", "must be a database name of 1 to 64 letters, digits, '_' or '$'");
  d.pool_size = static_cast<int>(db.Int("pool_size", d.pool_size, 1, 1024));
  db.RejectUnknown();
}

void ReadSecurity(ConfigNode sec, Config& c) {
  auto& s = c.security;
  s.api_key_prefix = sec.String("api_key_prefix", s.api_key_prefix);
  const std::string& p = s.api_key_prefix;
  if (p.size() < 2 || p.size() > 17 || p.back() != '_' || !std::all_of(p.begin(), p.end() - 1, IsLowerAlnum))
    sec.Fail("api_key_prefix", "must be 1 to 16 lowercase letters or digits followed by '_' (e.g. rdv_)");
  s.encryption_key_env = sec.String("encryption_key_env", s.encryption_key_env);
  if (!IsEnvName(s.encryption_key_env)) sec.Fail("encryption_key_env", "must be the name of an environment variable");
  s.encryption_key_file =
      ResolveAgainst(c.root_dir, sec.String("encryption_key_file", s.encryption_key_file));
  if (s.encryption_key_file.size() > 4096)
    sec.Fail("encryption_key_file", "must be a path of at most 4096 bytes");
  s.password_hash_threads = static_cast<int>(sec.Int("password_hash_threads", s.password_hash_threads, 1, 64));
  s.password_hash_queue = static_cast<int>(sec.Int("password_hash_queue", s.password_hash_queue, 1, 100000));
  s.login_failures_per_ip = static_cast<int>(sec.Int("login_failures_per_ip", s.login_failures_per_ip, 1, 1000000));
  sec.RejectUnknown();
}

void ReadOutbox(ConfigNode o, Config& c) {
  c.outbox.max_attempts = static_cast<int>(o.Int("max_attempts", c.outbox.max_attempts, 1, 1000));
  o.RejectUnknown();
}

void ReadMetrics(ConfigNode m, Config& c) {
  c.metrics.path = m.String("path", c.metrics.path);
  const std::string& p = c.metrics.path;
  const bool ok = !p.empty() && p.size() <= 256 && p[0] == '/' && std::all_of(p.begin(), p.end(), [](char ch) {
    return IsAlnum(ch) || std::strchr("/-._~", ch) != nullptr;
  });
  if (!ok) m.Fail("path", "must be a URL path starting with '/' (letters, digits, '/', '-', '.', '_', '~')");
  if (!m.String("listen", "").empty()) c.metrics.listen = Listen(m, "");
  m.RejectUnknown();
}

void ReadLogging(ConfigNode l, Config& c) {
  c.logging.level = l.String("level", c.logging.level);
  try {
    ParseLogLevel(c.logging.level);
  } catch (const std::invalid_argument&) {
    l.Fail("level", "must be one of debug, info, warn, error");
  }
  c.logging.format = l.String("format", c.logging.format);
  if (c.logging.format != "json" && c.logging.format != "text") l.Fail("format", "must be json or text");
  l.RejectUnknown();
}

bool HasControlChar(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char ch) {
    const auto u = static_cast<unsigned char>(ch);
    return u < 0x20 || u == 0x7f;
  });
}

void ReadMail(ConfigNode m, Config& c) {
  auto& mail = c.mail;
  mail.smtp_url = m.String("smtp_url", mail.smtp_url);
  const std::string& url = mail.smtp_url;
  if (!url.empty()) {
    if (url.find('@') != std::string::npos)
      m.Fail("smtp_url", "must not carry credentials; use smtp_user and smtp_password");
    if (url.size() > 2048 || !ConfigUrl(url, {"smtp", "smtps"}))
      m.Fail("smtp_url", "must be \"\" or an smtp://host[:port] or smtps://host[:port] URL");
  }
  mail.smtp_user = m.String("smtp_user", mail.smtp_user);
  if (mail.smtp_user.size() > 256 || HasControlChar(mail.smtp_user))
    m.Fail("smtp_user", "must be at most 256 characters without control characters");
  mail.smtp_password = m.Secret("smtp_password", mail.smtp_password);
  if (mail.smtp_password.size() > 1024 || HasControlChar(mail.smtp_password))
    m.Fail("smtp_password", "must be at most 1024 characters without control characters");
  mail.from = m.String("from", mail.from);
  {
    const std::string& f = mail.from;
    const size_t lt = f.rfind('<');
    const std::string address = lt == std::string::npos ? f : (f.back() == '>' ? f.substr(lt + 1, f.size() - lt - 2) : "");
    const bool ok = !f.empty() && f.size() <= 320 && !HasControlChar(f) && text::IsEmailAddress(address);
    if (!ok) m.Fail("from", "must be an address or \"Name <address>\" (e.g. \"Rendezvous <rendezvous@example.com>\")");
  }
  const std::string log_file = m.String("log_file", mail.log_file);
  if (log_file.empty()) m.Fail("log_file", "must name a file (e.g. var/mail.log)");
  mail.log_file = ResolveAgainst(c.root_dir, log_file);
  m.RejectUnknown();
}

void ReadSms(ConfigNode n, Config& c) {
  auto& sms = c.sms;
  sms.gateway_url = n.String("gateway_url", sms.gateway_url);
  const std::string& url = sms.gateway_url;
  if (!url.empty()) {
    const char* kMessage = "must be \"\" or an absolute http:// or https:// URL (e.g. https://sms.example.com/send)";
    if (CarriesUserInfo(url)) n.Fail("gateway_url", "must not carry credentials; use gateway_token or gateway_token_env");
    const std::optional<net::Url> parsed = ConfigUrl(url, {"http", "https"});
    if (url.size() > 2048 || !parsed || parsed->fragment) n.Fail("gateway_url", kMessage);
  }

  sms.gateway_token = n.Secret("gateway_token", sms.gateway_token);
  if (sms.gateway_token.size() > 4096 || HasControlChar(sms.gateway_token) ||
      sms.gateway_token.find(' ') != std::string::npos)
    n.Fail("gateway_token", "must be at most 4096 characters without spaces or control characters");
  const std::string log_file = n.String("log_file", sms.log_file);
  if (log_file.empty()) n.Fail("log_file", "must name a file (e.g. var/sms.log)");
  sms.log_file = ResolveAgainst(c.root_dir, log_file);
  n.RejectUnknown();
}

void ReadOutbound(ConfigNode o, Config& c) {
  auto& out = c.outbound;
  for (const char* key : {"ca_file", "ca_dir"}) {
    const std::string value = o.String(key, "");
    if (value.size() > 4096 || HasControlChar(value))
      o.Fail(key, "must be \"\" or a path of at most 4096 bytes");
    (std::string_view(key) == "ca_file" ? out.ca_file : out.ca_dir) = ResolveAgainst(c.root_dir, value);
  }
  o.RejectUnknown();
}

void ReadPlugins(ConfigNode plugins, const std::vector<std::string>& default_plugins, Config& c) {
  std::set<std::string> named;
  for (const std::string& name : plugins.Keys()) {
    if (!IsPluginName(name))
      plugins.Fail(name, "a plugin name is a lowercase letter followed by up to 63 lowercase letters, digits or '_'");
    ConfigNode entry_node = plugins.Child(name);
    PluginEntry entry;
    entry.name = name;
    entry.enabled = entry_node.Bool("enabled", true);
    entry.path = ResolveAgainst(c.root_dir, entry_node.String("path", ""));
    entry.node = entry_node.value().node;
    entry.line = entry_node.line();
    c.plugins.push_back(std::move(entry));
    named.insert(name);
  }
  for (const std::string& name : default_plugins) {
    if (named.count(name)) continue;
    PluginEntry entry;
    entry.name = name;
    c.plugins.push_back(std::move(entry));
  }
}

Config FromNode(const YAML::Node& root_yaml, const std::string& file, const std::string& root_dir,
                const std::vector<std::string>& default_plugins) {
  Config c;
  c.file = file;
  c.root_dir = root_dir;
  ConfigNode root(ConfigValue{root_yaml}, file, "");
  ReadServer(root.Child("server"), c);
  ReadDatabase(root.Child("database"), c);
  ReadSecurity(root.Child("security"), c);
  ReadOutbox(root.Child("outbox"), c);
  ReadMetrics(root.Child("metrics"), c);
  ReadLogging(root.Child("logging"), c);
  ReadMail(root.Child("mail"), c);
  ReadSms(root.Child("sms"), c);
  ReadOutbound(root.Child("outbound"), c);
  ReadPlugins(root.Child("plugins"), default_plugins, c);
  root.RejectUnknown();
  return c;
}

// Counts the documents that hold something (an empty trailing `---` is not one) and notes where
// the second starts. yaml-cpp's LoadAll never returns for some malformed texts (", " is one: the
// parser hands out the same document forever), so documents are read one at a time, boundedly.
class DocumentCounter final : public YAML::EventHandler {
 public:
  int documents = 0;
  YAML::Mark second;  // where the second document's content starts

  void OnDocumentStart(const YAML::Mark&) override { content_ = false; }
  void OnDocumentEnd() override {
    if (content_ && ++documents == 2) second = first_;
  }
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Content(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override {
    Content(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    Content(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    Content(mark);
  }
  void OnMapEnd() override {}

 private:
  void Content(const YAML::Mark& mark) {
    if (!content_) first_ = mark;
    content_ = true;
  }
  YAML::Mark first_;
  bool content_ = false;
};

constexpr int kMaxDocumentsRead = 64;

YAML::Node Parse(const std::string& yaml, const std::string& file) {
  try {
    std::istringstream in(yaml);
    YAML::Parser parser(in);
    DocumentCounter counter;
    for (int i = 0; i < kMaxDocumentsRead && counter.documents < 2 && parser.HandleNextDocument(counter); ++i) {
    }
    if (counter.documents > 1) {
      const int line = counter.second.is_null() ? 1 : counter.second.line + 1;
      throw ConfigError(file + ":" + std::to_string(line) + ": the config file must hold one YAML document");
    }
    return YAML::Load(yaml);
  } catch (const YAML::ParserException& e) {
    const int line = e.mark.is_null() ? 1 : e.mark.line + 1;
    throw ConfigError(file + ":" + std::to_string(line) + ": YAML syntax error: " + e.msg);
  } catch (const YAML::Exception& e) {
    throw ConfigError(file + ":1: YAML error: " + e.msg);
  }
}

}  // namespace

Config ConfigFromString(const std::string& yaml, const std::string& file_for_messages,
                        const std::string& root_dir, const std::vector<std::string>& default_plugins) {
  return FromNode(Parse(yaml, file_for_messages), file_for_messages, root_dir, default_plugins);
}

std::vector<std::string> ReadDefaultPlugins(const std::string& list_file) {
  constexpr std::streamsize kMaxListBytes = 64 * 1024;
  std::ifstream in(list_file, std::ios::binary);
  if (!in) throw ConfigError(list_file + ": cannot read the default plugin list: " + std::strerror(errno));
  std::string text(static_cast<size_t>(kMaxListBytes) + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw ConfigError(list_file + ": cannot read the default plugin list: I/O error");
  if (in.gcount() > kMaxListBytes) throw ConfigError(list_file + ": larger than 64 KiB, not a plugin list");
  text.resize(static_cast<size_t>(in.gcount()));
  std::vector<std::string> names;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const std::string name = line.substr(first, line.find_last_not_of(" \t\r") + 1 - first);
    std::string where = list_file;
    where += ':';
    where += std::to_string(number);
    where += ": ";
    if (!IsPluginName(name)) {
      where += '\'';
      where += name;
      where += "' is not a plugin name";
      throw ConfigError(where);
    }
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      where += "plugin '";
      where += name;
      where += "' is listed twice";
      throw ConfigError(where);
    }
    names.push_back(name);
  }
  return names;
}

Config LoadConfig(const std::string& path, const std::vector<std::string>& default_plugins) {
  std::error_code ec;
  const fs::path file = fs::absolute(path, ec).lexically_normal();
  if (ec) throw ConfigError(path + ": cannot read: " + ec.message());
  const std::string name = file.string();
  if (fs::is_directory(file, ec)) throw ConfigError(name + ": cannot read: is a directory");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(name + ": cannot read: " + std::strerror(errno));
  std::string text;
  char buf[8192];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxConfigBytes)
      throw ConfigError(name + ": cannot read: larger than " + std::to_string(kMaxConfigBytes) + " bytes");
  }
  if (in.bad()) throw ConfigError(name + ": cannot read: I/O error");
  return ConfigFromString(text, name, file.parent_path().parent_path().string(), default_plugins);
}

std::string ResolveRelative(const Config& config, const std::string& path) {
  return ResolveAgainst(config.root_dir, path);
}

}  // namespace rendezvous::core
