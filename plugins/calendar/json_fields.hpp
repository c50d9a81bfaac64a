// JSON values of the calendar plugin (the host's rendezvous::Json, without its HTTP header), and
// reading fields of JSON objects that come from outside (Google's answers, request bodies): a
// missing field or one of another type reads as empty.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace rendezvous::calendar {

using Json = nlohmann::json;

// obj[key] when `obj` is an object and that field is a string; "" otherwise.
inline std::string StringField(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace rendezvous::calendar
