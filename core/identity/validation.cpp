#include "identity/validation.hpp"

#include <array>
#include <cstdint>
#include <string>

#include "rendezvous/time.hpp"

namespace rendezvous::core {
namespace {

constexpr size_t kMaxTimeZoneBytes = 64;
constexpr size_t kMaxRedirectBytes = 2048;

std::string_view Trim(std::string_view s) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Counts code points; nullopt when `s` is not valid UTF-8 or holds a control character.
std::optional<size_t> CountPrintableUtf8(std::string_view s) {
  size_t count = 0;
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    uint32_t cp = 0;
    size_t extra = 0;
    if (c < 0x80) {
      cp = c;
    } else if ((c & 0xe0) == 0xc0) {
      cp = c & 0x1f;
      extra = 1;
    } else if ((c & 0xf0) == 0xe0) {
      cp = c & 0x0f;
      extra = 2;
    } else if ((c & 0xf8) == 0xf0) {
      cp = c & 0x07;
      extra = 3;
    } else {
      return std::nullopt;
    }
    if (i + extra >= s.size()) return std::nullopt;
    for (size_t k = 1; k <= extra; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (cc & 0x3f);
    }
    static constexpr std::array<uint32_t, 4> kMin = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[extra] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return std::nullopt;
    if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || cp == 0x2028 || cp == 0x2029) {
      return std::nullopt;
    }
    i += extra + 1;
    ++count;
  }
  return count;
}

}  // namespace

Result<std::string> NormalizeEmail(std::string_view email) {
  email = Trim(email);
  const std::string_view problem = text::EmailAddressProblem(email);
  if (!problem.empty()) return Status(ErrorCode::kInvalid, "email " + std::string(problem));
  return text::AsciiLower(email);
}

Result<std::string> ValidateName(std::string_view name) {
  name = Trim(name);
  auto count = CountPrintableUtf8(name);
  if (!count) return Status(ErrorCode::kInvalid, "name must be printable UTF-8 text");
  if (*count == 0 || *count > kMaxNameChars) {
    return Status(ErrorCode::kInvalid, "name must be 1 to 100 characters");
  }
  return std::string(name);
}

bool IsValidTimeZone(std::string_view name) {
  if (name.size() > kMaxTimeZoneBytes) return false;
  // The zoneinfo folder also holds copies and links that are not zone names people use.
  if (name.rfind("posix/", 0) == 0 || name.rfind("right/", 0) == 0 || name == "localtime" ||
      name == "posixrules" || name == "Factory") {
    return false;
  }
  return time::Zone::Find(name).has_value();
}

bool IsValidUsername(std::string_view username) {
  if (username.empty() || username.size() > kMaxUsernameChars) return false;
  for (char c : username) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::string DeriveUsernameBase(std::string_view email) {
  std::string_view local = email.substr(0, email.find('@'));
  std::string out;
  bool has_alnum = false;
  for (char ch : local) {
    if (out.size() == kMaxUsernameChars) break;
    char c = ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch - 'A' + 'a') : ch;
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (alnum || c == '-' || c == '_' || c == '.') out.push_back(c);
    has_alnum = has_alnum || alnum;
  }
  return has_alnum ? out : std::string("user");
}

std::string UsernameWithSuffix(const std::string& base, uint64_t n) {
  const std::string digits = std::to_string(n);
  return base.substr(0, kMaxUsernameChars - digits.size()) + digits;
}

std::optional<std::string> NormalizeWeekStart(std::string_view day) {
  static constexpr std::array<std::string_view, 7> kDays = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                                            "Friday", "Saturday", "Sunday"};
  for (std::string_view d : kDays) {
    if (d.size() != day.size()) continue;
    bool same = true;
    for (size_t i = 0; i < d.size() && same; ++i) {
      auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
      same = lower(d[i]) == lower(day[i]);
    }
    if (same) return std::string(d);
  }
  return std::nullopt;
}

bool IsSafeRedirectPath(std::string_view next) {
  if (next.empty() || next.size() > kMaxRedirectBytes || next.front() != '/') return false;
  if (next.size() > 1 && (next[1] == '/' || next[1] == '\\')) return false;
  for (char ch : next) {
    auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == 0x7f || c == '\\') return false;
  }
  return true;
}

Result<ProfilePatch> ParseProfilePatch(const Json& patch, const std::set<std::string>& extension_fields) {
  if (!patch.is_object()) return Status(ErrorCode::kInvalid, "body must be a JSON object");
  ProfilePatch out;
  for (const auto& [key, value] : patch.items()) {
    if (key == "email") {
      return Status::Invalid("email", "email cannot be changed here");
    }
    if (key == "timeFormat") {
      const bool twelve_or_24 = value.is_number() && (value.get<double>() == 12 || value.get<double>() == 24);
      if (!twelve_or_24) return Status::Invalid("timeFormat", "timeFormat must be 12 or 24");
      out.time_format = static_cast<int>(value.get<double>());
      continue;
    }
    if (extension_fields.count(key) != 0) {
      out.extension_fields[key] = value;
      continue;
    }
    if (key != "name" && key != "timeZone" && key != "weekStart" && key != "username") {
      std::string shown = key.substr(0, 64);
      return Status::Invalid(shown, "unknown field: " + shown);
    }
    if (!value.is_string()) return Status::Invalid(key, key + " must be a string");
    const auto& text = value.get_ref<const std::string&>();
    if (key == "name") {
      auto name = ValidateName(text);
      if (!name.ok()) return Status::Invalid("name", name.status().message());
      out.name = std::move(name.value());
    } else if (key == "timeZone") {
      if (!IsValidTimeZone(text)) {
        return Status::Invalid("timeZone", "timeZone must be an IANA time zone name");
      }
      out.time_zone = text;
    } else if (key == "username") {
      if (!IsValidUsername(text)) {
        return Status::Invalid(
            "username", "username must be 1 to 64 characters: lowercase letters, digits, '-', '_' or '.'");
      }
      out.username = text;
    } else {
      auto day = NormalizeWeekStart(text);
      if (!day) return Status::Invalid("weekStart", "weekStart must be a day name, Monday to Sunday");
      out.week_start = std::move(*day);
    }
  }
  return out;
}

}  // namespace rendezvous::core
