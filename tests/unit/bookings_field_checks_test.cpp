// Checks of outside text (UTF-8, control characters, length in characters) and ids, and the 400
// that names the field. (E-mail addresses: text::IsEmailAddress, text_helpers_test.)
#include <gtest/gtest.h>

#include "field_checks.hpp"

namespace rendezvous::bookings {
namespace {

TEST(BookingsFieldChecks, TextIsValidUtf8WithoutControlsAndCountedInCharacters) {
  EXPECT_EQ(CheckText("Grüße, 東京 🎉", 11, false), "");
  EXPECT_EQ(CheckText("Grüße", 4, false), "must be at most 4 characters");
  for (const char* bad : {"\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "a\x80"}) {
    EXPECT_EQ(CheckText(bad, 100, true), "must be valid UTF-8") << bad;
  }
  for (const char* control : {"a\x01", "a\x7f", "a\xc2\x85", "a\xc2\x9f"}) {
    EXPECT_EQ(CheckText(control, 100, true), "must not contain control characters") << control;
  }
  EXPECT_EQ(CheckText(std::string_view("a\0b", 3), 100, true), "must not contain control characters");
  EXPECT_EQ(CheckText("a\u00a0b", 100, false), "");  // U+00A0 is not a control
  EXPECT_EQ(CheckText("line one\r\n\tline two", 100, true), "");
  EXPECT_EQ(CheckText("tab\there", 100, false), "must not contain control characters");
}

TEST(BookingsFieldChecks, InvalidNamesTheField) {
  Status s = FieldInvalid("locations[1].link", "must be an http or https URL");
  EXPECT_EQ(s.code(), ErrorCode::kInvalid);
  EXPECT_EQ(s.field(), "locations[1].link");
  EXPECT_EQ(s.message(), "locations[1].link must be an http or https URL");
  EXPECT_EQ(FieldInvalid("body", "must be a JSON object").message(),
            "the request body must be a JSON object");
}

}  // namespace
}  // namespace rendezvous::bookings
