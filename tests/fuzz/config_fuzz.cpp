// libFuzzer target: the YAML config loader, given any text as the server's config file. It either
// loads or throws ConfigError whose message starts "FILE:LINE: " — nothing else may escape, and
// nothing may crash or hang. A config that loads holds only values within the documented bounds,
// and loading the same text again gives the same result. Each plugin's entry is then read the
// way a plugin reads its options (ConfigNode accessors, each failing with a ConfigError only).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "config/config_value.hpp"

namespace {

using rendezvous::ConfigError;
using rendezvous::ConfigNode;
using rendezvous::ConfigValue;
using rendezvous::core::Config;
using rendezvous::core::ConfigFromString;

constexpr char kFile[] = "/etc/rendezvous/config.yaml";
constexpr char kRoot[] = "/etc";
// The shipped default plugin set (plugins/default_plugins.list).
const std::vector<std::string> kDefaultPlugins{"oauth", "bookings", "calendar", "webhooks"};

// "FILE:LINE: ..." with LINE a positive number.
void CheckMessage(const ConfigError& e) {
  const std::string_view what = e.what();
  const std::string_view prefix = std::string_view(kFile) == what.substr(0, sizeof kFile - 1) ? what.substr(sizeof kFile - 1) : "";
  if (prefix.size() < 3 || prefix[0] != ':') __builtin_trap();
  size_t digits = 1;
  while (digits < prefix.size() && prefix[digits] >= '0' && prefix[digits] <= '9') ++digits;
  if (digits == 1 || prefix[1] == '0' || digits >= prefix.size() || prefix[digits] != ':') __builtin_trap();
}

template <class F>
void ExpectConfigErrorOnly(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    CheckMessage(e);
  } catch (...) {
    __builtin_trap();
  }
}

bool Between(long v, long min, long max) { return v >= min && v <= max; }

void CheckLoaded(const Config& c) {
  if (c.file != kFile || c.root_dir != kRoot) __builtin_trap();
  if (!Between(c.io_threads, 1, 64) || !Between(c.idle_timeout, 1, 86400) || !Between(c.header_timeout, 1, 86400) ||
      !Between(c.body_timeout, 1, 86400) || !Between(c.worker_threads, 1, 1024) ||
      !Between(c.app_worker_threads, 1, 1024) || !Between(c.outbound_threads, 1, 1024) ||
      !Between(c.outbound_per_user, 1, 1024) || !Between(c.max_body_bytes, 1024, 1L << 30) ||
      !Between(c.max_connections, 1, 1000000) || !Between(c.max_connections_per_ip, 1, 1000000) ||
      !Between(c.max_buffered_bytes, 1L << 20, 64L << 30) || !Between(c.database.port, 1, 65535) ||
      !Between(c.database.pool_size, 1, 1024)) {
    __builtin_trap();
  }
  if (c.api_versions.empty() || c.version_header.empty()) __builtin_trap();
  for (const std::string& url : {c.api.base_url, c.app.base_url}) {
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) __builtin_trap();
    if (url.back() == '/') __builtin_trap();
  }
  for (char ch : c.version_header)
    if (ch >= 'A' && ch <= 'Z') __builtin_trap();
  if (c.logging.level != "debug" && c.logging.level != "info" && c.logging.level != "warn" && c.logging.level != "error")
    __builtin_trap();
  if (c.logging.format != "json" && c.logging.format != "text") __builtin_trap();
  if (c.mail.log_file.empty() || c.mail.log_file[0] != '/' || c.sms.log_file.empty() || c.sms.log_file[0] != '/')
    __builtin_trap();
  if (!c.database.socket.empty() && c.database.socket[0] != '/') __builtin_trap();
  if (c.plugins.size() < kDefaultPlugins.size()) __builtin_trap();
  for (const auto& plugin : c.plugins) {
    if (plugin.name.empty() || (!plugin.path.empty() && plugin.path[0] != '/')) __builtin_trap();
    if (!plugin.node.IsNull() && plugin.line <= 0) __builtin_trap();
  }
}

// What a plugin does with its entry when created.
void ReadAsPlugin(const rendezvous::core::PluginEntry& plugin) {
  ConfigNode node(ConfigValue{plugin.node}, kFile, "plugins." + plugin.name, plugin.line);
  node.MarkRead("enabled");
  node.MarkRead("path");
  for (const std::string& key : node.Keys()) {
    ExpectConfigErrorOnly([&] { node.String(key, ""); });
    ExpectConfigErrorOnly([&] { node.Int(key, 0, -1000, 1000); });
    ExpectConfigErrorOnly([&] { node.Double(key, 0, -1e6, 1e6); });
    ExpectConfigErrorOnly([&] { node.Bool(key, false); });
    ExpectConfigErrorOnly([&] { node.StringList(key, {}); });
    ExpectConfigErrorOnly([&] { node.IntList(key, {}, 0, 100); });
    ExpectConfigErrorOnly([&] { node.Secret(key, ""); });
    ExpectConfigErrorOnly([&] {
      ConfigNode child = node.Child(key);
      for (const std::string& inner : child.Keys()) child.String(inner, "");
      child.RejectUnknown();
    });
  }
  ExpectConfigErrorOnly([&] { node.RejectUnknown(); });
}

std::string Summary(const Config& c) {
  std::string out = c.api.listen + "|" + c.api.base_url + "|" + c.app.listen + "|" + c.app.base_url + "|" +
                    std::to_string(c.max_body_bytes) + "|" + c.database.host + "|" + c.database.socket + "|" +
                    c.mail.from + "|" + c.sms.gateway_url;
  for (const std::string& v : c.api_versions) out += "|" + v;
  for (const auto& p : c.plugins) out += "|" + p.name + (p.enabled ? "+" : "-") + p.path;
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string first;
  std::optional<Config> loaded;
  try {
    loaded = ConfigFromString(text, kFile, kRoot, kDefaultPlugins);
    CheckLoaded(*loaded);
    first = Summary(*loaded);
  } catch (const ConfigError& e) {
    CheckMessage(e);
    first = std::string("error|") + e.what();
  } catch (...) {
    __builtin_trap();
  }
  std::string second;
  try {
    second = Summary(ConfigFromString(text, kFile, kRoot, kDefaultPlugins));
  } catch (const ConfigError& e) {
    second = std::string("error|") + e.what();
  }
  if (first != second) __builtin_trap();
  if (loaded) {
    for (const auto& plugin : loaded->plugins) ReadAsPlugin(plugin);
  }
  return 0;
}
