// Reading a YAML config subtree with precise errors: every failure names file, line and path.
#pragma once

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace rendezvous {

// Start-up configuration error. what() is "FILE:LINE: PATH: message".
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A view of one mapping in the config. Typical use, once, at plugin creation:
//   ConfigNode c = ctx.config();
//   ttl_ = c.Int("access_token_ttl", 1800, 1, 86400);
//   c.RejectUnknown();   // any key not read above stops start-up with its line
// Not thread-safe; meant for start-up.
class ConfigNode {
 public:
  ConfigNode(YAML::Node node, std::string file, std::string path);

  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }
  bool Has(const std::string& key) const;

  std::string String(const std::string& key, const std::string& def);
  // `key` or `key_env` (the name of an environment variable holding the value).
  std::string Secret(const std::string& key, const std::string& def);
  long Int(const std::string& key, long def, long min, long max);
  double Double(const std::string& key, double def, double min, double max);
  bool Bool(const std::string& key, bool def);
  std::vector<std::string> StringList(const std::string& key, const std::vector<std::string>& def);
  std::vector<long> IntList(const std::string& key, const std::vector<long>& def, long min, long max);
  // A nested mapping (empty when absent). Its keys are checked by its own RejectUnknown().
  ConfigNode Child(const std::string& key);

  // Throws ConfigError for the first key of this mapping that no accessor read.
  void RejectUnknown() const;
  // Throws ConfigError naming this node's (or key's) location.
  [[noreturn]] void Fail(const std::string& key, const std::string& message) const;

  const YAML::Node& yaml() const { return node_; }

 private:
  std::string Where(const YAML::Node& n) const;
  YAML::Node Get(const std::string& key);

  YAML::Node node_;
  std::string file_;
  std::string path_;
  std::set<std::string> read_;
};

}  // namespace rendezvous
