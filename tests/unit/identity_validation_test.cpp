#include <gtest/gtest.h>

#include <string>

#include "identity/validation.hpp"

namespace rendezvous::core {
namespace {

TEST(IdentityNormalizeEmail, LowerCasesAndTrims) {
  auto e = NormalizeEmail("  Alice.Smith@Example.COM ");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(*e, "alice.smith@example.com");
  EXPECT_EQ(*NormalizeEmail("a@b"), "a@b");
}

TEST(IdentityNormalizeEmail, RejectsMalformed) {
  for (std::string bad : {"", "ab", "no-at-sign", "@example.com", "alice@", "a@b@c",
                          "al ice@example.com", "alice@exa\tmple.com", "ali\x01" "ce@x.io",
                          "bad\xff@example.com"}) {
    auto r = NormalizeEmail(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), ErrorCode::kInvalid);
    }
  }
}

TEST(IdentityNormalizeEmail, BoundsLength) {
  std::string local(64, 'a');
  std::string at_limit = local + "@" + std::string(254 - 65, 'b');
  ASSERT_EQ(at_limit.size(), 254u);
  EXPECT_TRUE(NormalizeEmail(at_limit).ok());
  EXPECT_FALSE(NormalizeEmail(at_limit + "b").ok());
}

TEST(IdentityValidateName, AcceptsUnicodeWithinLimit) {
  EXPECT_EQ(*ValidateName("  Jane Doe "), "Jane Doe");
  std::string hundred;
  for (int i = 0; i < 100; ++i) hundred += "\xc3\xa9";  // 100 characters, 200 bytes
  EXPECT_TRUE(ValidateName(hundred).ok());
  EXPECT_FALSE(ValidateName(hundred + "e").ok());
  EXPECT_TRUE(ValidateName("\xe5\xb1\xb1\xe7\x94\xb0 \xf0\x9f\x99\x82").ok());
}

TEST(IdentityValidateName, RejectsEmptyControlAndBadUtf8) {
  const std::string bads[] = {"", "   ", "a\nb", std::string("a\0b", 3), "\x7f", "\xc3", "\xc0\xaf",
                          "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x80\xa8"};
  for (const std::string& bad : bads) {
    EXPECT_FALSE(ValidateName(bad).ok()) << bad;
  }
}

TEST(IdentityTimeZone, KnownNamesAndAliases) {
  for (const char* ok : {"UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata",
                         "America/Argentina/Buenos_Aires", "Etc/GMT+5", "Asia/Calcutta"}) {
    EXPECT_TRUE(IsValidTimeZone(ok)) << ok;
  }
}

TEST(IdentityTimeZone, RejectsUnknownNamesAndPathTricks) {
  for (const char* bad : {"", "Mars/Olympus_Mons", "europe/berlin", "../../etc/passwd",
                          "/etc/passwd", "Europe/../Europe/Berlin", "Europe//Berlin", "Europe/",
                          "Europe/Berlin ", "Europe/Berlin\n", "zone.tab", "tzdata.zi",
                          "posixrules/x", "Factory", "Europe\\Berlin", "Europe"}) {
    EXPECT_FALSE(IsValidTimeZone(bad)) << bad;
  }
  EXPECT_FALSE(IsValidTimeZone(std::string(65, 'A')));
}

TEST(IdentityWeekStart, NormalizesDayNames) {
  EXPECT_EQ(NormalizeWeekStart("Monday"), "Monday");
  EXPECT_EQ(NormalizeWeekStart("sunday"), "Sunday");
  EXPECT_EQ(NormalizeWeekStart("WEDNESDAY"), "Wednesday");
  EXPECT_FALSE(NormalizeWeekStart("Mon"));
  EXPECT_FALSE(NormalizeWeekStart(""));
  EXPECT_FALSE(NormalizeWeekStart("Funday"));
}

TEST(IdentitySafeRedirect, AcceptsLocalPaths) {
  for (const char* ok : {"/", "/settings/developer/oauth", "/auth/oauth2/authorize?client_id=a&scope=b%20c",
                         "/a#frag", "/a/b/../c"}) {
    EXPECT_TRUE(IsSafeRedirectPath(ok)) << ok;
  }
}

TEST(IdentitySafeRedirect, RejectsOffsiteAndOddTargets) {
  for (const char* bad : {"", "https://evil.example", "//evil.example/x", "/\\evil.example",
                          "\\\\evil.example", "javascript:alert(1)", "evil.example/x", "http:/x",
                          "/a\\b", "/a b", "/a\r\nSet-Cookie:x", "/\t/evil.example"}) {
    EXPECT_FALSE(IsSafeRedirectPath(bad)) << bad;
  }
  EXPECT_FALSE(IsSafeRedirectPath("/" + std::string(2048, 'a')));
}

TEST(IdentityProfilePatch, AcceptsKnownFields) {
  auto p = ParseProfilePatch(Json{{"name", " Ada "}, {"timeZone", "Europe/London"}, {"weekStart", "sunday"}});
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->name, "Ada");
  EXPECT_EQ(p->time_zone, "Europe/London");
  EXPECT_EQ(p->week_start, "Sunday");
  auto empty = ParseProfilePatch(Json::object());
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->name || empty->time_zone || empty->week_start);
}

TEST(IdentityProfilePatch, RejectsEmailUnknownAndBadValues) {
  auto expect_invalid = [](const Json& body, const std::string& needle) {
    auto p = ParseProfilePatch(body);
    ASSERT_FALSE(p.ok()) << body.dump();
    EXPECT_EQ(p.status().code(), ErrorCode::kInvalid);
    EXPECT_NE(p.status().message().find(needle), std::string::npos) << p.status().message();
  };
  expect_invalid(Json{{"email", "new@example.com"}}, "email");
  expect_invalid(Json{{"isAdmin", true}}, "isAdmin");
  expect_invalid(Json{{"timeZone", "Nowhere/Special"}}, "timeZone");
  expect_invalid(Json{{"timeZone", "../../etc/passwd"}}, "timeZone");
  expect_invalid(Json{{"weekStart", "Someday"}}, "weekStart");
  expect_invalid(Json{{"name", ""}}, "name");
  expect_invalid(Json{{"name", 42}}, "name");
  expect_invalid(Json::array(), "object");
}

}  // namespace
}  // namespace rendezvous::core
