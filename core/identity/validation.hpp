// Checks of user-supplied identity fields (email, name, time zone, week start, redirect targets)
// and of PATCH /v2/me bodies. Pure functions, thread-safe, no I/O except the time zone list,
// which is read once from the system's tzdata.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rendezvous/status.hpp"
#include "rendezvous/text.hpp"

namespace rendezvous::core {

using Json = nlohmann::json;

constexpr size_t kMaxEmailBytes = text::kMaxEmailAddressBytes;
constexpr size_t kMaxNameChars = 100;
constexpr size_t kMaxPasswordBytes = 1024;
constexpr size_t kMaxUsernameChars = 64;

// An e-mail address by the one rule (text::IsEmailAddress) once trimmed, returned trimmed and
// with ASCII letters lower-cased. kInvalid ("email ...") otherwise.
Result<std::string> NormalizeEmail(std::string_view email);

// A display name: valid UTF-8, 1..100 characters after trimming, no control characters.
// Returns the trimmed name.
Result<std::string> ValidateName(std::string_view name);

// True when `name` is an IANA time zone name known to the system's tz database (Zone or Link in
// /usr/share/zoneinfo/tzdata.zi; "UTC" and a few aliases always). Names with "..", a leading '/',
// or characters outside [A-Za-z0-9/_+-] are refused without looking anything up.
bool IsValidTimeZone(std::string_view name);

// A username (DESIGN §10): 1..64 characters, each a lowercase ASCII letter, a digit, '-', '_' or '.'.
bool IsValidUsername(std::string_view username);

// The username a user gets when none is given: the e-mail's local part (before the first '@')
// with ASCII letters lower-cased and every character outside [a-z0-9._-] dropped, cut to 64
// characters; "user" when that leaves no letter or digit. The migration that gave existing users
// their usernames (migrations.cpp) computes the same in SQL.
std::string DeriveUsernameBase(std::string_view email);

// The n-th alternative (n >= 1) to a taken username: `base` cut so that base + the decimal n fits
// in 64 characters, then n ("ann" -> "ann1", "ann2", ...).
std::string UsernameWithSuffix(const std::string& base, uint64_t n);

// "Monday".."Sunday" in any letter case -> the capitalised name; nullopt otherwise.
std::optional<std::string> NormalizeWeekStart(std::string_view day);

// True when `next` is a path on this host that is safe to redirect to after sign-in: it starts
// with a single '/', is not "//..." (scheme-relative), contains no backslash, no control
// characters or whitespace, and is at most 2048 bytes.
bool IsSafeRedirectPath(std::string_view next);

// A checked PATCH /v2/me body. Absent fields are nullopt.
struct ProfilePatch {
  std::optional<std::string> name;
  std::optional<std::string> time_zone;
  std::optional<std::string> week_start;
  std::optional<std::string> username;
  std::optional<int> time_format;
  // The fields plugins own (UserExtension), unchecked: an object.
  Json extension_fields = Json::object();
};

// Accepts an object with any of "name", "timeZone", "weekStart" (strings, validated as above),
// "username" (IsValidUsername) and "timeFormat" (the number 12 or 24); a field named in
// `extension_fields` goes unchecked into extension_fields for the plugin that owns it. "email" and
// any other field answer kInvalid naming the field.
Result<ProfilePatch> ParseProfilePatch(const Json& patch, const std::set<std::string>& extension_fields = {});

}  // namespace rendezvous::core
