// Parsing of `admin` command arguments: `--name value` options (repeatable), `--flag` switches and
// positional words. Header-only; used by the core's and the plugins' admin commands.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace rendezvous {

class CliArgs {
 public:
  // Throws std::invalid_argument for an unknown option or an option missing its value.
  CliArgs(const std::vector<std::string>& args, const std::set<std::string>& value_options,
          const std::set<std::string>& flag_options) {
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (a.rfind("--", 0) != 0 || a == "--") {
        positional_.push_back(a);
        continue;
      }
      std::string name = a.substr(2);
      std::optional<std::string> inline_value;
      if (auto eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      if (flag_options.count(name)) {
        if (inline_value) throw std::invalid_argument("option --" + name + " takes no value");
        flags_.insert(name);
      } else if (value_options.count(name)) {
        if (inline_value) {
          values_.emplace(name, *inline_value);
        } else {
          if (i + 1 >= args.size()) throw std::invalid_argument("option --" + name + " needs a value");
          values_.emplace(name, args[++i]);
        }
      } else {
        throw std::invalid_argument("unknown option --" + name);
      }
    }
  }

  const std::vector<std::string>& positional() const { return positional_; }
  bool Flag(const std::string& name) const { return flags_.count(name) != 0; }
  std::optional<std::string> Get(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) return std::nullopt;
    return it->second;
  }
  std::vector<std::string> GetAll(const std::string& name) const {
    std::vector<std::string> out;
    auto [b, e] = values_.equal_range(name);
    for (auto it = b; it != e; ++it) out.push_back(it->second);
    return out;
  }
  std::string Require(const std::string& name) const {
    auto v = Get(name);
    if (!v) throw std::invalid_argument("option --" + name + " is required");
    return *v;
  }

 private:
  std::vector<std::string> positional_;
  std::multimap<std::string, std::string> values_;
  std::set<std::string> flags_;
};

}  // namespace rendezvous
