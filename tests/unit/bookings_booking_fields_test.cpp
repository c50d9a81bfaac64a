// Booking questions' pure logic (booking_fields.hpp): the bounds of definitions and answers that
// the integration tests do not reach, and the shapes of the answers.
#include <string>

#include <gtest/gtest.h>

#include "booking_fields.hpp"

namespace rendezvous::bookings {
namespace {

Json Select(const std::string& slug, size_t options, size_t option_chars) {
  Json list = Json::array();
  for (size_t i = 0; i < options; ++i) {
    std::string o = std::to_string(i) + "-";
    o.resize(option_chars, 'o');
    list.push_back(o);
  }
  return Json{{"type", "select"}, {"slug", slug}, {"label", "Pick"}, {"options", list}};
}

std::string FieldOf(const Status& s) {
  return s.field();
}

TEST(BookingsBookingFields, DefinitionsAreBoundedInSizeAsAWhole) {
  Json fields = Json::array();
  // Each select at its bounds is about 13 KB as JSON: two fit in 32 KiB, three do not.
  for (int i = 0; i < 2; ++i) fields.push_back(Select("s" + std::to_string(i), 50, 255));
  EXPECT_TRUE(ParseBookingFields(fields).ok());
  fields.push_back(Select("s2", 50, 255));
  Result<Json> big = ParseBookingFields(fields);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(FieldOf(big.status()), "bookingFields");
}

TEST(BookingsBookingFields, AnswersAreBoundedAndTyped) {
  const Json fields = ParseBookingFields(Json::parse(R"([
    {"type":"number","slug":"n","label":"N"},
    {"type":"multiemail","slug":"cc","label":"CC"},
    {"type":"textarea","slug":"t1","label":"T1"}, {"type":"textarea","slug":"t2","label":"T2"},
    {"type":"textarea","slug":"t3","label":"T3"}, {"type":"textarea","slug":"t4","label":"T4"},
    {"type":"textarea","slug":"t5","label":"T5"}, {"type":"textarea","slug":"t6","label":"T6"},
    {"type":"textarea","slug":"t7","label":"T7"}])"))
                          .value();
  // A number may have a fraction; a boolean is no number.
  EXPECT_TRUE(CheckBookingResponses(fields, Json{{"n", 2.5}}).ok());
  EXPECT_EQ(FieldOf(CheckBookingResponses(fields, Json{{"n", true}}).status()), "bookingFieldsResponses.n");
  Json eleven = Json::array();
  for (int i = 0; i < 11; ++i) eleven.push_back("p" + std::to_string(i) + "@example.com");
  EXPECT_EQ(FieldOf(CheckBookingResponses(fields, Json{{"cc", eleven}}).status()),
            "bookingFieldsResponses.cc");
  // Each textarea within its bound, all of them together over the stored answers' bound.
  Json long_answers = Json::object();
  for (int i = 1; i <= 7; ++i) long_answers["t" + std::to_string(i)] = std::string(10000, 'x');
  Result<CheckedResponses> over = CheckBookingResponses(fields, long_answers);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(FieldOf(over.status()), "bookingFieldsResponses");
  long_answers.erase("t7");
  EXPECT_TRUE(CheckBookingResponses(fields, long_answers).ok());
  EXPECT_EQ(FieldOf(CheckBookingResponses(fields, Json{{"t1", std::string(10001, 'x')}}).status()),
            "bookingFieldsResponses.t1");
}

TEST(BookingsBookingFields, StoredAnswersKeepTheLabelAndShowAsCalcomDoes) {
  const Json fields =
      ParseBookingFields(
          Json::parse(R"([{"type":"radio","slug":"size","label":"Team size","options":["S","L"]}])"))
          .value();
  Result<CheckedResponses> checked = CheckBookingResponses(fields, Json{{"size", "L"}, {"notes", " hi "}});
  ASSERT_TRUE(checked.ok());
  EXPECT_EQ(checked->answers, Json::parse(R"({"size":{"label":"Team size","value":"L"}})"));
  EXPECT_EQ(checked->notes, "hi");
  EXPECT_EQ(PayloadResponsesJson("Ann", "ann@example.com", Json::array(), "hi", checked->answers),
            Json::parse(R"({"name":{"label":"Your name","value":"Ann"},
                            "email":{"label":"Email address","value":"ann@example.com"},
                            "guests":{"label":"Add guests","value":[]},
                            "notes":{"label":"Additional notes","value":"hi"},
                            "size":{"label":"Team size","value":"L"}})"));
}

}  // namespace
}  // namespace rendezvous::bookings
