#include "json_list.hpp"

#include <nlohmann/json.hpp>

namespace rendezvous::oauth {

std::vector<std::string> JsonList(const std::string& text) {
  std::vector<std::string> out;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return out;
  for (const nlohmann::json& v : j) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace rendezvous::oauth
