#include "rendezvous/config_node.hpp"

#include "config/config_value.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace rendezvous {
namespace {

// Config values are operator input but still bounded: nothing in the config needs more.
constexpr size_t kMaxStringBytes = 65536;
constexpr size_t kMaxListItems = 4096;

int MarkLine(const YAML::Node& n) {
  if (!n.IsDefined()) return 0;
  const YAML::Mark m = n.Mark();
  return m.is_null() ? 0 : m.line + 1;
}

bool IsAbsent(const YAML::Node& n) { return !n.IsDefined() || n.IsNull(); }

bool ParseLong(const std::string& text, long* out) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;
  if (begin == end) return false;
  auto [ptr, ec] = std::from_chars(begin, end, *out);
  return ec == std::errc() && ptr == end;
}

bool ParseDouble(const std::string& text, double* out) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;
  if (begin == end) return false;
  auto [ptr, ec] = std::from_chars(begin, end, *out, std::chars_format::general);
  return ec == std::errc() && ptr == end && std::isfinite(*out);
}

bool ParseBool(const std::string& text, bool* out) {
  if (text == "true" || text == "True" || text == "TRUE") {
    *out = true;
    return true;
  }
  if (text == "false" || text == "False" || text == "FALSE") {
    *out = false;
    return true;
  }
  return false;
}

bool IsEnvName(const std::string& name) {
  if (name.empty() || name.size() > 256) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0)) return false;
  }
  return true;
}

template <class T>
std::string Num(T v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string IntRange(long min, long max) { return "between " + Num(min) + " and " + Num(max); }

}  // namespace

ConfigNode::ConfigNode(const ConfigValue& value, std::string file, std::string path, int line)
    : file_(std::move(file)), path_(std::move(path)) {
  YAML::Node node = value.node;
  if (line > 0) {
    line_ = line;
  } else {
    const int own = MarkLine(node);
    line_ = own > 0 ? own : 1;
  }
  if (IsAbsent(node)) node = YAML::Node(YAML::NodeType::Null);
  value_ = std::make_shared<const ConfigValue>(ConfigValue{node});
  if (node.IsNull()) return;
  if (!node.IsMap()) FailAt(line_, path_, "must be a mapping");
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const int key_line = MarkLine(it->first) > 0 ? MarkLine(it->first) : line_;
    if (!it->first.IsScalar()) FailAt(key_line, path_, "keys must be plain names");
    const std::string& key = it->first.Scalar();
    if (!seen.insert(key).second) FailAt(key_line, PathOf(key), "duplicate key");
  }
}

ConfigNode::ConfigNode(const ConfigNode&) = default;
ConfigNode::ConfigNode(ConfigNode&&) noexcept = default;
ConfigNode& ConfigNode::operator=(const ConfigNode&) = default;
ConfigNode& ConfigNode::operator=(ConfigNode&&) noexcept = default;
ConfigNode::~ConfigNode() = default;

std::vector<std::string> ConfigNode::Keys() const {
  std::vector<std::string> keys;
  const YAML::Node& node = value_->node;
  if (!node.IsMap()) return keys;
  for (auto it = node.begin(); it != node.end(); ++it) keys.push_back(it->first.Scalar());
  return keys;
}

bool ConfigNode::Has(const std::string& key) const {
  int line = 0;
  return !IsAbsent(Find(key, &line).node);
}

ConfigValue ConfigNode::Find(const std::string& key, int* line) const {
  *line = line_;
  const YAML::Node& node = value_->node;
  if (!node.IsMap()) return ConfigValue{YAML::Node()};
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it->first.Scalar() != key) continue;
    // A null value's mark points past the key (often at the next line); the key is what the
    // operator looks for.
    const int value_line = IsAbsent(it->second) ? 0 : MarkLine(it->second);
    const int key_line = MarkLine(it->first);
    *line = value_line > 0 ? value_line : (key_line > 0 ? key_line : line_);
    return ConfigValue{it->second};
  }
  return ConfigValue{YAML::Node()};
}

ConfigValue ConfigNode::Get(const std::string& key, int* line) {
  read_.insert(key);
  return Find(key, line);
}

std::string ConfigNode::PathOf(const std::string& key) const {
  if (key.empty()) return path_;
  return path_.empty() ? key : path_ + "." + key;
}

void ConfigNode::FailAt(int line, const std::string& path, const std::string& message) const {
  throw ConfigError(file_ + ":" + std::to_string(line) + ": " + (path.empty() ? "(top level)" : path) +
                    ": " + message);
}

void ConfigNode::Fail(const std::string& key, const std::string& message) const {
  int line = line_;
  if (!key.empty()) Find(key, &line);
  FailAt(line, PathOf(key), message);
}

void ConfigNode::FailItem(const std::string& key, size_t index, const std::string& message) const {
  int line = line_;
  const YAML::Node list = Find(key, &line).node;
  if (list.IsSequence() && index < list.size()) {
    const int item_line = MarkLine(list[index]);
    if (item_line > 0) line = item_line;
  }
  FailAt(line, PathOf(key) + "[" + Num(index) + "]", message);
}

std::string ConfigNode::String(const std::string& key, const std::string& def) {
  int line = 0;
  YAML::Node v = Get(key, &line).node;
  if (IsAbsent(v)) return def;
  if (!v.IsScalar()) FailAt(line, PathOf(key), "must be a string");
  if (v.Scalar().size() > kMaxStringBytes)
    FailAt(line, PathOf(key), "must be at most " + Num(kMaxStringBytes) + " bytes long");
  return v.Scalar();
}

