#include "field_checks.hpp"

#include <algorithm>

#include "rendezvous/text.hpp"

namespace rendezvous::bookings {

Status FieldInvalid(const std::string& field, const std::string& problem) {
  return Status::Invalid(field, (field == "body" ? "the request body" : field) + " " + problem);
}

std::string CheckText(std::string_view text, size_t max_chars, bool multiline) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c & 0xc0) == 0x80) continue;  // continues the character before
    // C1 controls (U+0080..U+009F) are the two bytes C2 80..C2 9F.
    const bool c1 =
        c == 0xc2 && i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xe0) == 0x80;
    const bool line_break = c == '\t' || c == '\n' || c == '\r';
    if ((c < 0x20 && !(multiline && line_break)) || c == 0x7f || c1) {
      // Whichever comes first is named: broken UTF-8 before the control character, or the control.
      return text::IsValidUtf8(text.substr(0, i)) ? "must not contain control characters"
                                                  : "must be valid UTF-8";
    }
    ++chars;
  }
  if (!text::IsValidUtf8(text)) return "must be valid UTF-8";
  if (chars > max_chars) return "must be at most " + std::to_string(max_chars) + " characters";
  return "";
}

Status OnlyMembers(const nlohmann::json& body, std::initializer_list<const char*> allowed,
                   const std::string& prefix) {
  if (!body.is_object()) return FieldInvalid(prefix.empty() ? "body" : prefix, "must be a JSON object");
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return it.key() == a; })) {
      if (it.key().empty()) {
        return FieldInvalid(prefix.empty() ? "body" : prefix,
                            "has a member with an empty name, which is not accepted");
      }
      return FieldInvalid(prefix.empty() ? it.key() : prefix + "." + it.key(), "is not accepted here");
    }
  }
  return Status::Ok();
}

bool Present(const nlohmann::json& body, const char* name) {
  return body.is_object() && body.contains(name) && !body[name].is_null();
}

std::optional<std::string> QueryParam(const std::multimap<std::string, std::string>& query,
                                      const char* name) {
  auto it = query.find(name);
  if (it == query.end()) return std::nullopt;
  return it->second;
}

Status RefuseRepeated(const std::multimap<std::string, std::string>& query,
                      std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (query.count(name) > 1) return FieldInvalid(name, "must be given at most once");
  }
  return Status::Ok();
}

std::optional<std::string> QueryTimeParam(const std::multimap<std::string, std::string>& query,
                                          const char* name) {
  auto v = QueryParam(query, name);
  if (v && v->size() > 19 && v->find(' ', 16) != std::string::npos) (*v)[v->find(' ', 16)] = '+';
  return v;
}

}  // namespace rendezvous::bookings
