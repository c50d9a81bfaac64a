// Reading a YAML config subtree with precise errors: every failure names file, line and path.
#pragma once

#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace rendezvous {

// The parsed YAML behind a ConfigNode. Opaque outside the core (core/config/config_value.hpp).
struct ConfigValue;

// Start-up configuration error. what() is "FILE:LINE: PATH: message" (LINE 1-based; PATH the
// dotted YAML path, e.g. plugins.webhooks.lua.instruction_limit, list elements as key[2]).
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A view of one mapping in the config. Typical use, once, at plugin creation:
//   ConfigNode c = ctx.config();
//   ttl_ = c.Int("access_token_ttl", 1800, 1, 86400);
//   c.RejectUnknown();   // any key not read above stops start-up with its line
//
// Rules shared by every accessor:
// - A key that is absent, or present with a null value (`key:`, `key: ~`, `key: null`), gets the
//   default. A null or absent mapping therefore means "all defaults".
// - Scalars may be plain or quoted (`port: "3306"` is the integer 3306). Booleans are true/false.
// - Every accessor marks its key as read (also when absent), so RejectUnknown() knows the keys
//   this mapping understands.
// - Errors throw ConfigError pointing at the value's line (the key's line when the value is null).
//
// Shares the parsed document with its copies (read-only). Not thread-safe; meant for start-up.
// Copies are independent as to which keys were read.
class ConfigNode {
 public:
  // Built by the core. `value` must be a mapping or null/undefined (treated as an empty mapping);
  // anything else, a duplicate key or a non-scalar key throws ConfigError. `line` (1-based) is
  // where errors about the mapping itself point: pass the line of its key; 0 uses the node's own
  // position (or 1 when the node is not from a file).
  ConfigNode(const ConfigValue& value, std::string file, std::string path, int line = 0);
  ConfigNode(const ConfigNode&);
  ConfigNode(ConfigNode&&) noexcept;
  ConfigNode& operator=(const ConfigNode&);
  ConfigNode& operator=(ConfigNode&&) noexcept;
  ~ConfigNode();

  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }
  // 1-based line errors about this mapping point at.
  int line() const { return line_; }
  // True when `key` is present with a non-null value. Does not mark it read.
  bool Has(const std::string& key) const;
  // The keys of this mapping in file order (for mappings keyed by names the reader does not know
  // in advance; read each with Child() or another accessor). Does not mark them read.
  std::vector<std::string> Keys() const;

  // Any scalar as text.
  std::string String(const std::string& key, const std::string& def);
  // `key` or `key_env` (the name of an environment variable holding the value). Both given: error.
  // `key_env` naming an unset variable: error naming the variable (an empty value is allowed).
  // The value itself never appears in an error message.
  std::string Secret(const std::string& key, const std::string& def);
  long Int(const std::string& key, long def, long min, long max);
  double Double(const std::string& key, double def, double min, double max);
  bool Bool(const std::string& key, bool def);
  std::vector<std::string> StringList(const std::string& key, const std::vector<std::string>& def);
  std::vector<long> IntList(const std::string& key, const std::vector<long>& def, long min, long max);
  // A nested mapping (empty when absent or null); a non-mapping value is an error. Its keys are
  // checked by its own RejectUnknown().
  ConfigNode Child(const std::string& key);

  // Counts `key` as understood without reading it (for keys consumed elsewhere, e.g. a plugin
  // entry's `enabled` and `path`, read by the core).
  void MarkRead(const std::string& key) { read_.insert(key); }

  // Throws ConfigError for the first key (in file order) of this mapping that no accessor read.
  void RejectUnknown() const;
  // Throws ConfigError naming `key`'s location (its value's line; this mapping's line when the key
  // is absent or empty).
  [[noreturn]] void Fail(const std::string& key, const std::string& message) const;
  // Throws ConfigError naming item `index` of the list under `key` (path key[index], its line):
  // for checks beyond the type, e.g. "must be a date".
  [[noreturn]] void FailItem(const std::string& key, size_t index, const std::string& message) const;

  // The YAML value itself, for the core.
  const ConfigValue& value() const { return *value_; }

 private:
  // The value of `key` (a null node when absent) and the line errors about it point at.
  ConfigValue Find(const std::string& key, int* line) const;
  ConfigValue Get(const std::string& key, int* line);
  std::string PathOf(const std::string& key) const;
  [[noreturn]] void FailAt(int line, const std::string& path, const std::string& message) const;

  std::shared_ptr<const ConfigValue> value_;
  std::string file_;
  std::string path_;
  int line_ = 1;
  std::set<std::string> read_;
};

}  // namespace rendezvous
