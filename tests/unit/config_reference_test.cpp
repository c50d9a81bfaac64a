// The configuration reference of docs/operations.md, etc/rendezvous.yaml and the code that reads
// the configuration name the same keys: every key of the shipped file is in the reference, every
// key of the reference is in the file, and every key the config readers ask for (core/config and
// each plugin's *_plugin.cpp, found by their ConfigNode calls) is in both.
#include <filesystem>
#include <regex>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "child_process.hpp"
#include "test_server.hpp"

namespace rendezvous::testing {
namespace {

namespace fs = std::filesystem;

std::string Guide() { return ReadFile(SourceDir() + "/docs/operations.md"); }

// "plugins.oauth.enabled" -> "plugins.<name>.enabled": the reference names those once for all.
std::string Generic(const std::string& path) {
  static const std::regex kPluginEntry(R"(^plugins\.[a-z_]+\.(enabled|path)$)");
  std::smatch m;
  return std::regex_match(path, m, kPluginEntry) ? "plugins.<name>." + m[1].str() : path;
}

// Leaf paths (dotted) and every key name of the shipped configuration.
void Walk(const YAML::Node& node, const std::string& prefix, std::set<std::string>& leaves, std::set<std::string>& names) {
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    names.insert(key);
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (entry.second.IsMap()) {
      Walk(entry.second, path, leaves, names);
    } else {
      leaves.insert(Generic(path));
    }
  }
}

// The first column of the rows of the "Configuration reference" tables.
std::set<std::string> ReferenceKeys() {
  const std::string guide = Guide();
  const size_t at = guide.find("## Configuration reference");
  EXPECT_NE(at, std::string::npos);
  std::set<std::string> keys;
  static const std::regex kRow(R"(\n\| `([a-z_.<>]+)` \|)");
  const std::string section = guide.substr(at == std::string::npos ? guide.size() : at);
  for (auto it = std::sregex_iterator(section.begin(), section.end(), kRow); it != std::sregex_iterator(); ++it)
    keys.insert((*it)[1].str());
  return keys;
}

// Key names the config readers ask for: ConfigNode accessors with a literal key, and the
// calendar plugin's Url(node, "key", ...) helper. A Secret("x") also accepts "x_env".
std::set<std::string> KeysReadByTheCode(std::set<std::string>* secrets) {
  std::vector<std::string> files = {SourceDir() + "/core/config/config.cpp"};
  for (const auto& dir : fs::directory_iterator(SourceDir() + "/plugins")) {
    if (!dir.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(dir.path()))
      if (f.path().filename().string().ends_with("_plugin.cpp")) files.push_back(f.path().string());
  }
  EXPECT_GE(files.size(), 5u);
  static const std::regex kCall(R"(\.(String|Secret|Int|Double|Bool|StringList|IntList|Child)\("([a-z_]+)\")");
  static const std::regex kUrl(R"(\bUrl\(\w+, "([a-z_]+)\")");
  std::set<std::string> keys;
  for (const std::string& file : files) {
    const std::string text = ReadFile(file);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kCall); it != std::sregex_iterator(); ++it) {
      keys.insert((*it)[2].str());
      if ((*it)[1].str() == "Secret") secrets->insert((*it)[2].str());
    }
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kUrl); it != std::sregex_iterator(); ++it)
      keys.insert((*it)[1].str());
  }
  return keys;
}

TEST(ConfigReference, TheShippedFileAndTheGuideNameTheSameKeys) {
  std::set<std::string> leaves, names;
  Walk(YAML::LoadFile(SourceDir() + "/etc/rendezvous.yaml"), "", leaves, names);
  const std::set<std::string> reference = ReferenceKeys();
  ASSERT_GT(reference.size(), 60u);
  for (const std::string& leaf : leaves) EXPECT_TRUE(reference.count(leaf)) << leaf << " is not in docs/operations.md";
  for (const std::string& key : reference) EXPECT_TRUE(leaves.count(key)) << key << " is not in etc/rendezvous.yaml";
}

TEST(ConfigReference, EveryKeyTheCodeReadsIsInTheShippedFileAndTheGuide) {
  std::set<std::string> leaves, names;
  Walk(YAML::LoadFile(SourceDir() + "/etc/rendezvous.yaml"), "", leaves, names);
  std::set<std::string> components;
  for (const std::string& key : ReferenceKeys()) {
    size_t start = 0;
    for (size_t dot = key.find('.'); ; dot = key.find('.', start)) {
      components.insert(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
  }
  std::set<std::string> secrets;
  const std::set<std::string> read = KeysReadByTheCode(&secrets);
  ASSERT_GT(read.size(), 60u);
  for (const std::string& key : read) {
    EXPECT_TRUE(names.count(key)) << key << " is read by the code but not in etc/rendezvous.yaml";
    EXPECT_TRUE(components.count(key)) << key << " is read by the code but not in docs/operations.md";
  }
  const std::string guide = Guide();
  for (const std::string& secret : secrets)
    EXPECT_TRUE(std::regex_search(guide, std::regex("`[a-z_.]*\\b" + secret + "_env`")))
        << secret << "_env is not in docs/operations.md";
}

}  // namespace
}  // namespace rendezvous::testing
