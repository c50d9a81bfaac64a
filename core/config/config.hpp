// The core's typed configuration (DESIGN §8): loaded once at start-up from a YAML file, checked
// completely (unknown keys and bad values throw ConfigError "FILE:LINE: PATH: message"), then
// read-only. A Config is a plain value: copy it freely; reading it from several threads is safe
// (PluginEntry::node excepted: it shares the parsed YAML document and is for start-up only).
#pragma once

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "rendezvous/config_node.hpp"

namespace rendezvous::core {

// One entry under `plugins:`. The core reads `enabled` and `path`; the rest of the mapping belongs
// to the plugin, which checks it when created: the plugin host builds
// ConfigNode(ConfigValue{node}, Config::file, "plugins." + name, line), marks `enabled` and `path` read and
// hands it to the plugin.
struct PluginEntry {
  std::string name;
  bool enabled = true;
  std::string path;  // the plugin's shared library, absolute; "" = find it next to the binary
  YAML::Node node;   // the entry's mapping; a null node when the file does not name the plugin
  int line = 0;      // 1-based line of the entry's key; 0 when the file does not name the plugin
};

struct Config {
  std::string file;      // absolute path of the loaded file (or the name given for messages)
  std::string root_dir;  // relative paths resolve against this: the config file's folder's parent

  // server.api (base_url) and server.app (app_url); URLs carry no trailing '/'.
  struct Listener {
    std::string listen;    // host:port, port 0..65535 (0 = any free port)
    std::string base_url;  // absolute http(s) URL
  };
  Listener api{"127.0.0.1:8080", "http://127.0.0.1:8080"};
  Listener app{"127.0.0.1:8081", "http://127.0.0.1:8081"};
  int io_threads = 2;        // 1..64
  int idle_timeout = 60;     // seconds, 1..86400
  int header_timeout = 10;   // seconds, 1..86400
  int body_timeout = 30;     // seconds, 1..86400
  int worker_threads = 8;    // 1..1024, the api listener's handlers
  int app_worker_threads = 4;     // 1..1024, the app listener's handlers (pages)
  int outbound_threads = 16;      // 1..1024, routes that call outside hosts
  int public_worker_threads = 4;  // 1..1024, anonymous routes (the public booking flow)
  int public_worker_nice = 10;    // 0..19, how much lower those threads' CPU priority is
  int outbound_per_user = 4;      // 1..1024, such requests of one caller at once
  long max_body_bytes = 1048576;  // 1 KiB..1 GiB
  long max_connections = 10000;          // per listener, 1..1000000
  long max_connections_per_ip = 1024;    // per listener and client address, 1..1000000
  long max_buffered_bytes = 134217728;   // request bytes held across connections, 1 MiB..64 GiB
  // server.rate_limit.per_credential: requests a minute per API key or token (burst the same),
  // 0..10000000; 0 = no limit.
  long rate_limit_per_credential = 0;
  // Reverse proxies whose X-Forwarded-For names the client: IP addresses or CIDR ranges, each
  // checked by ParseAddressRange (http/client_address.hpp). Empty: the TCP peer is the client.
  std::vector<std::string> trusted_proxies;
  std::string version_header = "service-api-version";  // an HTTP token, lower-cased
  // Supported API versions (YYYY-MM-DD), in file order, no duplicates, never empty.
  std::vector<std::string> api_versions{"2024-04-15", "2024-06-11", "2024-06-14", "2024-08-13",
                                        "2024-09-04"};

  struct Database {
    std::string host = "127.0.0.1";
    int port = 3306;       // 1..65535
    std::string socket;    // absolute when set (relative paths resolved); when set, used instead of host/port
    std::string user = "rendezvous";
    std::string password;  // from `password` or the variable named by `password_env`; never log it
    std::string name = "rendezvous";
    int pool_size = 8;     // 1..1024
  } database;

