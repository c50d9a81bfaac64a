// Verification codes as pure logic: the syntax of targets (E.164 phones, e-mails a mail can
// carry), generation, hashing bound to user and target, the attempt rules and the request limit.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "identity/verified_codes.hpp"

namespace rendezvous::core {
namespace {

using std::chrono::seconds;

TEST(VerifiedTargets, PhoneNumbersMustBeE164) {
  for (const char* ok : {"+15551234567", "+4930123456", "+6831234", "+123456789012345"}) {
    auto r = NormalizePhoneNumber(ok);
    ASSERT_TRUE(r.ok()) << ok;
    EXPECT_EQ(*r, ok);
  }
  for (const char* bad :
       {"", "+", "15551234567", "+05551234567", "+155512", "+1234567890123456", " +15551234567",
        "+1 555 123 4567", "+1-555-123-4567", "+1(555)1234567", "+1555123456x", "+١٢٣٤٥٦٧٨"}) {
    auto r = NormalizePhoneNumber(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), ErrorCode::kInvalid);
      EXPECT_NE(r.status().message().find("E.164"), std::string::npos);
    }
  }
}

TEST(VerifiedTargets, EmailsAreNormalisedAndMustBePlainAddresses) {
  auto r = NormalizeVerifiedEmail("  Ada.Lovelace@Example.COM ");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "ada.lovelace@example.com");
  EXPECT_TRUE(NormalizeVerifiedEmail("j\xc3\xbcrgen@example.de").ok());
  for (const std::string& bad :
       {std::string(""), std::string("no-at"), std::string("@example.com"), std::string("a@"),
        std::string("a@b@c"), std::string("a b@example.com"), std::string("a@example.com\r\nBcc: x@y.z"),
        std::string("Ada <a@b.c>"), std::string("a,b@c.d"), std::string("a;b@c.d"), std::string("\"a\"@b.c"),
        std::string("a@[1.2.3.4]"), std::string(250, 'a') + "@b.cc", std::string("\xc3\x28@b.c")}) {
    auto v = NormalizeVerifiedEmail(bad);
    EXPECT_FALSE(v.ok()) << bad;
    if (!v.ok()) {
      EXPECT_EQ(v.status().code(), ErrorCode::kInvalid);
    }
  }
}

TEST(VerificationCodes, SixRandomDigits) {
  std::set<std::string> seen;
  std::map<char, int> first_digits;
  for (int i = 0; i < 2000; ++i) {
    const std::string code = GenerateVerificationCode();
    ASSERT_EQ(code.size(), 6u);
    ASSERT_TRUE(IsWellFormedVerificationCode(code)) << code;
    seen.insert(code);
    ++first_digits[code[0]];
  }
  EXPECT_GT(seen.size(), 1990u);        // collisions among 2000 draws of 10^6 are rare (expected ~2)
  EXPECT_EQ(first_digits.size(), 10u);  // leading zeros are kept
  for (const auto& [digit, n] : first_digits) EXPECT_GT(n, 100) << digit;  // ~200 each
}

TEST(VerificationCodes, WellFormedMeansExactlySixAsciiDigits) {
  EXPECT_TRUE(IsWellFormedVerificationCode("000000"));
  EXPECT_TRUE(IsWellFormedVerificationCode("123456"));
  for (const char* bad : {"", "12345", "1234567", "12345a", " 12345", "12 456", "１２３４５６", "-12345"}) {
    EXPECT_FALSE(IsWellFormedVerificationCode(bad)) << bad;
  }
}

TEST(VerificationCodes, HashIsBoundToKindUserTargetAndCode) {
  const std::string h = HashVerificationCode(VerifiedKind::kEmail, 7, "a@b.c", "123456");
  EXPECT_EQ(h.size(), 64u);
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(h, HashVerificationCode(VerifiedKind::kEmail, 7, "a@b.c", "123456"));
  EXPECT_NE(h, HashVerificationCode(VerifiedKind::kEmail, 7, "a@b.c", "123457"));
  EXPECT_NE(h, HashVerificationCode(VerifiedKind::kEmail, 8, "a@b.c", "123456"));
  EXPECT_NE(h, HashVerificationCode(VerifiedKind::kEmail, 7, "a@b.d", "123456"));
  EXPECT_NE(h, HashVerificationCode(VerifiedKind::kPhone, 7, "a@b.c", "123456"));
  EXPECT_EQ(h.find("123456"), std::string::npos);
  EXPECT_EQ(VerifiedKindName(VerifiedKind::kEmail), "email");
  EXPECT_EQ(VerifiedKindName(VerifiedKind::kPhone), "phone");
}

