// rendezvous/text.hpp: ASCII case and whitespace, UTF-8 checks, cuts on character boundaries.
#include <gtest/gtest.h>

#include "rendezvous/digits.hpp"
#include "rendezvous/text.hpp"

namespace rendezvous::text {
namespace {

TEST(Text, CaseAndWhitespace) {
  EXPECT_EQ(AsciiLower("Hello WORLD \xC3\x84"), "hello world \xC3\x84");
  EXPECT_EQ(Trim(" \t a b \r\n"), "a b");
  EXPECT_EQ(Trim("\v\fx\f"), "x");
  EXPECT_EQ(Trim(" \t\r\n"), "");
  EXPECT_TRUE(EqualsIgnoreCase("Content-Type", "content-TYPE"));
  EXPECT_FALSE(EqualsIgnoreCase("a", "ab"));
}

TEST(Text, Utf8Validity) {
  EXPECT_TRUE(IsValidUtf8("plain"));
  EXPECT_TRUE(IsValidUtf8("K\xC3\xB6ln \xE2\x82\xAC \xF0\x9F\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xE0\x80\xAF"));      // overlong
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xE2\x82"));          // truncated
  EXPECT_FALSE(IsValidUtf8("\x80"));
}

TEST(Text, TruncationKeepsWholeCharacters) {
  const std::string s = "ab\xE2\x82\xAC" "cd";  // a b € c d
  EXPECT_EQ(TruncateUtf8(s, 100), s);
  EXPECT_EQ(TruncateUtf8(s, 5), "ab\xE2\x82\xAC");
  EXPECT_EQ(TruncateUtf8(s, 4), "ab");
  EXPECT_EQ(TruncateUtf8(s, 3), "ab");
  EXPECT_EQ(TruncateUtf8(s, 2), "ab");
  for (size_t n = 0; n <= s.size(); ++n) EXPECT_TRUE(IsValidUtf8(TruncateUtf8(s, n))) << n;
}

TEST(Text, SanitizeAndControls) {
  EXPECT_EQ(SanitizeUtf8("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_TRUE(IsValidUtf8(SanitizeUtf8("\xC3\x28\xE2\x82\x28\xF0\x90")));
  EXPECT_TRUE(HasControlCharacters(std::string("a\0b", 3)));
  EXPECT_TRUE(HasControlCharacters("a\x7F"));
  EXPECT_FALSE(HasControlCharacters("tab\tnew\r\nline"));
}

TEST(Text, DigitsOnlyWithinBounds) {
  EXPECT_EQ(ParseDigits("42", 1), 42);
  EXPECT_EQ(ParseDigits("0"), 0);
  EXPECT_EQ(ParseDigits("007"), 7);
  EXPECT_EQ(ParseDigits("999999999999999999"), 999999999999999999);
  for (const char* bad : {"0", "-1", "+1", "1e3", " 1", "1 ", "", "0x10", "1234567890123456789"})
    EXPECT_FALSE(ParseDigits(bad, 1)) << bad;
  EXPECT_EQ(ParseDigits("250", 1, 250), 250);
  EXPECT_FALSE(ParseDigits("251", 1, 250));
}

}  // namespace
}  // namespace rendezvous::text
