// Checks of user-supplied identity fields (email, name, time zone, week start, redirect targets)
// and of PATCH /v2/me bodies. Pure functions, thread-safe, no I/O except the time zone list,
// which is read once from the system's tzdata.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rendezvous/status.hpp"

namespace rendezvous::core {

using Json = nlohmann::json;

constexpr size_t kMaxEmailBytes = 254;
constexpr size_t kMaxNameChars = 100;
constexpr size_t kMaxPasswordBytes = 1024;

// A plausible email address (3..254 bytes, one '@' with text on both sides, no whitespace or
// control characters), returned trimmed and with ASCII letters lower-cased. kInvalid otherwise.
Result<std::string> NormalizeEmail(std::string_view email);

// A display name: valid UTF-8, 1..100 characters after trimming, no control characters.
// Returns the trimmed name.
Result<std::string> ValidateName(std::string_view name);

// True when `name` is an IANA time zone name known to the system's tz database (Zone or Link in
// /usr/share/zoneinfo/tzdata.zi; "UTC" and a few aliases always). Names with "..", a leading '/',
// or characters outside [A-Za-z0-9/_+-] are refused without looking anything up.
bool IsValidTimeZone(std::string_view name);

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
};

// Accepts an object with any of "name", "timeZone", "weekStart" (strings, validated as above).
// "email" and any other field answer kInvalid naming the field.
Result<ProfilePatch> ParseProfilePatch(const Json& patch);

}  // namespace rendezvous::core
