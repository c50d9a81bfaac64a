#include "scopes.hpp"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

namespace rendezvous::oauth {
namespace {

const std::vector<std::string> kSpecUserScopes = {
    "EVENT_TYPE_READ", "EVENT_TYPE_WRITE", "BOOKING_READ",  "BOOKING_WRITE",
    "APPS_READ",       "APPS_WRITE",       "PROFILE_READ",  "PROFILE_WRITE",
    "VERIFIED_RESOURCES_WRITE"};

TEST(OAuthScopes, UserLevelCatalogueIsTheSpecificationList) {
  EXPECT_EQ(UserLevelScopes(), kSpecUserScopes);
  for (const std::string& s : kSpecUserScopes) {
    EXPECT_TRUE(IsUserLevelScope(s)) << s;
    EXPECT_TRUE(IsRecognizedScope(s)) << s;
    EXPECT_FALSE(IsTeamOrOrgScope(s)) << s;
    EXPECT_FALSE(IsLegacyScopeValue(s)) << s;
  }
}

TEST(OAuthScopes, TeamAndOrgVariantsOfEveryUserScope) {
  for (const std::string& s : kSpecUserScopes) {
    for (const std::string prefix : {"TEAM_", "ORG_"}) {
      const std::string scope = prefix + s;
      EXPECT_TRUE(IsRecognizedScope(scope)) << scope;
      EXPECT_TRUE(IsTeamOrOrgScope(scope)) << scope;
      EXPECT_FALSE(IsUserLevelScope(scope)) << scope;
    }
  }
  EXPECT_FALSE(IsTeamOrOrgScope("TEAM_"));
  EXPECT_FALSE(IsTeamOrOrgScope("TEAM_NOPE"));
  EXPECT_FALSE(IsTeamOrOrgScope("TEAM_TEAM_BOOKING_READ"));
  EXPECT_FALSE(IsTeamOrOrgScope("ORG_READ_BOOKING"));
  EXPECT_FALSE(IsRecognizedScope("team_booking_read"));
}

TEST(OAuthScopes, LegacyValues) {
  EXPECT_TRUE(IsLegacyScopeValue("READ_BOOKING"));
  EXPECT_TRUE(IsLegacyScopeValue("READ_PROFILE"));
  EXPECT_TRUE(IsRecognizedScope("READ_BOOKING"));
  EXPECT_FALSE(IsUserLevelScope("READ_BOOKING"));
  EXPECT_FALSE(IsLegacyScopeValue("BOOKING_READ"));
}

TEST(OAuthScopes, UnknownValuesAreNotRecognized) {
  for (const char* s : {"", "booking_read", "BOOKING_READ ", "BOOKING", "ADMIN", "openid",
                        "EVENT_TYPE_DELETE", "READ_EVENT_TYPE"}) {
    EXPECT_FALSE(IsRecognizedScope(s)) << s;
  }
}

TEST(OAuthScopes, AllRecognizedHasEveryValueOnce) {
  const auto& all = AllRecognizedScopes();
  EXPECT_EQ(all.size(), 9u * 3 + 2);
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), all.size());
  for (const std::string& s : all) EXPECT_TRUE(IsRecognizedScope(s)) << s;
}

TEST(OAuthScopes, MatchingWriteScope) {
  EXPECT_EQ(MatchingWriteScope("BOOKING_READ"), "BOOKING_WRITE");
  EXPECT_EQ(MatchingWriteScope("TEAM_EVENT_TYPE_READ"), "TEAM_EVENT_TYPE_WRITE");
  EXPECT_EQ(MatchingWriteScope("BOOKING_WRITE"), "");
  EXPECT_EQ(MatchingWriteScope("READ_BOOKING"), "");
  EXPECT_EQ(MatchingWriteScope("_READ"), "");
}

std::vector<std::string> Parse(std::string_view text) {
  auto r = ParseScopeParam(text);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.value() : std::vector<std::string>{};
}

