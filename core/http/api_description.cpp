#include "http/api_description.hpp"

#include <cstdint>
#include <cstdio>
#include <regex>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

namespace rendezvous::core {
namespace {

// YAML 1.2 core schema, the resolutions of a plain scalar.
Json PlainScalar(const std::string& text) {
  static const std::regex kNull("~|null|Null|NULL|");
  static const std::regex kTrue("true|True|TRUE");
  static const std::regex kFalse("false|False|FALSE");
  static const std::regex kInt("[-+]?[0-9]+");
  static const std::regex kFloat(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  if (std::regex_match(text, kNull)) return nullptr;
  if (std::regex_match(text, kTrue)) return true;
  if (std::regex_match(text, kFalse)) return false;
  if (std::regex_match(text, kInt)) {
    try {
      return std::stoll(text);
    } catch (const std::out_of_range&) {
      return std::stod(text);
    }
  }
  if (std::regex_match(text, kFloat)) return std::stod(text);
  return text;
}

Json Convert(const YAML::Node& node, int depth) {
  // Aliases are shared nodes, so a cycle would recurse forever; documents are far shallower.
  if (depth > 64) throw std::runtime_error("YAML nested deeper than 64 levels (an alias cycle?)");
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar:
      return node.Tag() == "?" ? PlainScalar(node.Scalar()) : Json(node.Scalar());
    case YAML::NodeType::Sequence: {
      Json out = Json::array();
      for (const YAML::Node& item : node) out.push_back(Convert(item, depth + 1));
      return out;
    }
    case YAML::NodeType::Map: {
      Json out = Json::object();
      for (const auto& entry : node) {
        if (!entry.first.IsScalar())
          throw std::runtime_error("YAML key that is not a scalar at line " +
                                   std::to_string(entry.first.Mark().line + 1));
        out[entry.first.Scalar()] = Convert(entry.second, depth + 1);
      }
      return out;
    }
  }
  return nullptr;
}

std::string Fnv1a64Hex(const std::string& bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

}  // namespace

Json YamlToJson(std::string_view yaml) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(std::string("YAML: ") + e.what());
  }
  return Convert(root, 0);
}

ApiDescription OpenApiDescription(const DescriptionUrls& urls) {
  static const std::string kJson = YamlToJson(OpenApiYamlText()).dump();
  // Inside JSON strings: the values are written escaped, without their quotes.
  auto escaped = [](const std::string& text) {
    std::string quoted = Json(text).dump();
    return quoted.substr(1, quoted.size() - 2);
  };
  const std::pair<std::string, std::string> values[] = {{"${BASE_URL}", escaped(urls.base_url)},
                                                        {"${APP_URL}", escaped(urls.app_url)}};
  ApiDescription d;
  d.json.reserve(kJson.size());
  for (size_t pos = 0; pos < kJson.size();) {
    bool replaced = false;
    for (const auto& [token, value] : values) {
      if (kJson.compare(pos, token.size(), token) == 0) {
        d.json += value;
        pos += token.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) d.json += kJson[pos++];
  }
  d.etag = "\"" + Fnv1a64Hex(d.json) + "\"";
  return d;
}

}  // namespace rendezvous::core