  struct Security {
    std::string api_key_prefix = "rdv_";  // [a-z0-9]{1,16}_
    std::string encryption_key_env = "RENDEZVOUS_ENCRYPTION_KEY";  // a variable name; not read here
    // A file holding the key (base64), read when that variable is unset or empty; "" = none.
    // Absolute (relative paths resolved); not read here.
    std::string encryption_key_file;
    int password_hash_threads = 2;  // 1..64: sign-ins hash passwords here, never on a request worker
    int password_hash_queue = 16;   // 1..100000 sign-ins waiting for a hash thread; more answer 429
    int login_failures_per_ip = 50; // 1..1000000 failed sign-ins per client address per 15 minutes
  } security;

  struct Outbox {
    int max_attempts = 8;  // a consumer's attempts at one event before it is parked
  } outbox;

  struct Metrics {
    std::string path = "/metrics";
    std::string listen;  // host:port of a listener of its own; "" = the api listener
  } metrics;

  struct Logging {
    std::string level = "info";   // debug|info|warn|error
    std::string format = "json";  // json|text
  } logging;

  // Outgoing mail (core/notify). With smtp_url empty, mails are appended to log_file instead.
  struct Mail {
    std::string smtp_url;       // "" or smtp://host[:port] (STARTTLS) / smtps://host[:port]
    std::string smtp_user;      // "" = no SMTP authentication
    std::string smtp_password;  // from `smtp_password` or `smtp_password_env`; never log it
    std::string from = "Rendezvous <rendezvous@localhost>";  // "Name <address>" or "address"
    std::string log_file = "var/mail.log";  // absolute after loading (relative ones resolved)
  } mail;

  // Outgoing SMS (core/notify/sms_service), e.g. phone verification codes. A deviation from DESIGN §8
  // like `mail:`. With gateway_url empty, messages are appended to log_file instead.
  struct Sms {
    std::string gateway_url;    // "" or an absolute http(s) URL (POSTed {"to","text"} as JSON)
    std::string gateway_token;  // from `gateway_token` or `gateway_token_env`; sent as a Bearer token; never log it
    std::string log_file = "var/sms.log";  // absolute after loading (relative ones resolved)
  } sms;

  // The trust of every outbound TLS connection (webhooks, Google, ICS feeds, SMS gateways, SMTP):
  // a PEM file of CA certificates and/or a hashed CA folder, both absolute after loading. Both ""
  // = OpenSSL's default paths (SSL_CERT_FILE / SSL_CERT_DIR when set, else the system's store).
  // A deviation from DESIGN §8 like `mail:`.
  struct Outbound {
    std::string ca_file;
    std::string ca_dir;
  } outbound;

  // In file order; the default plugins (ReadDefaultPlugins) the file does not name follow, enabled.
  std::vector<PluginEntry> plugins;
};

// The file beside the plugin libraries that names the plugins loaded when the config does not
// name them (plugins/default_plugins.list), one a line.
inline constexpr const char* kDefaultPluginsFile = "default_plugins.list";

// Reads such a list: names in order, blank lines and `#` comments skipped. Throws ConfigError
// naming the file (and line) when it cannot be read, is larger than 64 KiB, or holds a line that
// is not a plugin name or names a plugin twice.
std::vector<std::string> ReadDefaultPlugins(const std::string& list_file);

// Reads and checks `path`. root_dir = the parent of the file's folder. Throws ConfigError: a file
// that cannot be read ("FILE: cannot read: reason"), a YAML syntax error
// ("FILE:LINE: YAML syntax error: ..."), a bad value or unknown key ("FILE:LINE: PATH: message").
// `default_plugins`: the plugins listed, enabled, when the file does not name them.
Config LoadConfig(const std::string& path, const std::vector<std::string>& default_plugins);

// The same from text (tests, embedded defaults). `file_for_messages` is used as Config::file.
Config ConfigFromString(const std::string& yaml, const std::string& file_for_messages,
                        const std::string& root_dir, const std::vector<std::string>& default_plugins);

// An absolute path stays as it is; a relative one becomes root_dir/path (normalised); "" stays "".
std::string ResolveRelative(const Config& config, const std::string& path);

}  // namespace rendezvous::core