TEST(OAuthScopes, ParseSplitsOnSpacesAndCommas) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Parse("BOOKING_READ"), V({"BOOKING_READ"}));
  EXPECT_EQ(Parse("BOOKING_READ PROFILE_READ"), V({"BOOKING_READ", "PROFILE_READ"}));
  EXPECT_EQ(Parse("BOOKING_READ,PROFILE_READ"), V({"BOOKING_READ", "PROFILE_READ"}));
  EXPECT_EQ(Parse("  BOOKING_READ , ,PROFILE_READ  APPS_READ,"),
            V({"BOOKING_READ", "PROFILE_READ", "APPS_READ"}));
  EXPECT_EQ(Parse(""), V{});
  EXPECT_EQ(Parse(" , ,, "), V{});
}

TEST(OAuthScopes, ParseDeduplicatesKeepingFirstOrder) {
  EXPECT_EQ(Parse("B A B C A"), (std::vector<std::string>{"B", "A", "C"}));
}

TEST(OAuthScopes, ParseKeepsUnknownValuesForTheCallerToJudge) {
  EXPECT_EQ(Parse("BOOKING_READ NOPE"), (std::vector<std::string>{"BOOKING_READ", "NOPE"}));
}

TEST(OAuthScopes, ParseBounds) {
  EXPECT_TRUE(ParseScopeParam(std::string(kMaxScopeLength, 'A')).ok());
  auto too_long = ParseScopeParam("BOOKING_READ " + std::string(kMaxScopeLength + 1, 'A'));
  ASSERT_FALSE(too_long.ok());
  EXPECT_EQ(too_long.status().code(), ErrorCode::kInvalid);

  std::string many;
  for (size_t i = 0; i < kMaxScopesPerList; ++i) many += "S" + std::to_string(i) + " ";
  EXPECT_EQ(Parse(many).size(), kMaxScopesPerList);
  EXPECT_EQ(Parse(many + "S0 S1").size(), kMaxScopesPerList);  // duplicates do not count
  EXPECT_FALSE(ParseScopeParam(many + "EXTRA").ok());

  EXPECT_FALSE(ParseScopeParam(std::string(kMaxScopeParamLength + 1, ' ')).ok());
  EXPECT_TRUE(ParseScopeParam(std::string(kMaxScopeParamLength, ' ')).ok());
}

TEST(OAuthScopes, Join) {
  EXPECT_EQ(JoinScopes({}), "");
  EXPECT_EQ(JoinScopes({"A"}), "A");
  EXPECT_EQ(JoinScopes({"BOOKING_READ", "PROFILE_READ"}), "BOOKING_READ PROFILE_READ");
  EXPECT_EQ(Parse(JoinScopes(kSpecUserScopes)), kSpecUserScopes);
}

TEST(OAuthScopes, DescriptionsInPlainWords) {
  EXPECT_EQ(DescribeScope("BOOKING_READ"), "View your bookings");
  EXPECT_EQ(DescribeScope("PROFILE_WRITE"), "Edit your personal info");
  EXPECT_EQ(DescribeScope("TEAM_BOOKING_READ"), "View your teams' bookings");
  EXPECT_EQ(DescribeScope("ORG_EVENT_TYPE_READ"), "View your organization's event types");
  EXPECT_EQ(DescribeScope("READ_BOOKING"), "View your bookings");
  EXPECT_EQ(DescribeScope("READ_PROFILE"), "View your personal info");
  EXPECT_EQ(DescribeScope("NOPE"), "NOPE");
  std::set<std::string> seen;
  for (const std::string& s : AllRecognizedScopes()) {
    const std::string d = DescribeScope(s);
    EXPECT_NE(d, s);
    EXPECT_EQ(d.find('_'), std::string::npos) << s << ": " << d;
    if (!IsLegacyScopeValue(s)) {
      EXPECT_TRUE(seen.insert(d).second) << "duplicate text " << d;
    }
  }
}

}  // namespace
}  // namespace rendezvous::oauth
