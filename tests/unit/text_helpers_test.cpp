// rendezvous/text.hpp: ASCII case and whitespace, UTF-8 checks, cuts on character boundaries,
// the one e-mail address rule;
// rendezvous/json_pick.hpp: a few values of a JSON text read as a parsed tree would give them.
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "rendezvous/digits.hpp"
#include "rendezvous/json_pick.hpp"
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
  const std::string s =
      "ab\xE2\x82\xAC"
      "cd";  // a b € c d
  EXPECT_EQ(TruncateUtf8(s, 100), s);
  EXPECT_EQ(TruncateUtf8(s, 5), "ab\xE2\x82\xAC");
  EXPECT_EQ(TruncateUtf8(s, 4), "ab");
  EXPECT_EQ(TruncateUtf8(s, 3), "ab");
  EXPECT_EQ(TruncateUtf8(s, 2), "ab");
  for (size_t n = 0; n <= s.size(); ++n) EXPECT_TRUE(IsValidUtf8(TruncateUtf8(s, n))) << n;
}

TEST(Text, SanitizeAndControls) {
  EXPECT_EQ(SanitizeUtf8("a\xFF"
                         "b"),
            "a\xEF\xBF\xBD"
            "b");
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

// Whether `picked` holds, for each path, the scalar the parsed tree of `text` has there (its JSON
// pointer's), and a discarded value where the tree has nothing or an object or an array.
::testing::AssertionResult HasTheTreesValues(const std::string& text,
                                             const std::vector<json::JsonPath>& paths,
                                             const std::vector<nlohmann::json>& picked) {
  const nlohmann::json tree = nlohmann::json::parse(text);
  if (picked.size() != paths.size()) return ::testing::AssertionFailure() << picked.size() << " values";
  for (size_t i = 0; i < paths.size(); ++i) {
    nlohmann::json::json_pointer pointer;
    for (const std::string& step : paths[i]) pointer /= step;
    const bool scalar = tree.contains(pointer) && !tree.at(pointer).is_structured();
    if (scalar ? picked[i] != tree.at(pointer) : !picked[i].is_discarded()) {
      return ::testing::AssertionFailure() << text << " " << pointer.to_string() << ": " << picked[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// The path to the innermost member "a" of `depth` levels: depth - 1 arrays around {"a":...}.
json::JsonPath JsonPathOfDepth(size_t depth) {
  json::JsonPath path(depth - 1, "0");
  path.push_back("a");
  return path;
}

// Each path's value is the one the parsed tree holds there (the pointer's), whatever surrounds it.
TEST(JsonPick, ValuesAreThoseOfTheParsedTree) {
  const std::vector<json::JsonPath> paths = {{"triggerEvent"},
                                             {"payload", "organizer", "id"},
                                             {"payload", "hosts", "0", "id"},
                                             {"payload", "hosts", "1", "id"},
                                             {"payload", "eventTypeId"},
                                             {"payload", "organizer"},
                                             {"missing"}};
  const std::vector<std::string> texts = {
      R"({"triggerEvent":"BOOKING_CREATED","payload":{"uid":"b1","organizer":{"id":7,"name":"O"},)"
      R"("hosts":[{"id":8},{"name":"x","id":9}],"eventTypeId":3,"attendees":[{"id":1},[2,{"id":3}]]}})",
      R"({"payload":{"hosts":[[{"id":1}],{"id":2}],"organizer":{"id":"7"},"eventTypeId":null}})",
      R"({"payload":{"organizer":{"id":1},"organizer":{"name":"later"}},"triggerEvent":1.5})",
      R"({"payload":{"organizer":5,"organizer":{"id":-2}},"triggerEvent":true,"triggerEvent":"X"})",
      R"({"payload":{"organizer":{"id":18446744073709551615}},"x":{"payload":{"eventTypeId":4}}})",
      R"([{"payload":{"eventTypeId":4}}])",
      R"("text")",
  };
  for (const std::string& text : texts) {
    std::optional<std::vector<nlohmann::json>> picked = json::PickScalars(text, paths);
    ASSERT_TRUE(picked.has_value()) << text;
    EXPECT_TRUE(HasTheTreesValues(text, paths, *picked));
  }
}

TEST(JsonPick, TextThatIsNotOneWellFormedValueGivesNothing) {
  const std::vector<json::JsonPath> paths = {{"a"}};
  EXPECT_EQ(json::PickScalars(R"({"a":1)", paths), std::nullopt);
  EXPECT_EQ(json::PickScalars(R"({"a":1} {"a":2})", paths), std::nullopt);
  EXPECT_EQ(json::PickScalars("{\"a\":\"\xC0\xAF\"}", paths), std::nullopt);  // ill-formed UTF-8
  EXPECT_EQ(json::PickScalars("", paths), std::nullopt);
  // A NUL byte, even after the value (nlohmann's parser stops reading there and accepts).
  EXPECT_EQ(json::PickScalars(std::string("{\"a\":1}\0x", 9), paths), std::nullopt);
  EXPECT_EQ(json::PickScalars(std::string("{\"a\":1}\0", 8), paths), std::nullopt);
  ASSERT_TRUE(json::PickScalars(R"( {"a" : [ ] } )", paths).has_value());
}

// Random documents, well-formed and not, read by PickScalars and by nlohmann's parser: the same
// verdict on every text, and on every well-formed one the values of the parsed tree.
class RandomJson {
 public:
  explicit RandomJson(uint32_t seed) : rng_(seed) {}

  std::string Document() {
    std::string out;
    Value(out, 0);
    return out;
  }

  // One byte cut, changed or added somewhere: mostly no longer well-formed.
  std::string Mutated(std::string text) {
    static const std::string kBytes = "\"\\{}[],:0-.eE \x01\xC0\xED\xF5\x80x";
    if (text.empty()) return text;
    const size_t at = Pick(text.size());
    switch (Pick(3)) {
      case 0:
        text.resize(at);
        break;
      case 1:
        text[at] = kBytes[Pick(kBytes.size())];
        break;
      default:
        text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), kBytes[Pick(kBytes.size())]);
        break;
    }
    return text;
  }

 private:
  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  void Space(std::string& out) {
    static const char* kSpace[] = {"", "", "", " ", "\n", " \t\r\n"};
    out += kSpace[Pick(6)];
  }

  void Value(std::string& out, int depth) {
    Space(out);
    const size_t kind = depth >= 5 ? 2 + Pick(6) : Pick(8);
    if (kind == 0) {
      out += '{';
      const size_t n = Pick(5);
      for (size_t i = 0; i < n; ++i) {
        if (i > 0) out += ',';
        Space(out);
        static const char* kKeys[] = {R"("a")",      R"("b")",  R"("0")",       R"("1")",      R"("a\u0062")",
                                      R"("\u00e9")", R"("id")", R"("payload")", "\"\xC3\xA9\""};
        out += kKeys[Pick(9)];
        Space(out);
        out += ':';
        Value(out, depth + 1);
      }
      Space(out);
      out += '}';
    } else if (kind == 1) {
      out += '[';
      const size_t n = Pick(4);
      for (size_t i = 0; i < n; ++i) {
        if (i > 0) out += ',';
        Value(out, depth + 1);
      }
      Space(out);
      out += ']';
    } else if (kind <= 3) {
      static const char* kNumbers[] = {"0",
                                       "-0",
                                       "7",
                                       "-12",
                                       "18446744073709551615",
                                       "18446744073709551616",
                                       "-9223372036854775808",
                                       "-9223372036854775809",
                                       "1.5",
                                       "-0.25e3",
                                       "1E400",
                                       "1e-400",
                                       "3.0e+2",
                                       "123456789012345678901234567890"};
      out += kNumbers[Pick(14)];
    } else if (kind <= 5) {
      out += '"';
      const size_t n = Pick(4);
      for (size_t i = 0; i < n; ++i) {
        static const char* kPieces[] = {"plain",           R"(\n)",
                                        R"(\")",           R"(\\)",
                                        R"(\/)",           R"(\u00e9)",
                                        R"(\ud83d\ude00)", "\xC3\xA9",
                                        "\xE2\x82\xAC",    "\xF0\x9F\x98\x80",
                                        R"(\u0000)",       " "};
        out += kPieces[Pick(12)];
      }
      out += '"';
    } else {
      static const char* kWords[] = {"true", "false", "null"};
      out += kWords[Pick(3)];
    }
    Space(out);
  }

  std::mt19937 rng_;
};

TEST(JsonPick, AgreesWithTheParserOnRandomDocuments) {
  const std::vector<json::JsonPath> paths = {
      {},    {"a"},           {"a", "b"}, {"a", "0"},   {"a", "01"},       {"a", "0", "b"},
      {"0"}, {"1", "1", "a"}, {"ab"},     {"\xC3\xA9"}, {"payload", "id"}, {"payload", "a", "0", "1", "b"}};
  RandomJson random(20261128);
  size_t well_formed = 0;
  size_t ill_formed = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text = random.Document();
    if (round % 2 == 1) text = random.Mutated(std::move(text));
    const bool accepted = nlohmann::json::accept(text);
    const std::optional<std::vector<nlohmann::json>> picked = json::PickScalars(text, paths);
    ASSERT_EQ(picked.has_value(), accepted) << text;
    if (!accepted) {
      ++ill_formed;
      continue;
    }
    ++well_formed;
    ASSERT_TRUE(HasTheTreesValues(text, paths, *picked));
  }
  // Both kinds were tried, many times each.
  EXPECT_GT(well_formed, 9000u);
  EXPECT_GT(ill_formed, 3000u);
}

TEST(JsonPick, ByteOrderMarkAndManyPaths) {
  const std::optional<std::vector<nlohmann::json>> bom = json::PickScalars("\xEF\xBB\xBF{\"a\":1}", {{"a"}});
  ASSERT_TRUE(bom.has_value());
  EXPECT_EQ((*bom)[0], 1);
  // More paths than one pass holds: each still gets its value.
  std::vector<json::JsonPath> paths;
  std::string text = "{";
  for (int i = 0; i < 150; ++i) {
    paths.push_back({"k" + std::to_string(i)});
    text += (i > 0 ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  }
  text += "}";
  const std::optional<std::vector<nlohmann::json>> many = json::PickScalars(text, paths);
  ASSERT_TRUE(many.has_value());
  for (int i = 0; i < 150; ++i) EXPECT_EQ((*many)[static_cast<size_t>(i)], i);
}

// Numbers as the parsed tree holds them, also those simdjson 3.0 converts wrongly by itself (more
// than 19 digits after "0.") and those beyond its limits (an exponent of 20 digits is refused).
TEST(JsonPick, NumbersAreTheParsersAndItsLimitsAreKept) {
  const std::string text =
      R"({"a":0.67442222222222222226666266666,"b":0.95000000000000000000,"c":-0,"d":1e-400,)"
      R"("e":123456789012345678901234567890,"f":-9223372036854775809,"g":18446744073709551615})";
  const std::vector<json::JsonPath> paths = {{"a"}, {"b"}, {"c"}, {"d"}, {"e"}, {"f"}, {"g"}};
  const std::optional<std::vector<nlohmann::json>> picked = json::PickScalars(text, paths);
  ASSERT_TRUE(picked.has_value());
  EXPECT_TRUE(HasTheTreesValues(text, paths, *picked));
  EXPECT_DOUBLE_EQ((*picked)[0].get<double>(), 0.67442222222222222);
  EXPECT_TRUE((*picked)[2].is_number_integer());
  EXPECT_TRUE((*picked)[6].is_number_unsigned());
  EXPECT_EQ(json::PickScalars(R"({"a":1e-00000000000000000001})", {{"a"}}), std::nullopt);
  EXPECT_EQ(json::PickScalars(R"({"a":1e400})", {{"a"}}), std::nullopt);
}

// Nesting up to kMaxPickDepth is read; one level more is refused, as is a long text cut short.
TEST(JsonPick, DepthAndLengthAreBounded) {
  const auto nested = [](size_t depth) {
    return std::string(depth - 1, '[') + R"({"a":1})" + std::string(depth - 1, ']');
  };
  const std::optional<std::vector<nlohmann::json>> deepest =
      json::PickScalars(nested(json::kMaxPickDepth), {JsonPathOfDepth(json::kMaxPickDepth)});
  ASSERT_TRUE(deepest.has_value());
  EXPECT_EQ((*deepest)[0], 1);
  EXPECT_EQ(json::PickScalars(nested(json::kMaxPickDepth + 1), {{"0"}}), std::nullopt);
  EXPECT_EQ(json::PickScalars(std::string(100000, '[') + std::string(100000, ']'), {}), std::nullopt);
  // A text longer than a thread keeps a buffer for (1 MiB), read on buffers of its own, twice.
  std::string big = R"({"pad":")" + std::string(3 << 20, 'x') + R"(","a":7})";
  for (int i = 0; i < 2; ++i) {
    const std::optional<std::vector<nlohmann::json>> v = json::PickScalars(big, {{"a"}});
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ((*v)[0], 7);
  }
  big.pop_back();
  EXPECT_EQ(json::PickScalars(big, {{"a"}}), std::nullopt);
  // And a short text read after it, on the thread's own buffers again.
  EXPECT_EQ((*json::PickScalars(R"({"a":8})", {{"a"}}))[0], 8);
}

TEST(EmailAddress, AcceptsWhatEveryCallerAcceptedBefore) {
  const std::string at_limit = std::string(64, 'a') + "@" + std::string(254 - 65, 'b');
  for (const std::string& good :
       {std::string("ann@example.com"), std::string("a@b"), std::string("admin@localhost"),
        std::string("Alice.Smith+tag@Example.COM"), std::string("a@b."), std::string("a@.b"),
        std::string("j\xC3\xBC"
                    "rgen@b\xC3\xBC"
                    "cher.de"),
        std::string("o'neil!#$%&*=?^_`{|}~-/@x.io"), at_limit}) {
    EXPECT_EQ(EmailAddressProblem(good), "") << good;
    EXPECT_TRUE(IsEmailAddress(good)) << good;
  }
}

TEST(EmailAddress, ACallerThatStoresLongerAddressesRaisesOnlyTheLength) {
  const std::string stored = std::string(64, 'a') + "@" + std::string(255, 'b');
  ASSERT_EQ(stored.size(), kMaxStoredEmailAddressBytes);
  EXPECT_FALSE(IsEmailAddress(stored));
  EXPECT_TRUE(IsEmailAddress(stored, kMaxStoredEmailAddressBytes));
  EXPECT_EQ(EmailAddressProblem(stored + "b", kMaxStoredEmailAddressBytes),
            "is too long for an e-mail address");
  EXPECT_EQ(EmailAddressProblem("a b@example.com", kMaxStoredEmailAddressBytes),
            EmailAddressProblem("a b@example.com"));
}

TEST(EmailAddress, RefusesWhatIsNotOnePlainAddress) {
  const std::string too_long = std::string(64, 'a') + "@" + std::string(254 - 64, 'b');
  ASSERT_EQ(too_long.size(), 255u);
  const std::vector<std::pair<std::string, std::string_view>> bad = {
      {"", "must be at least 3 bytes long"},
      {"a@", "must be at least 3 bytes long"},
      {too_long, "is too long for an e-mail address"},
      {"bad\xff@example.com", "must be valid UTF-8"},
      {"no-at-sign", "must have the form name@domain"},
      {"@example.com", "must have the form name@domain"},
      {"alice@", "must have the form name@domain"},
      {"a@b@c.d", "must have the form name@domain"},
      {"al ice@example.com", "must not contain spaces, line breaks or control characters"},
      {"a@b.c\r\nBcc: victim@example.com", "must not contain spaces, line breaks or control characters"},
      {"a@b.c\nBcc:x@y.z", "must not contain spaces, line breaks or control characters"},
      {std::string("a\0b@c.d", 6), "must not contain spaces, line breaks or control characters"},
      {"a\x7f@b.c", "must not contain spaces, line breaks or control characters"},
      {"a\xC2\x85@b.c", "must not contain spaces, line breaks or control characters"},      // NEL
      {"a\xE2\x80\xA8@b.c", "must not contain spaces, line breaks or control characters"},  // U+2028
      {"a@b.c,d@e.f", "must be one plain address, without any of <>(),;:\"[]\\"},
      {"Owner <owner@example.com>", "must not contain spaces, line breaks or control characters"},
      {"<owner@example.com>", "must be one plain address, without any of <>(),;:\"[]\\"},
      {"a@b.c;d@e.f", "must be one plain address, without any of <>(),;:\"[]\\"},
      {"group:a@b.c", "must be one plain address, without any of <>(),;:\"[]\\"},
      {"a(comment)@b.c", "must be one plain address, without any of <>(),;:\"[]\\"},
      {"\"a\"@b.c", "must be one plain address, without any of <>(),;:\"[]\\"},
      {"a@[127.0.0.1]", "must be one plain address, without any of <>(),;:\"[]\\"},
      {"a\\b@c.d", "must be one plain address, without any of <>(),;:\"[]\\"},
  };
  for (const auto& [address, problem] : bad) {
    EXPECT_EQ(EmailAddressProblem(address), problem) << address;
    EXPECT_FALSE(IsEmailAddress(address)) << address;
  }
}

}  // namespace
}  // namespace rendezvous::text
