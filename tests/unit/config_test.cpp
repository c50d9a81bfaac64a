#include "config/config.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "config/config_value.hpp"
#include "rendezvous/config_node.hpp"
#include "temp_dir.hpp"

namespace rendezvous::core {
namespace {

namespace fs = std::filesystem;

std::string ErrorOf(const std::string& yaml) {
  try {
    ConfigFromString(yaml, "cfg.yaml", "/srv/rdv", {});
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string SourceDir();

// The default plugin set as shipped beside the plugin libraries.
const std::vector<std::string>& ShippedDefaults() {
  static const std::vector<std::string> names =
      ReadDefaultPlugins(SourceDir() + "/plugins/default_plugins.list");
  return names;
}

Config Parse(const std::string& yaml) {
  return ConfigFromString(yaml, "cfg.yaml", "/srv/rdv", ShippedDefaults());
}
Config LoadConfig(const std::string& path) {
  return rendezvous::core::LoadConfig(path, ShippedDefaults());
}

// What Config{} holds must be what DESIGN §8 promises.
void ExpectDesignDefaults(const Config& c) {
  EXPECT_EQ(c.api.listen, "127.0.0.1:8080");
  EXPECT_EQ(c.api.base_url, "http://127.0.0.1:8080");
  EXPECT_EQ(c.app.listen, "127.0.0.1:8081");
  EXPECT_EQ(c.app.base_url, "http://127.0.0.1:8081");
  EXPECT_EQ(c.io_threads, 2);
  EXPECT_EQ(c.idle_timeout, 60);
  EXPECT_EQ(c.header_timeout, 10);
  EXPECT_EQ(c.body_timeout, 30);
  EXPECT_EQ(c.worker_threads, 8);
  EXPECT_EQ(c.max_body_bytes, 1048576);
  EXPECT_TRUE(c.trusted_proxies.empty());
  EXPECT_EQ(c.rate_limit_per_credential, 0);
  EXPECT_EQ(c.version_header, "service-api-version");
  EXPECT_EQ(c.api_versions,
            (std::vector<std::string>{"2024-04-15", "2024-06-11", "2024-06-14", "2024-08-13", "2024-09-04"}));
  EXPECT_EQ(c.database.port, 3306);
  EXPECT_EQ(c.database.password, "");
  EXPECT_EQ(c.database.name, "rendezvous");
  EXPECT_EQ(c.database.pool_size, 8);
  EXPECT_EQ(c.security.api_key_prefix, "rdv_");
  EXPECT_EQ(c.security.encryption_key_env, "RENDEZVOUS_ENCRYPTION_KEY");
  EXPECT_EQ(c.metrics.path, "/metrics");
  EXPECT_EQ(c.logging.level, "info");
  EXPECT_EQ(c.logging.format, "json");
  EXPECT_EQ(c.mail.smtp_url, "");
  EXPECT_EQ(c.mail.smtp_user, "");
  EXPECT_EQ(c.mail.smtp_password, "");
  EXPECT_EQ(c.mail.from, "Rendezvous <rendezvous@localhost>");
}

void ExpectBuiltinsEnabled(const Config& c) {
  ASSERT_EQ(c.plugins.size(), 4u);
  for (size_t i = 0; i < c.plugins.size(); ++i) {
    EXPECT_EQ(c.plugins[i].name, ShippedDefaults()[i]);
    EXPECT_TRUE(c.plugins[i].enabled);
    EXPECT_EQ(c.plugins[i].path, "");
  }
}

// ---- ConfigNode ----

ConfigNode NodeOf(const std::string& yaml) { return ConfigNode(ConfigValue{YAML::Load(yaml)}, "n.yaml", ""); }

TEST(ConfigNodeTest, ReadsValuesAndDefaults) {
  ConfigNode n = NodeOf("a: 5\nb: \"7\"\nc: true\nd: FALSE\ne: [x, y]\nf: [1, 2, 3]\ng: ~\nh: 1.5\ns: hello\n");
  EXPECT_EQ(n.Int("a", 0, 0, 10), 5);
  EXPECT_EQ(n.Int("b", 0, 0, 10), 7);  // quoted numbers are numbers
  EXPECT_TRUE(n.Bool("c", false));
  EXPECT_FALSE(n.Bool("d", true));
  EXPECT_EQ(n.StringList("e", {}), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(n.IntList("f", {}, 0, 10), (std::vector<long>{1, 2, 3}));
  EXPECT_EQ(n.Int("g", 42, 0, 100), 42);  // null counts as absent
  EXPECT_EQ(n.Int("missing", 9, 0, 10), 9);
  EXPECT_DOUBLE_EQ(n.Double("h", 0, 0, 2), 1.5);
  EXPECT_EQ(n.String("s", ""), "hello");
  EXPECT_EQ(n.String("nope", "dflt"), "dflt");
  EXPECT_EQ(n.StringList("nolist", {"d"}), (std::vector<std::string>{"d"}));
  EXPECT_TRUE(n.Has("a"));
  EXPECT_FALSE(n.Has("g"));
  EXPECT_FALSE(n.Has("missing"));
  EXPECT_NO_THROW(n.RejectUnknown());
}

std::string NodeError(const std::string& yaml, const std::function<void(ConfigNode&)>& read) {
  try {
    ConfigNode n(ConfigValue{YAML::Load(yaml)}, "n.yaml", "top");
    read(n);
    n.RejectUnknown();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ConfigNodeTest, IntErrorsNameLineAndPath) {
  auto read = [](ConfigNode& n) { n.Int("port", 1, 1, 100); };
  EXPECT_EQ(NodeError("x: 1\nport: 500\n", [](ConfigNode& n) { n.MarkRead("x"); n.Int("port", 1, 1, 100); }),
            "n.yaml:2: top.port: must be an integer between 1 and 100");
  EXPECT_EQ(NodeError("port: abc\n", read), "n.yaml:1: top.port: must be an integer between 1 and 100");
  EXPECT_EQ(NodeError("port: 1.5\n", read), "n.yaml:1: top.port: must be an integer between 1 and 100");
  EXPECT_EQ(NodeError("port: 0x10\n", read), "n.yaml:1: top.port: must be an integer between 1 and 100");
  EXPECT_EQ(NodeError("port: [1]\n", read), "n.yaml:1: top.port: must be an integer between 1 and 100");
  EXPECT_EQ(NodeError("port: 99999999999999999999999\n", read),
            "n.yaml:1: top.port: must be an integer between 1 and 100");
}

TEST(ConfigNodeTest, BoolStringListIntListErrors) {
  EXPECT_EQ(NodeError("\n\non: yes\n", [](ConfigNode& n) { n.Bool("on", false); }),
            "n.yaml:3: top.on: must be a boolean (true or false)");
  EXPECT_EQ(NodeError("l: abc\n", [](ConfigNode& n) { n.StringList("l", {}); }),
            "n.yaml:1: top.l: must be a list of strings");
  EXPECT_EQ(NodeError("l:\n  - a\n  - {b: 1}\n", [](ConfigNode& n) { n.StringList("l", {}); }),
            "n.yaml:3: top.l[1]: must be a string (in a list of strings)");
  EXPECT_EQ(NodeError("l: 5\n", [](ConfigNode& n) { n.IntList("l", {}, 0, 9); }),
            "n.yaml:1: top.l: must be a list of integers between 0 and 9");
  EXPECT_EQ(NodeError("l:\n  - 1\n  - 2\n  - 10\n", [](ConfigNode& n) { n.IntList("l", {}, 0, 9); }),
            "n.yaml:4: top.l[2]: must be an integer between 0 and 9");
  EXPECT_EQ(NodeError("s: {a: 1}\n", [](ConfigNode& n) { n.String("s", ""); }), "n.yaml:1: top.s: must be a string");
  EXPECT_EQ(NodeError("d: big\n", [](ConfigNode& n) { n.Double("d", 0, 0, 1); }),
            "n.yaml:1: top.d: must be a number between 0 and 1");
}

TEST(ConfigNodeTest, ChildPathsAndUnknownKeys) {
  // Nested path in errors, line of the value.
  EXPECT_EQ(NodeError("a:\n  b:\n    c: 0\n", [](ConfigNode& n) { n.Child("a").Child("b").Int("c", 1, 1, 5); }),
            "n.yaml:3: top.a.b.c: must be an integer between 1 and 5");
  // Child on a non-mapping.
  EXPECT_EQ(NodeError("a: [1, 2]\n", [](ConfigNode& n) { n.Child("a"); }), "n.yaml:1: top.a: must be a mapping");
  EXPECT_EQ(NodeError("a: 3\n", [](ConfigNode& n) { n.Child("a"); }), "n.yaml:1: top.a: must be a mapping");
  // Absent or null child: all defaults, and Fail on it points at its key (null) or parent.
  EXPECT_EQ(NodeError("x: 1\na:\n", [](ConfigNode& n) {
              n.MarkRead("x");
              ConfigNode a = n.Child("a");
              EXPECT_EQ(a.Int("v", 3, 1, 5), 3);
              a.Fail("v", "is required");
            }),
            "n.yaml:2: top.a.v: is required");
  // Unknown key in a child: the key's own line, not the mapping's.
  EXPECT_EQ(NodeError("a:\n  known: 1\n\n  unknwn: 2\n", [](ConfigNode& n) {
              ConfigNode a = n.Child("a");
              a.Int("known", 0, 0, 5);
              a.RejectUnknown();
            }),
            "n.yaml:4: top.a.unknwn: unknown key (expected one of: known)");
  // Unknown key at this level; the first in file order is named.
  EXPECT_EQ(NodeError("b: 1\nz: 2\ny: 3\n", [](ConfigNode& n) { n.Int("b", 0, 0, 5); }),
            "n.yaml:2: top.z: unknown key (expected one of: b)");
  // MarkRead makes a key known.
  EXPECT_EQ(NodeError("enabled: true\npath: x\n", [](ConfigNode& n) {
              n.MarkRead("enabled");
              n.MarkRead("path");
            }),
            "(no error)");
  // Duplicate keys and non-mapping roots are refused when the node is built.
  EXPECT_EQ(NodeError("a: 1\nb: 2\na: 3\n", [](ConfigNode&) {}), "n.yaml:3: top.a: duplicate key");
  EXPECT_EQ(NodeError("- 1\n- 2\n", [](ConfigNode&) {}), "n.yaml:1: top: must be a mapping");
}

TEST(ConfigNodeTest, FailItemPointsAtTheItem) {
  EXPECT_EQ(NodeError("v:\n  - 1\n  - 2\n", [](ConfigNode& n) {
              n.IntList("v", {}, 0, 5);
              n.FailItem("v", 1, "must be odd");
            }),
            "n.yaml:3: top.v[1]: must be odd");
}

TEST(ConfigNodeTest, Secret) {
  ::setenv("RDV_CONFIG_TEST_SECRET", "s3cr3t-value", 1);
  ::setenv("RDV_CONFIG_TEST_EMPTY", "", 1);
  ::unsetenv("RDV_CONFIG_TEST_UNSET");
  {
    ConfigNode n = NodeOf("password: plain\n");
    EXPECT_EQ(n.Secret("password", ""), "plain");
    EXPECT_NO_THROW(n.RejectUnknown());
  }
  {
    ConfigNode n = NodeOf("password_env: RDV_CONFIG_TEST_SECRET\n");
    EXPECT_EQ(n.Secret("password", ""), "s3cr3t-value");
    EXPECT_NO_THROW(n.RejectUnknown());
  }
  EXPECT_EQ(NodeOf("password_env: RDV_CONFIG_TEST_EMPTY\n").Secret("password", "d"), "");
  EXPECT_EQ(NodeOf("other: 1\n").Secret("password", "d"), "d");
  EXPECT_EQ(NodeError("password: a\npassword_env: RDV_CONFIG_TEST_SECRET\n",
                      [](ConfigNode& n) { n.Secret("password", ""); }),
            "n.yaml:2: top.password_env: give either password or password_env, not both");
  const std::string unset =
      NodeError("x: 1\npassword_env: RDV_CONFIG_TEST_UNSET\n", [](ConfigNode& n) { n.Secret("password", ""); });
  EXPECT_EQ(unset, "n.yaml:2: top.password_env: environment variable RDV_CONFIG_TEST_UNSET is not set");
  EXPECT_EQ(NodeError("password_env: \"not a name\"\n", [](ConfigNode& n) { n.Secret("password", ""); }),
            "n.yaml:1: top.password_env: must be the name of an environment variable");
}

// ---- Core config ----

TEST(ConfigTest, ClassDefaultsAreTheDesignDefaults) {
  Config c;
  ExpectDesignDefaults(c);
  EXPECT_EQ(c.outbox.max_attempts, 8);
  EXPECT_EQ(c.database.host, "127.0.0.1");
  EXPECT_EQ(c.database.socket, "");
  EXPECT_EQ(c.database.user, "rendezvous");
}

TEST(ConfigTest, EmptyFileMeansDefaults) {
  for (const std::string yaml : {"", "{}", "# only a comment\n", "server:\ndatabase:\nplugins:\n", "---\n"}) {
    SCOPED_TRACE(yaml);
    Config c = Parse(yaml);
    ExpectDesignDefaults(c);
    EXPECT_EQ(c.database.host, "127.0.0.1");
    EXPECT_EQ(c.database.user, "rendezvous");
    EXPECT_EQ(c.file, "cfg.yaml");
    EXPECT_EQ(c.root_dir, "/srv/rdv");
    ExpectBuiltinsEnabled(c);
    for (const auto& p : c.plugins) EXPECT_EQ(p.line, 0);
  }
}

TEST(ConfigTest, BaseUrlSchemeIsWrittenInLowerCase) {
  Config c = Parse(R"(
server:
  api: { base_url: "HTTPS://api.example.com/" }
  app: { app_url: "hTTp://127.0.0.1:8081" }
)");
  EXPECT_EQ(c.api.base_url, "https://api.example.com");
  EXPECT_EQ(c.app.base_url, "http://127.0.0.1:8081");
}

TEST(ConfigTest, ReadsEveryCoreKey) {
  ::setenv("RDV_CONFIG_TEST_DBPW", "pw-from-env", 1);
  Config c = Parse(R"(
server:
  api: { listen: "0.0.0.0:9000", base_url: "https://api.example.com/" }
  app: { listen: "[::1]:9001", app_url: "https://app.example.com/base/" }
  io_threads: 4
  idle_timeout: 120
  header_timeout: 5
  body_timeout: 15
  worker_threads: 32
  max_body_bytes: 2048
  version_header: Cal-API-Version
  api_versions: ["2024-08-13"]
  trusted_proxies: ["10.0.0.0/8", "::1"]
  rate_limit: { per_credential: 600 }
database:
  host: db.internal
  port: 3307
  user: app
  password_env: RDV_CONFIG_TEST_DBPW
  name: rdv_prod
  pool_size: 16
security: { api_key_prefix: "cal_", encryption_key_env: MY_KEY }
metrics: { path: /internal/metrics, listen: "127.0.0.1:9464" }
logging: { level: debug, format: text }
plugins:
  webhooks: { enabled: false, path: lib/custom_webhooks.so, timeout: 3 }
  extra: { path: /opt/rdv/extra.so }
)");
  EXPECT_EQ(c.api.listen, "0.0.0.0:9000");
  EXPECT_EQ(c.api.base_url, "https://api.example.com");
  EXPECT_EQ(c.app.listen, "[::1]:9001");
  EXPECT_EQ(c.app.base_url, "https://app.example.com/base");
  EXPECT_EQ(c.io_threads, 4);
  EXPECT_EQ(c.idle_timeout, 120);
  EXPECT_EQ(c.header_timeout, 5);
  EXPECT_EQ(c.body_timeout, 15);
  EXPECT_EQ(c.worker_threads, 32);
  EXPECT_EQ(c.max_body_bytes, 2048);
  EXPECT_EQ(c.version_header, "cal-api-version");
  EXPECT_EQ(c.api_versions, std::vector<std::string>{"2024-08-13"});
  EXPECT_EQ(c.trusted_proxies, (std::vector<std::string>{"10.0.0.0/8", "::1"}));
  EXPECT_EQ(c.rate_limit_per_credential, 600);
  EXPECT_EQ(c.database.host, "db.internal");
  EXPECT_EQ(c.database.port, 3307);
  EXPECT_EQ(c.database.user, "app");
  EXPECT_EQ(c.database.password, "pw-from-env");
  EXPECT_EQ(c.database.name, "rdv_prod");
  EXPECT_EQ(c.database.pool_size, 16);
  EXPECT_EQ(c.security.api_key_prefix, "cal_");
  EXPECT_EQ(c.security.encryption_key_env, "MY_KEY");
  EXPECT_EQ(c.metrics.path, "/internal/metrics");
  EXPECT_EQ(c.metrics.listen, "127.0.0.1:9464");
  EXPECT_EQ(c.logging.level, "debug");
  EXPECT_EQ(c.logging.format, "text");

  // File order first, then the built-ins the file did not name.
  ASSERT_EQ(c.plugins.size(), 5u);
  EXPECT_EQ(c.plugins[0].name, "webhooks");
  EXPECT_FALSE(c.plugins[0].enabled);
  EXPECT_EQ(c.plugins[0].path, "/srv/rdv/lib/custom_webhooks.so");
  EXPECT_EQ(c.plugins[0].line, 26);
  EXPECT_EQ(c.plugins[0].node["timeout"].as<int>(), 3);  // the rest is left to the plugin
  EXPECT_EQ(c.plugins[1].name, "extra");
  EXPECT_EQ(c.plugins[1].path, "/opt/rdv/extra.so");
  EXPECT_TRUE(c.plugins[1].enabled);
  EXPECT_EQ(c.plugins[2].name, "oauth");
  EXPECT_EQ(c.plugins[3].name, "bookings");
  EXPECT_EQ(c.plugins[4].name, "calendar");
}

struct BadCase {
  const char* yaml;
  const char* error;
};

TEST(ConfigTest, BadValuesNameLineAndPath) {
  const BadCase cases[] = {
      {"server:\n  io_threads: 0\n", "cfg.yaml:2: server.io_threads: must be an integer between 1 and 64"},
      {"outbox:\n  max_attempts: 0\n", "cfg.yaml:2: outbox.max_attempts: must be an integer between 1 and 1000"},
      {"server:\n  worker_threads: 2000\n", "cfg.yaml:2: server.worker_threads: must be an integer between 1 and 1024"},
      {"server:\n  idle_timeout: 0\n", "cfg.yaml:2: server.idle_timeout: must be an integer between 1 and 86400"},
      {"server:\n  header_timeout: 86401\n", "cfg.yaml:2: server.header_timeout: must be an integer between 1 and 86400"},
      {"server:\n\n  body_timeout: soon\n", "cfg.yaml:3: server.body_timeout: must be an integer between 1 and 86400"},
      {"server:\n  max_body_bytes: 100\n", "cfg.yaml:2: server.max_body_bytes: must be an integer between 1024 and 1073741824"},
      {"server:\n  api:\n    listen: localhost\n",
       "cfg.yaml:3: server.api.listen: must be host:port with a port between 0 and 65535 (e.g. 127.0.0.1:8080)"},
      {"server:\n  app: { listen: \"127.0.0.1:70000\" }\n",
       "cfg.yaml:2: server.app.listen: must be host:port with a port between 0 and 65535 (e.g. 127.0.0.1:8080)"},
      {"server:\n  api:\n    base_url: ftp://x\n",
       "cfg.yaml:3: server.api.base_url: must be an absolute http:// or https:// URL without query or fragment"},
      {"server:\n  app:\n    app_url: 127.0.0.1:8081\n",
       "cfg.yaml:3: server.app.app_url: must be an absolute http:// or https:// URL without query or fragment"},
      {"server:\n  api:\n    base_url: \"http://x/?a=1\"\n",
       "cfg.yaml:3: server.api.base_url: must be an absolute http:// or https:// URL without query or fragment"},
      {"server:\n  version_header: \"bad header\"\n",
       "cfg.yaml:2: server.version_header: must be an HTTP header name (letters, digits, '-', ...)"},
      {"server:\n  api_versions: []\n", "cfg.yaml:2: server.api_versions: must list at least one version"},
      {"server:\n  api_versions: \"2024-04-15\"\n", "cfg.yaml:2: server.api_versions: must be a list of strings"},
      {"server:\n  api_versions:\n    - 2024-04-15\n    - 2024-02-30\n",
       "cfg.yaml:4: server.api_versions[1]: must be a date YYYY-MM-DD"},
      {"server:\n  api_versions: [2024-04-15, 2024-04-15]\n", "cfg.yaml:2: server.api_versions[1]: repeats 2024-04-15"},
      {"server:\n  trusted_proxies:\n    - 10.0.0.0/8\n    - 10.0.0.0/33\n",
       "cfg.yaml:4: server.trusted_proxies[1]: must be an IP address or a CIDR range (10.0.0.0/8, fd00::/8)"},
      {"server:\n  trusted_proxies: [\"lb.internal\"]\n",
       "cfg.yaml:2: server.trusted_proxies[0]: must be an IP address or a CIDR range (10.0.0.0/8, fd00::/8)"},
      {"server:\n  rate_limit:\n    per_credential: -1\n",
       "cfg.yaml:3: server.rate_limit.per_credential: must be an integer between 0 and 10000000"},
      {"server:\n  rate_limit: { per_credential: lots }\n",
       "cfg.yaml:2: server.rate_limit.per_credential: must be an integer between 0 and 10000000"},
      {"server:\n  rate_limit: { per_minute: 5 }\n", "cfg.yaml:2: server.rate_limit.per_minute: unknown key (expected one of: per_credential)"},
      {"database:\n  port: 0\n", "cfg.yaml:2: database.port: must be an integer between 1 and 65535"},
      {"database:\n  pool_size: 0\n", "cfg.yaml:2: database.pool_size: must be an integer between 1 and 1024"},
      {"database:\n  password: x\n  password_env: HOME\n",
       "cfg.yaml:3: database.password_env: give either password or password_env, not both"},
      {"database:\n  name: \"my-db\"\n", "cfg.yaml:2: database.name: must be a database name of 1 to 64 letters, digits, '_' or '$'"},
      {"database:\n  user: \"\"\n", "cfg.yaml:2: database.user: must be a user name of 1 to 128 characters"},
      {"security:\n  api_key_prefix: RDV_\n",
       "cfg.yaml:2: security.api_key_prefix: must be 1 to 16 lowercase letters or digits followed by '_' (e.g. rdv_)"},
      {"security:\n  api_key_prefix: rdv\n",
       "cfg.yaml:2: security.api_key_prefix: must be 1 to 16 lowercase letters or digits followed by '_' (e.g. rdv_)"},
      {"security:\n  api_key_prefix: abcdefghijklmnopq_\n",
       "cfg.yaml:2: security.api_key_prefix: must be 1 to 16 lowercase letters or digits followed by '_' (e.g. rdv_)"},
      {"security:\n  encryption_key_env: \"1BAD\"\n",
       "cfg.yaml:2: security.encryption_key_env: must be the name of an environment variable"},
      {"metrics: { listen: nowhere }\n",
       "cfg.yaml:1: metrics.listen: must be host:port with a port between 0 and 65535 (e.g. 127.0.0.1:8080)"},
      {"metrics: { path: metrics }\n",
       "cfg.yaml:1: metrics.path: must be a URL path starting with '/' (letters, digits, '/', '-', '.', '_', '~')"},
      {"logging:\n  level: verbose\n", "cfg.yaml:2: logging.level: must be one of debug, info, warn, error"},
      {"logging:\n  format: xml\n", "cfg.yaml:2: logging.format: must be json or text"},
      {"server: 5\n", "cfg.yaml:1: server: must be a mapping"},
      {"plugins:\n  - oauth\n", "cfg.yaml:2: plugins: must be a mapping"},
      {"plugins:\n  oauth: 5\n", "cfg.yaml:2: plugins.oauth: must be a mapping"},
      {"plugins:\n  oauth:\n    enabled: maybe\n", "cfg.yaml:3: plugins.oauth.enabled: must be a boolean (true or false)"},
      {"plugins:\n  oauth:\n    path: [a, b]\n", "cfg.yaml:3: plugins.oauth.path: must be a string"},
      {"plugins:\n  oauth: {}\n  oauth: {}\n", "cfg.yaml:3: plugins.oauth: duplicate key"},
      {"plugins:\n  Bad-Name: {}\n",
       "cfg.yaml:2: plugins.Bad-Name: a plugin name is a lowercase letter followed by up to 63 lowercase letters, "
       "digits or '_'"},
      {"- a\n- b\n", "cfg.yaml:1: (top level): must be a mapping"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.yaml);
    EXPECT_EQ(ErrorOf(c.yaml), c.error);
  }
}

TEST(ConfigTest, UnknownKeysStopWithTheirLine) {
  EXPECT_EQ(ErrorOf("logging: {level: info}\n\nserverr:\n  io_threads: 2\n"),
            "cfg.yaml:3: serverr: unknown key (expected one of: database logging mail metrics outbound "
            "outbox plugins security server sms)");
  EXPECT_EQ(ErrorOf("server:\n  io_threads: 2\n  io_thread: 3\n").substr(0, 48),
            "cfg.yaml:3: server.io_thread: unknown key (expec");
  EXPECT_EQ(ErrorOf("server:\n  api:\n    listen: \"127.0.0.1:1\"\n    base-url: http://x\n"),
            "cfg.yaml:4: server.api.base-url: unknown key (expected one of: base_url listen)");
  EXPECT_EQ(ErrorOf("server:\n  app:\n    base_url: http://x\n"),
            "cfg.yaml:3: server.app.base_url: unknown key (expected one of: app_url listen)");
  EXPECT_EQ(ErrorOf("database:\n  hostname: x\n").substr(0, 44), "cfg.yaml:2: database.hostname: unknown key (");
  EXPECT_EQ(ErrorOf("security:\n  prefix: x_\n").substr(0, 42), "cfg.yaml:2: security.prefix: unknown key (");
  EXPECT_EQ(ErrorOf("metrics:\n  port: 9\n").substr(0, 37), "cfg.yaml:2: metrics.port: unknown key");
  EXPECT_EQ(ErrorOf("logging:\n  lvl: info\n").substr(0, 36), "cfg.yaml:2: logging.lvl: unknown key");
  EXPECT_EQ(ErrorOf("mail:\n  from: a@b.c\n  smtp_host: x\n"),
            "cfg.yaml:3: mail.smtp_host: unknown key (expected one of: from log_file smtp_password "
            "smtp_password_env smtp_url smtp_user)");
}

TEST(ConfigTest, MailSection) {
  Config d = Parse("");
  EXPECT_EQ(d.mail.log_file, "/srv/rdv/var/mail.log");  // relative to the root dir

  ::setenv("RDV_CONFIG_TEST_SMTP_PW", "smtp-secret", 1);
  Config c = Parse(R"(
mail:
  smtp_url: "smtps://mail.example.com:465"
  smtp_user: "rdv@example.com"
  smtp_password_env: RDV_CONFIG_TEST_SMTP_PW
  from: "Example Scheduling <no-reply@example.com>"
  log_file: /var/log/rdv/mail.log
)");
  EXPECT_EQ(c.mail.smtp_url, "smtps://mail.example.com:465");
  EXPECT_EQ(c.mail.smtp_user, "rdv@example.com");
  EXPECT_EQ(c.mail.smtp_password, "smtp-secret");
  EXPECT_EQ(c.mail.from, "Example Scheduling <no-reply@example.com>");
  EXPECT_EQ(c.mail.log_file, "/var/log/rdv/mail.log");
  EXPECT_EQ(Parse("mail: { smtp_url: \"smtp://127.0.0.1:2525\", from: a@b.c }").mail.smtp_url,
            "smtp://127.0.0.1:2525");
  EXPECT_EQ(Parse("mail: { smtp_password: pw }").mail.smtp_password, "pw");
  EXPECT_EQ(Parse("mail: { log_file: tmp/m.log }").mail.log_file, "/srv/rdv/tmp/m.log");

  const BadCase cases[] = {
      {"mail:\n  smtp_url: http://mail.example.com\n",
       "cfg.yaml:2: mail.smtp_url: must be \"\" or an smtp://host[:port] or smtps://host[:port] URL"},
      {"mail:\n  smtp_url: \"smtp://\"\n",
       "cfg.yaml:2: mail.smtp_url: must be \"\" or an smtp://host[:port] or smtps://host[:port] URL"},
      {"mail:\n  smtp_url: \"smtp://user:pw@mail.example.com\"\n",
       "cfg.yaml:2: mail.smtp_url: must not carry credentials; use smtp_user and smtp_password"},
      {"mail:\n  from: \"\"\n",
       "cfg.yaml:2: mail.from: must be an address or \"Name <address>\" (e.g. \"Rendezvous <rendezvous@example.com>\")"},
      {"mail:\n  from: \"Rendezvous\"\n",
       "cfg.yaml:2: mail.from: must be an address or \"Name <address>\" (e.g. \"Rendezvous <rendezvous@example.com>\")"},
      {"mail:\n  from: \"Rendezvous <a@b.c>\\r\\nBcc: x@y.z\"\n",
       "cfg.yaml:2: mail.from: must be an address or \"Name <address>\" (e.g. \"Rendezvous <rendezvous@example.com>\")"},
      {"mail:\n  smtp_user: \"a\\nb\"\n",
       "cfg.yaml:2: mail.smtp_user: must be at most 256 characters without control characters"},
      {"mail:\n  smtp_password: x\n  smtp_password_env: HOME\n",
       "cfg.yaml:3: mail.smtp_password_env: give either smtp_password or smtp_password_env, not both"},
      {"mail:\n  log_file: \"\"\n", "cfg.yaml:2: mail.log_file: must name a file (e.g. var/mail.log)"},
      {"mail: 3\n", "cfg.yaml:1: mail: must be a mapping"},
  };
  for (const BadCase& bad : cases) {
    SCOPED_TRACE(bad.yaml);
    EXPECT_EQ(ErrorOf(bad.yaml), bad.error);
  }
}

TEST(ConfigTest, OutboundSection) {
  Config d = Parse("");
  EXPECT_EQ(d.outbound.ca_file, "");  // OpenSSL's default paths
  EXPECT_EQ(d.outbound.ca_dir, "");
  Config c = Parse("outbound:\n  ca_file: etc/ca.pem\n  ca_dir: /etc/ssl/private-cas\n");
  EXPECT_EQ(c.outbound.ca_file, "/srv/rdv/etc/ca.pem");  // relative to the root dir
  EXPECT_EQ(c.outbound.ca_dir, "/etc/ssl/private-cas");
  EXPECT_EQ(ErrorOf("outbound:\n  ca_bundle: x\n"),
            "cfg.yaml:2: outbound.ca_bundle: unknown key (expected one of: ca_dir ca_file)");
  EXPECT_EQ(ErrorOf("outbound:\n  ca_file: \"" + std::string(5000, 'a') + "\"\n"),
            "cfg.yaml:2: outbound.ca_file: must be \"\" or a path of at most 4096 bytes");
}

TEST(ConfigTest, SmsSection) {
  Config d = Parse("");
  EXPECT_EQ(d.sms.gateway_url, "");
  EXPECT_EQ(d.sms.gateway_token, "");
  EXPECT_EQ(d.sms.log_file, "/srv/rdv/var/sms.log");  // relative to the root dir

  ::setenv("RDV_CONFIG_TEST_SMS_TOKEN", "gw-secret", 1);
  Config c = Parse(R"(
sms:
  gateway_url: "https://sms.example.com:8443/v1/send?account=7"
  gateway_token_env: RDV_CONFIG_TEST_SMS_TOKEN
  log_file: /var/log/rdv/sms.log
)");
  EXPECT_EQ(c.sms.gateway_url, "https://sms.example.com:8443/v1/send?account=7");
  EXPECT_EQ(c.sms.gateway_token, "gw-secret");
  EXPECT_EQ(c.sms.log_file, "/var/log/rdv/sms.log");
  EXPECT_EQ(Parse("sms: { gateway_url: \"http://127.0.0.1:9/sms\", gateway_token: t0k }").sms.gateway_token, "t0k");
  EXPECT_EQ(Parse("sms: { log_file: tmp/s.log }").sms.log_file, "/srv/rdv/tmp/s.log");

  const std::string kUrl =
      "must be \"\" or an absolute http:// or https:// URL (e.g. https://sms.example.com/send)";
  struct SmsBadCase {
    std::string yaml;
    std::string error;
  };
  const SmsBadCase cases[] = {
      {"sms:\n  gateway_url: ftp://sms.example.com\n", "cfg.yaml:2: sms.gateway_url: " + kUrl},
      {"sms:\n  gateway_url: \"https://\"\n", "cfg.yaml:2: sms.gateway_url: " + kUrl},
      {"sms:\n  gateway_url: \"https://sms.example.com:99999/x\"\n", "cfg.yaml:2: sms.gateway_url: " + kUrl},
      {"sms:\n  gateway_url: \"https://sms.example.com/a b\"\n", "cfg.yaml:2: sms.gateway_url: " + kUrl},
      {"sms:\n  gateway_url: \"https://u:p@sms.example.com/x\"\n",
       "cfg.yaml:2: sms.gateway_url: must not carry credentials; use gateway_token or gateway_token_env"},
      {"sms:\n  gateway_token: \"a\\nb\"\n",
       "cfg.yaml:2: sms.gateway_token: must be at most 4096 characters without spaces or control characters"},
      {"sms:\n  gateway_token: x\n  gateway_token_env: HOME\n",
       "cfg.yaml:3: sms.gateway_token_env: give either gateway_token or gateway_token_env, not both"},
      {"sms:\n  gateway_token_env: RDV_CONFIG_TEST_SURELY_UNSET_VAR\n",
       "(set below)"},
      {"sms:\n  log_file: \"\"\n", "cfg.yaml:2: sms.log_file: must name a file (e.g. var/sms.log)"},
      {"sms:\n  gateway: x\n",
       "cfg.yaml:2: sms.gateway: unknown key (expected one of: gateway_token gateway_token_env gateway_url log_file)"},
      {"sms: [1]\n", "cfg.yaml:1: sms: must be a mapping"},
  };
  for (const SmsBadCase& bad : cases) {
    SCOPED_TRACE(bad.yaml);
    const std::string error = ErrorOf(bad.yaml);
    if (bad.error == "(set below)") {
      EXPECT_NE(error.find("sms.gateway_token_env"), std::string::npos) << error;
      EXPECT_NE(error.find("RDV_CONFIG_TEST_SURELY_UNSET_VAR"), std::string::npos) << error;
    } else {
      EXPECT_EQ(error, bad.error);
    }
  }
}

TEST(ConfigTest, PluginEntryKeysBeyondEnabledAndPathAreLeftToThePlugin) {
  const std::string yaml = "plugins:\n  oauth:\n    enabled: true\n    path: x.so\n    code_ttl: 600\n    typo: 1\n";
  Config c = Parse(yaml);  // the core does not know the plugin's keys
  ASSERT_EQ(c.plugins[0].name, "oauth");
  // What the plugin host and the plugin then do: enabled/path are consumed, the rest is checked.
  ConfigNode node(ConfigValue{c.plugins[0].node}, c.file, "plugins.oauth", c.plugins[0].line);
  node.MarkRead("enabled");
  node.MarkRead("path");
  EXPECT_EQ(node.Int("code_ttl", 0, 1, 3600), 600);
  try {
    node.RejectUnknown();
    ADD_FAILURE() << "unknown key accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "cfg.yaml:6: plugins.oauth.typo: unknown key (expected one of: code_ttl enabled path)");
  }
  // A plugin the file does not name: a null node, errors about it still carry file and path.
  const PluginEntry& calendar = c.plugins[2];
  ASSERT_EQ(calendar.name, "calendar");
  ConfigNode absent(ConfigValue{calendar.node}, c.file, "plugins.calendar", calendar.line);
  EXPECT_EQ(absent.Child("google").String("client_id", "none"), "none");
  EXPECT_NO_THROW(absent.RejectUnknown());
}

TEST(ConfigTest, PasswordFromEnvironment) {
  ::setenv("RDV_CONFIG_TEST_PW", "correct horse", 1);
  EXPECT_EQ(Parse("database:\n  password_env: RDV_CONFIG_TEST_PW\n").database.password, "correct horse");
  ::unsetenv("RDV_CONFIG_TEST_PW");
  const std::string err = ErrorOf("database:\n  user: u\n  password_env: RDV_CONFIG_TEST_PW\n");
  EXPECT_EQ(err, "cfg.yaml:3: database.password_env: environment variable RDV_CONFIG_TEST_PW is not set");
  EXPECT_EQ(Parse("database:\n  password: \"\"\n").database.password, "");
  EXPECT_EQ(Parse("database:\n  password: hunter2\n").database.password, "hunter2");
}

TEST(ConfigTest, RelativePathsResolveAgainstRoot) {
  Config c = Parse("database:\n  socket: var/db/mysqld.sock\nplugins:\n  oauth: { path: ../lib/oauth.so }\n");
  EXPECT_EQ(c.database.socket, "/srv/rdv/var/db/mysqld.sock");
  EXPECT_EQ(c.plugins[0].path, "/srv/lib/oauth.so");
  EXPECT_EQ(Parse("database:\n  socket: /run/mysqld/mysqld.sock\n").database.socket, "/run/mysqld/mysqld.sock");
  EXPECT_EQ(ResolveRelative(c, "scripts/webhooks/filter.lua"), "/srv/rdv/scripts/webhooks/filter.lua");
  EXPECT_EQ(ResolveRelative(c, "./a/../b.lua"), "/srv/rdv/b.lua");
  EXPECT_EQ(ResolveRelative(c, "/etc/x.lua"), "/etc/x.lua");
  EXPECT_EQ(ResolveRelative(c, ""), "");
  const std::string long_socket = "database:\n  socket: " + std::string(120, 's') + "\n";
  EXPECT_NE(ErrorOf(long_socket).find("cfg.yaml:2: database.socket: resolves to /srv/rdv/sss"), std::string::npos);
}

using rdv_test::TempDir;

TEST(ConfigTest, LoadConfigRootIsTheParentOfTheFilesFolder) {
  TempDir dir;
  fs::create_directories(dir.path() + "/etc");
  const std::string file = dir.path() + "/etc/site.yaml";
  std::ofstream(file) << "database:\n  socket: var/db/mysqld.sock\n";
  Config c = LoadConfig(file);
  EXPECT_EQ(c.file, file);
  EXPECT_EQ(c.root_dir, dir.path());
  EXPECT_EQ(c.database.socket, dir.path() + "/var/db/mysqld.sock");
}

// The default plugin set is data beside the plugin libraries: DESIGN §8's four features, in the
// order they are created, each named once.
TEST(ConfigTest, ShippedDefaultPluginListNamesTheFourFeatures) {
  EXPECT_EQ(ShippedDefaults(), (std::vector<std::string>{"oauth", "bookings", "calendar", "webhooks"}));
  // The build copies it beside the plugins; the host reads it there.
  Config none = ConfigFromString("plugins:\n  extra: {path: /opt/x.so}\n", "cfg.yaml", "/srv/rdv", {});
  ASSERT_EQ(none.plugins.size(), 1u);
  EXPECT_EQ(none.plugins[0].name, "extra");
}

TEST(ConfigTest, DefaultPluginListErrorsNameTheFileAndLine) {
  TempDir dir;
  const std::string list = dir.path() + "/default_plugins.list";
  std::ofstream(list) << "# comment\n\n  oauth  # trailing\r\nbookings\n";
  EXPECT_EQ(ReadDefaultPlugins(list), (std::vector<std::string>{"oauth", "bookings"}));
  auto error_of = [&](const std::string& text) {
    std::ofstream(list, std::ios::trunc) << text;
    try {
      ReadDefaultPlugins(list);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(error_of("oauth\nBad-Name\n"), list + ":2: 'Bad-Name' is not a plugin name");
  EXPECT_EQ(error_of("oauth\n\noauth\n"), list + ":3: plugin 'oauth' is listed twice");
  EXPECT_EQ(error_of(std::string(70000, '#')), list + ": larger than 64 KiB, not a plugin list");
  const std::string missing = dir.path() + "/none.list";
  try {
    ReadDefaultPlugins(missing);
    ADD_FAILURE() << "missing list accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(missing + ": cannot read the default plugin list: ", 0), 0u)
        << e.what();
  }
}

TEST(ConfigTest, FileErrors) {
  TempDir dir;
  const std::string missing = dir.path() + "/etc/none.yaml";
  try {
    LoadConfig(missing);
    ADD_FAILURE() << "missing file accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(missing + ": cannot read: ", 0), 0u) << e.what();
  }
  const std::string bad = dir.path() + "/bad.yaml";
  std::ofstream(bad) << "server:\n  io_threads: 2\n  api: [1, 2\ndatabase: {}\n";
  try {
    LoadConfig(bad);
    ADD_FAILURE() << "syntax error accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(bad + ":4: YAML syntax error: ", 0), 0u) << e.what();
  }
  EXPECT_EQ(ErrorOf("a: 1\n  b: 2\n").rfind("cfg.yaml:2: YAML syntax error: ", 0), 0u) << ErrorOf("a: 1\n  b: 2\n");
  EXPECT_EQ(ErrorOf("server: {}\n---\nserver: {}\n"), "cfg.yaml:3: the config file must hold one YAML document");
  // A trailing empty document is no second document.
  EXPECT_EQ(ErrorOf("server: {}\n---\n"), "(no error)");
}

// Texts on which a whole-stream YAML load never returns (the parser hands out the same document
// forever): the loader answers, whatever it answers, and says which line when it refuses.
TEST(Config, MalformedTextsThatStallAParserAreAnswered) {
  for (const std::string text : {", ", ",", "- a\n, ", "server: {}\n, \n"}) {
    const std::string error = ErrorOf(text);
    if (error != "(no error)") {
      EXPECT_EQ(error.rfind("cfg.yaml:", 0), 0u) << error;
    }
  }
}

// The repository root: $RDV_SOURCE_DIR, else the one the build was configured from, so the shipped
// files are always checked, never skipped.
std::string SourceDir() {
  const char* env = std::getenv("RDV_SOURCE_DIR");
  if (env && *env) return env;
  return RDV_DEFAULT_SOURCE_DIR;
}

TEST(ShippedConfigTest, EtcRendezvousYamlHoldsTheDefaults) {
  const std::string file = SourceDir() + "/etc/rendezvous.yaml";
  ASSERT_TRUE(fs::exists(file)) << file;
  Config c = LoadConfig(file);
  ExpectDesignDefaults(c);
  EXPECT_EQ(c.root_dir, fs::path(file).lexically_normal().parent_path().parent_path().string());
  EXPECT_EQ(c.mail.log_file, c.root_dir + "/var/mail.log");
  // `make run` talks to the private instance under var/ over its socket as root.
  EXPECT_EQ(c.database.socket, c.root_dir + "/var/db/mysqld.sock");
  EXPECT_EQ(c.database.user, "root");
  EXPECT_EQ(c.database.host, "127.0.0.1");
  ExpectBuiltinsEnabled(c);
  for (const auto& p : c.plugins) EXPECT_GT(p.line, 0) << p.name << " is not written out";

  // The plugin sections list every key of DESIGN §8 with its default.
  YAML::Node y = YAML::LoadFile(file)["plugins"];
  EXPECT_EQ(y["oauth"]["access_token_ttl"].as<long>(), 1800);
  EXPECT_EQ(y["oauth"]["refresh_token_ttl"].as<long>(), 2592000);
  EXPECT_EQ(y["oauth"]["code_ttl"].as<long>(), 600);
  EXPECT_EQ(y["bookings"]["completion_sweep_interval"].as<long>(), 60);
  EXPECT_EQ(y["bookings"]["public_rate_limit"]["per_minute"].as<long>(), 120);
  EXPECT_EQ(y["bookings"]["public_rate_limit"]["burst"].as<long>(), 60);
  EXPECT_EQ(y["bookings"]["reservations"]["minutes"].as<long>(), 5);
  EXPECT_EQ(y["bookings"]["reservations"]["max_minutes"].as<long>(), 15);
  EXPECT_EQ(y["bookings"]["reservations"]["per_address"].as<long>(), 10);
  YAML::Node google = y["calendar"]["google"];
  EXPECT_EQ(google["client_id"].as<std::string>(), "");
  EXPECT_EQ(google["client_secret"].as<std::string>(), "");
  EXPECT_EQ(google["auth_url"].as<std::string>(), "https://accounts.google.com/o/oauth2/v2/auth");
  EXPECT_EQ(google["token_url"].as<std::string>(), "https://oauth2.googleapis.com/token");
  EXPECT_EQ(google["api_base_url"].as<std::string>(), "https://www.googleapis.com/calendar/v3");
  YAML::Node wh = y["webhooks"];
  EXPECT_FALSE(wh["allow_private_networks"].as<bool>());
  EXPECT_EQ(wh["timeout"].as<long>(), 10);
  EXPECT_EQ(wh["retry_schedule"].as<std::vector<long>>(), (std::vector<long>{5, 300, 1800, 7200, 18000, 36000}));
  EXPECT_EQ(wh["workers"].as<long>(), 16);
  EXPECT_EQ(wh["scripts"]["filter"].as<std::string>(), "");
  EXPECT_EQ(wh["scripts"]["render"].as<std::string>(), "");
  EXPECT_EQ(wh["lua"]["instruction_limit"].as<long>(), 1000000);
  EXPECT_EQ(wh["lua"]["memory_limit_bytes"].as<long>(), 16777216);
  EXPECT_EQ(wh["lua"]["time_limit_ms"].as<long>(), 50);
  for (const char* name : {"oauth", "bookings", "calendar", "webhooks"}) EXPECT_TRUE(y[name]["enabled"].as<bool>());
}

TEST(ShippedConfigTest, SmsSectionsOfTheShippedFiles) {
  Config d = LoadConfig(SourceDir() + "/etc/rendezvous.yaml");
  EXPECT_EQ(d.sms.gateway_url, "");
  EXPECT_EQ(d.sms.gateway_token, "");
  EXPECT_EQ(d.sms.log_file, d.root_dir + "/var/sms.log");
  YAML::Node y = YAML::LoadFile(SourceDir() + "/etc/rendezvous.yaml")["sms"];
  EXPECT_TRUE(y["gateway_url"].IsDefined());
  EXPECT_TRUE(y["gateway_token"].IsDefined());
  EXPECT_TRUE(y["log_file"].IsDefined());

  ::setenv("RENDEZVOUS_DB_PASSWORD", "example-password", 1);
  ::setenv("RENDEZVOUS_SMTP_PASSWORD", "example-smtp-password", 1);
  ::setenv("RENDEZVOUS_SMS_GATEWAY_TOKEN", "example-sms-token", 1);
  Config p = LoadConfig(SourceDir() + "/etc/examples/production.yaml");
  EXPECT_EQ(p.sms.gateway_url.rfind("https://", 0), 0u) << p.sms.gateway_url;
  EXPECT_EQ(p.sms.gateway_token, "example-sms-token");
}

TEST(ShippedConfigTest, ProductionExampleLoads) {
  ::setenv("RENDEZVOUS_DB_PASSWORD", "example-password", 1);
  ::setenv("RENDEZVOUS_SMTP_PASSWORD", "example-smtp-password", 1);
  ::setenv("RENDEZVOUS_SMS_GATEWAY_TOKEN", "example-sms-token", 1);
  Config c = LoadConfig(SourceDir() + "/etc/examples/production.yaml");
  EXPECT_EQ(c.mail.smtp_password, "example-smtp-password");
  EXPECT_EQ(c.mail.smtp_url.rfind("smtp://", 0), 0u) << c.mail.smtp_url;
  EXPECT_EQ(c.database.password, "example-password");
  EXPECT_EQ(c.database.socket, "");
  EXPECT_TRUE(c.api.base_url.rfind("https://", 0) == 0) << c.api.base_url;
  EXPECT_TRUE(c.app.base_url.rfind("https://", 0) == 0) << c.app.base_url;
  ExpectBuiltinsEnabled(c);
}

}  // namespace
}  // namespace rendezvous::core
