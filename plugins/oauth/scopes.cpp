#include "scopes.hpp"

#include <algorithm>
#include <unordered_set>

namespace rendezvous::oauth {
namespace {

struct UserScope {
  const char* name;
  const char* description;  // every one says "your " once; team and org variants rewrite it
};

constexpr UserScope kUserScopes[] = {
    {"EVENT_TYPE_READ", "View your event types"},
    {"EVENT_TYPE_WRITE", "Create and change your event types"},
    {"BOOKING_READ", "View your bookings"},
    {"BOOKING_WRITE", "Create, change and cancel your bookings"},
    {"APPS_READ", "View your connected apps, calendars and busy times"},
    {"APPS_WRITE", "Connect and disconnect your apps and calendars"},
    {"PROFILE_READ", "View your personal info"},
    {"PROFILE_WRITE", "Edit your personal info"},
    {"VERIFIED_RESOURCES_WRITE", "Request and verify your e-mail addresses and phone numbers"},
};

constexpr std::string_view kTeamPrefix = "TEAM_";
constexpr std::string_view kOrgPrefix = "ORG_";
constexpr std::string_view kLegacyValues[] = {"READ_BOOKING", "READ_PROFILE"};

const UserScope* FindUserScope(std::string_view scope) {
  for (const UserScope& s : kUserScopes) {
    if (scope == s.name) return &s;
  }
  return nullptr;
}

// "View your bookings" -> "View your teams' bookings".
std::string WithOwner(std::string text, std::string_view owner) {
  constexpr std::string_view kYour = "your ";
  if (size_t at = text.find(kYour); at != std::string::npos) {
    text.replace(at, kYour.size(), std::string(owner) + " ");
  }
  return text;
}

}  // namespace

const std::vector<std::string>& UserLevelScopes() {
  static const std::vector<std::string> scopes = [] {
    std::vector<std::string> v;
    for (const UserScope& s : kUserScopes) v.emplace_back(s.name);
    return v;
  }();
  return scopes;
}

const std::vector<std::string>& AllRecognizedScopes() {
  static const std::vector<std::string> scopes = [] {
    std::vector<std::string> v = UserLevelScopes();
    for (const UserScope& s : kUserScopes) v.push_back(std::string(kTeamPrefix) + s.name);
    for (const UserScope& s : kUserScopes) v.push_back(std::string(kOrgPrefix) + s.name);
    for (std::string_view legacy : kLegacyValues) v.emplace_back(legacy);
    return v;
  }();
  return scopes;
}

bool IsUserLevelScope(std::string_view scope) { return FindUserScope(scope) != nullptr; }

bool IsTeamOrOrgScope(std::string_view scope) {
  if (scope.starts_with(kTeamPrefix)) return IsUserLevelScope(scope.substr(kTeamPrefix.size()));
  if (scope.starts_with(kOrgPrefix)) return IsUserLevelScope(scope.substr(kOrgPrefix.size()));
  return false;
}

bool IsLegacyScopeValue(std::string_view scope) {
  return std::find(std::begin(kLegacyValues), std::end(kLegacyValues), scope) !=
         std::end(kLegacyValues);
}

bool IsRecognizedScope(std::string_view scope) {
  return IsUserLevelScope(scope) || IsTeamOrOrgScope(scope) || IsLegacyScopeValue(scope);
}

std::string MatchingWriteScope(std::string_view scope) {
  constexpr std::string_view kRead = "_READ";
  if (!scope.ends_with(kRead) || scope.size() == kRead.size()) return "";
  return std::string(scope.substr(0, scope.size() - kRead.size())) + "_WRITE";
}

Result<std::vector<std::string>> ParseScopeParam(std::string_view text) {
  if (text.size() > kMaxScopeParamLength) {
    return Status(ErrorCode::kInvalid, "scope list is too long");
  }
  std::vector<std::string> out;
  std::unordered_set<std::string_view> seen;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    size_t end = i;
    while (end < text.size() && text[end] != ' ' && text[end] != ',') ++end;
    if (end == i) break;
    std::string_view value = text.substr(i, end - i);
    i = end;
    if (value.size() > kMaxScopeLength) {
      return Status(ErrorCode::kInvalid, "a scope value is longer than " +
                                             std::to_string(kMaxScopeLength) + " characters");
    }
    if (!seen.insert(value).second) continue;
    if (seen.size() > kMaxScopesPerList) {
      return Status(ErrorCode::kInvalid, "more than " + std::to_string(kMaxScopesPerList) +
                                             " scope values");
    }
    out.emplace_back(value);
  }
  return out;
}

std::string JoinScopes(const std::vector<std::string>& scopes) {
  std::string out;
  for (const std::string& s : scopes) {
    if (!out.empty()) out.push_back(' ');
    out += s;
  }
  return out;
}

std::string DescribeScope(std::string_view scope) {
  if (const UserScope* s = FindUserScope(scope)) return s->description;
  if (scope.starts_with(kTeamPrefix)) {
    if (const UserScope* s = FindUserScope(scope.substr(kTeamPrefix.size()))) {
      return WithOwner(s->description, "your teams'");
    }
  }
  if (scope.starts_with(kOrgPrefix)) {
    if (const UserScope* s = FindUserScope(scope.substr(kOrgPrefix.size()))) {
      return WithOwner(s->description, "your organization's");
    }
  }
  if (scope == "READ_BOOKING") return DescribeScope("BOOKING_READ");
  if (scope == "READ_PROFILE") return DescribeScope("PROFILE_READ");
  return std::string(scope);
}

}  // namespace rendezvous::oauth