std::string ConfigNode::Secret(const std::string& key, const std::string& def) {
  const std::string env_key = key + "_env";
  int env_line = 0;
  YAML::Node env = Get(env_key, &env_line).node;
  if (IsAbsent(env)) return String(key, def);
  read_.insert(key);
  if (Has(key)) FailAt(env_line, PathOf(env_key), "give either " + key + " or " + env_key + ", not both");
  if (!env.IsScalar() || !IsEnvName(env.Scalar()))
    FailAt(env_line, PathOf(env_key), "must be the name of an environment variable");
  const std::string& name = env.Scalar();
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) FailAt(env_line, PathOf(env_key), "environment variable " + name + " is not set");
  return value;
}

long ConfigNode::Int(const std::string& key, long def, long min, long max) {
  int line = 0;
  YAML::Node v = Get(key, &line).node;
  if (IsAbsent(v)) return def;
  long out = 0;
  if (!v.IsScalar() || !ParseLong(v.Scalar(), &out) || out < min || out > max)
    FailAt(line, PathOf(key), "must be an integer " + IntRange(min, max));
  return out;
}

double ConfigNode::Double(const std::string& key, double def, double min, double max) {
  int line = 0;
  YAML::Node v = Get(key, &line).node;
  if (IsAbsent(v)) return def;
  double out = 0;
  if (!v.IsScalar() || !ParseDouble(v.Scalar(), &out) || out < min || out > max)
    FailAt(line, PathOf(key), "must be a number between " + Num(min) + " and " + Num(max));
  return out;
}

bool ConfigNode::Bool(const std::string& key, bool def) {
  int line = 0;
  YAML::Node v = Get(key, &line).node;
  if (IsAbsent(v)) return def;
  bool out = false;
  if (!v.IsScalar() || !ParseBool(v.Scalar(), &out)) FailAt(line, PathOf(key), "must be a boolean (true or false)");
  return out;
}

std::vector<std::string> ConfigNode::StringList(const std::string& key, const std::vector<std::string>& def) {
  int line = 0;
  YAML::Node v = Get(key, &line).node;
  if (IsAbsent(v)) return def;
  const std::string path = PathOf(key);
  if (!v.IsSequence()) FailAt(line, path, "must be a list of strings");
  if (v.size() > kMaxListItems) FailAt(line, path, "must have at most " + Num(kMaxListItems) + " items");
  std::vector<std::string> out;
  size_t i = 0;
  for (auto it = v.begin(); it != v.end(); ++it, ++i) {
    const YAML::Node item = *it;
    const int item_line = MarkLine(item) > 0 ? MarkLine(item) : line;
    const std::string item_path = path + "[" + Num(i) + "]";
    if (IsAbsent(item) || !item.IsScalar()) FailAt(item_line, item_path, "must be a string (in a list of strings)");
    if (item.Scalar().size() > kMaxStringBytes)
      FailAt(item_line, item_path, "must be at most " + Num(kMaxStringBytes) + " bytes long");
    out.push_back(item.Scalar());
  }
  return out;
}

std::vector<long> ConfigNode::IntList(const std::string& key, const std::vector<long>& def, long min, long max) {
  int line = 0;
  YAML::Node v = Get(key, &line).node;
  if (IsAbsent(v)) return def;
  const std::string path = PathOf(key);
  if (!v.IsSequence()) FailAt(line, path, "must be a list of integers " + IntRange(min, max));
  if (v.size() > kMaxListItems) FailAt(line, path, "must have at most " + Num(kMaxListItems) + " items");
  std::vector<long> out;
  size_t i = 0;
  for (auto it = v.begin(); it != v.end(); ++it, ++i) {
    const YAML::Node item = *it;
    long n = 0;
    if (!item.IsScalar() || !ParseLong(item.Scalar(), &n) || n < min || n > max)
      FailAt(MarkLine(item) > 0 ? MarkLine(item) : line, path + "[" + Num(i) + "]",
             "must be an integer " + IntRange(min, max));
    out.push_back(n);
  }
  return out;
}

ConfigNode ConfigNode::Child(const std::string& key) {
  int line = 0;
  YAML::Node v = Get(key, &line).node;
  if (!IsAbsent(v) && !v.IsMap()) FailAt(line, PathOf(key), "must be a mapping");
  // Errors about the child as a whole point at its key, which is where the operator looks.
  int key_line = line;
  const YAML::Node& node = value_->node;
  if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it)
      if (it->first.Scalar() == key && MarkLine(it->first) > 0) key_line = MarkLine(it->first);
  }
  return ConfigNode(ConfigValue{v}, file_, PathOf(key), key_line);
}

void ConfigNode::RejectUnknown() const {
  const YAML::Node& node = value_->node;
  if (!node.IsMap()) return;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string& key = it->first.Scalar();
    if (read_.count(key)) continue;
    std::string message = "unknown key";
    if (!read_.empty()) {
      message += " (expected one of:";
      for (const std::string& k : read_) message += " " + k;
      message += ")";
    }
    const int key_line = MarkLine(it->first);
    FailAt(key_line > 0 ? key_line : line_, PathOf(key), message);
  }
}

}  // namespace rendezvous
