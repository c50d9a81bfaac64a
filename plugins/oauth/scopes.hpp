// The OAuth scope catalogue (specification §5.3, DESIGN §9) and the parsing of scope lists.
//
// Recognized values: the user-level scopes of §5.3 (plus BOOKING_WRITE, which the specification
// uses in its examples), TEAM_<S> and ORG_<S> for every user-level <S>, and the old values
// READ_BOOKING and READ_PROFILE that only legacy clients carry. Scope values are case-sensitive
// (RFC 6749 §3.3). Everything here is immutable data and pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/status.hpp"

namespace rendezvous::oauth {

inline constexpr size_t kMaxScopesPerList = 64;
inline constexpr size_t kMaxScopeLength = 64;
// Raw "scope" parameter text beyond this is refused before splitting.
inline constexpr size_t kMaxScopeParamLength = 8192;

// The user-level scopes, in the order of the specification's table (consent pages list them so).
const std::vector<std::string>& UserLevelScopes();
// Every recognized value: user-level, then TEAM_, then ORG_, then the legacy values.
const std::vector<std::string>& AllRecognizedScopes();

bool IsRecognizedScope(std::string_view scope);
bool IsUserLevelScope(std::string_view scope);
bool IsTeamOrOrgScope(std::string_view scope);   // TEAM_<S> or ORG_<S> for a user-level <S>
bool IsLegacyScopeValue(std::string_view scope); // READ_BOOKING, READ_PROFILE

// For "X_READ" the matching "X_WRITE" (e.g. TEAM_BOOKING_READ -> TEAM_BOOKING_WRITE); "" when the
// scope does not end in _READ.
std::string MatchingWriteScope(std::string_view scope);

// Splits a scope list as the authorize page receives it: separated by spaces and/or commas (any
// run of them), trimmed, empties dropped, duplicates removed keeping the first occurrence's
// order. Values are not checked against the catalogue (callers tell "unrecognized" apart).
// kInvalid when the text exceeds kMaxScopeParamLength, a value exceeds kMaxScopeLength, or there
// are more than kMaxScopesPerList distinct values.
Result<std::vector<std::string>> ParseScopeParam(std::string_view text);

// Space-separated, as the token response's "scope" (§2.2).
std::string JoinScopes(const std::vector<std::string>& scopes);

// Plain-words description for the consent page, e.g. "View your bookings". For an unrecognized
// value the value itself.
std::string DescribeScope(std::string_view scope);

}  // namespace rendezvous::oauth
