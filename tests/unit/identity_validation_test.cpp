#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "identity/validation.hpp"

namespace rendezvous::core {
namespace {

TEST(IdentityNormalizeEmail, LowerCasesAndTrims) {
  auto e = NormalizeEmail("  Alice.Smith@Example.COM ");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(*e, "alice.smith@example.com");
  EXPECT_EQ(*NormalizeEmail("a@b"), "a@b");
}

TEST(IdentityNormalizeEmail, NamesTheProblemOfTheOneRule) {
  auto r = NormalizeEmail(" Owner <owner@example.com> ");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "email must not contain spaces, line breaks or control characters");
  r = NormalizeEmail("a@b.c,d@e.f");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "email must be one plain address, without any of <>(),;:\"[]\\");
}

TEST(IdentityNormalizeEmail, RejectsMalformed) {
  for (std::string bad : {"", "ab", "no-at-sign", "@example.com", "alice@", "a@b@c", "al ice@example.com",
                          "alice@exa\tmple.com",
                          "ali\x01"
                          "ce@x.io",
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
  const std::string bads[] = {"",     "   ",      "a\nb",         std::string("a\0b", 3), "\x7f",
                              "\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",     "\xe2\x80\xa8"};
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
  for (const char* bad :
       {"", "Mars/Olympus_Mons", "europe/berlin", "../../etc/passwd", "/etc/passwd",
        "Europe/../Europe/Berlin", "Europe//Berlin", "Europe/", "Europe/Berlin ", "Europe/Berlin\n",
        "zone.tab", "tzdata.zi", "posixrules/x", "Factory", "Europe\\Berlin", "Europe"}) {
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
                          "\\\\evil.example", "javascript:alert(1)", "evil.example/x", "http:/x", "/a\\b",
                          "/a b", "/a\r\nSet-Cookie:x", "/\t/evil.example"}) {
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

TEST(IdentityUsername, CharactersAndLength) {
  for (const std::string& ok :
       std::vector<std::string>{"a", "ann", "ann-marie_o.brien", "0", "x2", std::string(64, 'z')}) {
    EXPECT_TRUE(IsValidUsername(ok)) << ok;
  }
  for (const std::string& bad :
       std::vector<std::string>{"", "Ann", "ann marie", "ann+cal", "ann/..", "anné", "ann@x",
                                std::string(65, 'z'), std::string("a\0b", 3)}) {
    EXPECT_FALSE(IsValidUsername(bad)) << bad;
  }
}

TEST(IdentityUsername, DerivedFromTheEmailsLocalPart) {
  EXPECT_EQ(DeriveUsernameBase("ann@example.com"), "ann");
  EXPECT_EQ(DeriveUsernameBase("Ann.Marie@example.com"), "ann.marie");
  EXPECT_EQ(DeriveUsernameBase("ann+cal@example.com"), "anncal");
  EXPECT_EQ(DeriveUsernameBase("o'brien_x-y@example.com"), "obrien_x-y");
  EXPECT_EQ(DeriveUsernameBase("j\xc3\xb6rg@example.com"), "jrg");
  // Nothing usable left: "user".
  EXPECT_EQ(DeriveUsernameBase("\xc3\xb6@example.com"), "user");
  EXPECT_EQ(DeriveUsernameBase("...@example.com"), "user");
  EXPECT_EQ(DeriveUsernameBase("+-_@example.com"), "user");
  // Cut to 64 characters.
  EXPECT_EQ(DeriveUsernameBase(std::string(80, 'a') + "@example.com"), std::string(64, 'a'));
  for (const std::string& email :
       std::vector<std::string>{"ann@example.com", "\xc3\xb6@x.io", std::string(80, 'b') + "@x.io"}) {
    EXPECT_TRUE(IsValidUsername(DeriveUsernameBase(email))) << email;
  }
}

TEST(IdentityUsername, SuffixesStayWithinTheLimit) {
  EXPECT_EQ(UsernameWithSuffix("ann", 1), "ann1");
  EXPECT_EQ(UsernameWithSuffix("ann", 12), "ann12");
  EXPECT_EQ(UsernameWithSuffix(std::string(64, 'a'), 7), std::string(63, 'a') + "7");
  EXPECT_EQ(UsernameWithSuffix(std::string(64, 'a'), 123), std::string(61, 'a') + "123");
  EXPECT_TRUE(IsValidUsername(UsernameWithSuffix(std::string(64, 'a'), UINT64_MAX)));
}

TEST(IdentityProfilePatch, UsernameAndTimeFormat) {
  auto p = ParseProfilePatch(Json{{"username", "ada.l"}, {"timeFormat", 24}});
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->username, "ada.l");
  EXPECT_EQ(p->time_format, 24);
  EXPECT_EQ(ParseProfilePatch(Json{{"timeFormat", 12}})->time_format, 12);
  auto expect_field = [](const Json& body, const std::string& field) {
    auto r = ParseProfilePatch(body);
    ASSERT_FALSE(r.ok()) << body.dump();
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalid);
    EXPECT_EQ(r.status().field(), field) << body.dump();
  };
  expect_field(Json{{"username", "Ada"}}, "username");
  expect_field(Json{{"username", ""}}, "username");
  expect_field(Json{{"username", std::string(65, 'a')}}, "username");
  expect_field(Json{{"username", 7}}, "username");
  expect_field(Json{{"username", nullptr}}, "username");
  expect_field(Json{{"timeFormat", 13}}, "timeFormat");
  expect_field(Json{{"timeFormat", "24"}}, "timeFormat");
  expect_field(Json{{"timeFormat", 12.5}}, "timeFormat");
  expect_field(Json{{"timeFormat", nullptr}}, "timeFormat");
  expect_field(Json{{"timeZone", "Nowhere/Special"}}, "timeZone");
  // A field a plugin's UserExtension owns goes to that plugin unchecked; without one it is unknown.
  auto owned = ParseProfilePatch(Json{{"defaultScheduleId", "x"}, {"name", "Ada"}}, {"defaultScheduleId"});
  ASSERT_TRUE(owned.ok()) << owned.status().message();
  EXPECT_EQ(owned->extension_fields, (Json{{"defaultScheduleId", "x"}}));
  EXPECT_EQ(owned->name, "Ada");
  EXPECT_TRUE(ParseProfilePatch(Json{{"name", "Ada"}})->extension_fields.empty());
  expect_field(Json{{"defaultScheduleId", 42}}, "defaultScheduleId");
}

}  // namespace
}  // namespace rendezvous::core
