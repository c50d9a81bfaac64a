#include "field_checks.hpp"

namespace rendezvous::bookings {

Status FieldInvalid(const std::string& field, const std::string& problem) {
  return Status::Invalid(field, (field == "body" ? "the request body" : field) + " " + problem);
}

std::string CheckText(std::string_view text, size_t max_chars, bool multiline) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t len = c < 0x80                 ? 1
                       : c >= 0xc2 && c <= 0xdf ? 2
                       : c >= 0xe0 && c <= 0xef ? 3
                       : c >= 0xf0 && c <= 0xf4 ? 4
                                                : 0;
    if (len == 0 || i + len > text.size()) return "must be valid UTF-8";
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1fu) : len == 3 ? (c & 0x0fu) : (c & 0x07u);
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xc0) != 0x80) return "must be valid UTF-8";
      cp = (cp << 6) | (cc & 0x3fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
      return "must be valid UTF-8";
    }
    const bool line_break = cp == '\t' || cp == '\n' || cp == '\r';
    if ((cp < 0x20 && !(multiline && line_break)) || (cp >= 0x7f && cp <= 0x9f)) {
      return "must not contain control characters";
    }
    ++chars;
    i += len;
  }
  if (chars > max_chars) return "must be at most " + std::to_string(max_chars) + " characters";
  return "";
}

bool IsEmail(std::string_view text) {
  if (text.size() < 3 || text.size() > 320) return false;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == 0x7f || ch == ',' || ch == '<' || ch == '>' || ch == '"') return false;
  }
  const size_t at = text.find('@');
  if (at == 0 || at == std::string_view::npos || text.find('@', at + 1) != std::string_view::npos)
    return false;
  const std::string_view domain = text.substr(at + 1);
  const size_t dot = domain.find('.');
  return dot != std::string_view::npos && dot != 0 && domain.back() != '.' &&
         !CheckText(text, 320, false).size();
}

std::optional<int64_t> ParsePositiveId(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v <= 0) return std::nullopt;
  return v;
}

}  // namespace rendezvous::bookings