StoredVerificationCode Stored(int attempts = 0, bool expired = false, bool consumed = false) {
  return StoredVerificationCode{HashVerificationCode(VerifiedKind::kPhone, 1, "+15551234567", "424242"),
                                attempts, expired, consumed};
}
const std::string kRight = HashVerificationCode(VerifiedKind::kPhone, 1, "+15551234567", "424242");
const std::string kWrong = HashVerificationCode(VerifiedKind::kPhone, 1, "+15551234567", "000000");

TEST(VerificationAttempts, RightCodeIsAcceptedWrongOnesCountDown) {
  CodeCheck ok = CheckVerificationCode(Stored(), kRight);
  EXPECT_EQ(ok.verdict, CodeVerdict::kAccepted);
  EXPECT_EQ(ok.attempts, 0);

  int attempts = 0;
  for (int i = 1; i <= kMaxVerificationAttempts; ++i) {
    CodeCheck c = CheckVerificationCode(Stored(attempts), kWrong);
    EXPECT_EQ(c.verdict, CodeVerdict::kWrong);
    EXPECT_EQ(c.attempts, i);
    EXPECT_EQ(c.attempts_left, kMaxVerificationAttempts - i);
    attempts = c.attempts;
  }
  EXPECT_EQ(attempts, 5);
  // Dead: even the right code is refused now, and the counter stops.
  CodeCheck locked = CheckVerificationCode(Stored(attempts), kRight);
  EXPECT_EQ(locked.verdict, CodeVerdict::kLocked);
  EXPECT_EQ(locked.attempts, 5);
  EXPECT_EQ(locked.attempts_left, 0);
  EXPECT_EQ(CheckVerificationCode(Stored(attempts), kWrong).verdict, CodeVerdict::kLocked);
  // The right code on the last allowed attempt still works.
  EXPECT_EQ(CheckVerificationCode(Stored(4), kRight).verdict, CodeVerdict::kAccepted);
}

TEST(VerificationAttempts, ExpiredAndConsumedCodes) {
  EXPECT_EQ(CheckVerificationCode(Stored(0, true), kRight).verdict, CodeVerdict::kExpired);
  EXPECT_EQ(CheckVerificationCode(Stored(0, true), kWrong).verdict, CodeVerdict::kExpired);
  EXPECT_EQ(CheckVerificationCode(Stored(0, true), kWrong).attempts, 0);  // not counted
  EXPECT_EQ(CheckVerificationCode(Stored(0, false, true), kRight).verdict, CodeVerdict::kReplayed);
  EXPECT_EQ(CheckVerificationCode(Stored(0, true, true), kRight).verdict, CodeVerdict::kReplayed);
  CodeCheck used = CheckVerificationCode(Stored(2, false, true), kWrong);
  EXPECT_EQ(used.verdict, CodeVerdict::kUsed);
  EXPECT_EQ(used.attempts, 2);
  // A hash of another length never matches.
  EXPECT_EQ(CheckVerificationCode(Stored(), kRight.substr(0, 63)).verdict, CodeVerdict::kWrong);
}

TEST(VerificationRequests, FivePerHourThenRetryAfterTheOldestLeaves) {
  for (int n = 0; n < kMaxVerificationRequestsPerHour; ++n) {
    EXPECT_FALSE(VerificationRequestRetryAfter(n, seconds(10)).has_value()) << n;
  }
  auto wait = VerificationRequestRetryAfter(5, seconds(600));
  ASSERT_TRUE(wait.has_value());
  EXPECT_EQ(*wait, seconds(3000));
  EXPECT_EQ(*VerificationRequestRetryAfter(5, seconds(0)), seconds(3600));
  EXPECT_EQ(*VerificationRequestRetryAfter(5, seconds(3600)), seconds(1));  // never 0
  EXPECT_EQ(*VerificationRequestRetryAfter(5, seconds(5000)), seconds(1));
}

}  // namespace
}  // namespace rendezvous::core
