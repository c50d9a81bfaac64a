// The payloadTemplate renderer: paths, escaping, unknown paths, content type, the default body.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "rendezvous/text.hpp"
#include "template_renderer.hpp"

namespace rendezvous::webhooks {
namespace {

using nlohmann::json;

json Event() {
  return json{{"triggerEvent", "BOOKING_CONFIRMED"},
              {"createdAt", "2026-05-04T09:31:02.123Z"},
              {"payload",
               {{"title", "Intro \"call\" \\ between\n"},
                {"id", 12},
                {"organizer", {{"name", "Zoë Øwner 日本"}}},
                {"attendees", json::array({{{"name", "Ann Attendee"}}, {{"name", "Bob"}}})},
                {"metadata", json::object()},
                {"cancellationReason", nullptr},
                {"flag", true}}}};
}

TEST(WebhooksTemplate, ResolvesDottedPathsAndIndices) {
  EXPECT_EQ(RenderTemplate("{{organizer.name}}/{{attendees.0.name}}/{{attendees.1.name}}", Event()),
            "Zoë Øwner 日本/Ann Attendee/Bob");
}

TEST(WebhooksTemplate, TriggerEventAndCreatedAt) {
  EXPECT_EQ(RenderTemplate("{{triggerEvent}} at {{createdAt}}", Event()), "BOOKING_CONFIRMED at 2026-05-04T09:31:02.123Z");
}

TEST(WebhooksTemplate, StringsAreJsonEscapedNeverHtmlEscaped) {
  const std::string out = RenderTemplate(R"({"t":"{{title}}","o":"{{organizer.name}}"})", Event());
  EXPECT_EQ(out, R"({"t":"Intro \"call\" \\ between\n","o":"Zoë Øwner 日本"})");
  EXPECT_EQ(json::parse(out)["t"], "Intro \"call\" \\ between\n");
  EXPECT_EQ(RenderTemplate("{{x}}", json{{"payload", {{"x", "<b>&'</b>"}}}}), "<b>&'</b>");
  EXPECT_EQ(RenderTemplate("{{x}}", json{{"payload", {{"x", std::string("a\x01z")}}}}), "a\\u0001z");
}

TEST(WebhooksTemplate, NonStringsAsJson) {
  EXPECT_EQ(RenderTemplate("{{id}} {{flag}} {{cancellationReason}} {{metadata}} {{attendees.1}}", Event()),
            R"(12 true null {} {"name":"Bob"})");
}

TEST(WebhooksTemplate, UnknownPathsRenderEmpty) {
  EXPECT_EQ(RenderTemplate("[{{nope}}][{{attendees.5.name}}][{{attendees.x}}][{{organizer.name.first}}][{{}}][{{a..b}}]",
                           Event()),
            "[][][][][][]");
}

TEST(WebhooksTemplate, WhitespaceInsideBracesAndUnclosedBraces) {
  EXPECT_EQ(RenderTemplate("{{ attendees.0.name }}", Event()), "Ann Attendee");
  EXPECT_EQ(RenderTemplate("a {{attendees.0.name", Event()), "a {{attendees.0.name");
  EXPECT_EQ(RenderTemplate("", Event()), "");
}

TEST(WebhooksTemplate, ContentTypeFollowsTheResult) {
  EXPECT_EQ(RenderBody(std::string(R"({"id":{{id}}})"), Event()).content_type, "application/json");
  RenderedBody text = RenderBody(std::string("Booking {{id}} confirmed"), Event());
  EXPECT_EQ(text.body, "Booking 12 confirmed");
  EXPECT_EQ(text.content_type, "text/plain");
  // A broken JSON template is sent as text, never replaced by `false`.
  RenderedBody broken = RenderBody(std::string(R"({"id": {{nope}})"), Event());
  EXPECT_EQ(broken.body, R"({"id": )");
  EXPECT_EQ(broken.content_type, "text/plain");
}

TEST(WebhooksTemplate, DefaultBodyIsTheEvent) {
  RenderedBody body = RenderBody(std::nullopt, Event());
  EXPECT_EQ(body.content_type, "application/json");
  EXPECT_EQ(json::parse(body.body), Event());
}

TEST(WebhooksTemplate, OutputIsBounded) {
  std::string tmpl;
  for (int i = 0; i < 20000; ++i) tmpl += "{{attendees}}";
  json event = Event();
  event["payload"]["attendees"] = json::array();
  for (int i = 0; i < 100; ++i) event["payload"]["attendees"].push_back(std::string(100, 'x'));
  EXPECT_LE(RenderTemplate(tmpl, event).size(), kMaxRenderedBytes);
}

// A name of 255 two-byte characters inserted 2,100 times: the cut falls inside a character, which
// is left out whole, so the body stays UTF-8 the database takes.
TEST(WebhooksTemplate, OutputIsCutOnACharacterBoundary) {
  std::string name;
  for (int i = 0; i < 255; ++i) name += "\xC3\xA9";
  json event = Event();
  event["payload"]["attendees"][0]["name"] = name;
  std::string tmpl = "X";
  for (int i = 0; i < 2100; ++i) tmpl += "{{attendees.0.name}}";
  const std::string out = RenderTemplate(tmpl, event);
  EXPECT_EQ(out.size(), kMaxRenderedBytes - 1);
  EXPECT_TRUE(text::IsValidUtf8(out));
  EXPECT_EQ(out.compare(0, 1 + name.size(), "X" + name), 0);
  const RenderedBody body = RenderBody(tmpl, event);
  EXPECT_EQ(body.body, out);
  EXPECT_EQ(body.content_type, "text/plain");
  // A four-byte character at the limit of a smaller bound.
  EXPECT_EQ(RenderTemplate("ab{{title}}", json{{"payload", {{"title", "\xF0\x9F\x98\x80"}}}}, 5), "ab");
  EXPECT_EQ(TypedBody("ab\xF0\x9F\x98\x80", 6).body, "ab\xF0\x9F\x98\x80");
}

TEST(WebhooksTemplate, JsonCheckAgreesWithTheParser) {
  const std::vector<std::pair<std::string, bool>> cases = {
      {"{}", true}, {"[]", true}, {" \t\r\n{\"a\" : [1, 2.5, -0, 1e3, 1E-3, 0.0e+1]} \n", true},
      {"\"text\"", true}, {"true", true}, {"null", true}, {"-12", true}, {"\xEF\xBB\xBF[1]", true},
      {"{\"a\":{\"b\":[{},[],\"\\u00e9\\ud83d\\ude00\\\\\\/\\b\\f\\n\\r\\t\\\"\"]}}", true},
      {"\"\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80\"", true}, {"1e-400", true}, {"123456789012345678901234567890", true},
      {"", false}, {" ", false}, {"{", false}, {"[1,]", false}, {"{\"a\":1,}", false}, {"{\"a\" 1}", false},
      {"{1:2}", false}, {"[1 2]", false}, {"01", false}, {"1.", false}, {".5", false}, {"1e", false},
      {"+1", false}, {"-", false}, {"tru", false}, {"nul", false}, {"[] []", false}, {"{}x", false},
      {"\"\\x\"", false}, {"\"\\u12\"", false}, {"\"\\ud83d\"", false}, {"\"\\ude00\"", false},
      {"\"\\ud83d\\u0041\"", false}, {"\"a\nb\"", false}, {std::string("\"a\0b\"", 5), false},
      {"\"\xc3\"", false}, {"\"\xed\xa0\x80\"", false}, {"\"\xc0\xaf\"", false}, {"\xc3\xa9", false},
      {"1e400", false}, {"-1e400", false}, {std::string(400, '9'), false}, {"\xEF\xBB[1]", false},
      {" \xEF\xBB\xBF[1]", false}, {"[1]\x0b", false}, {"'a'", false}, {"NaN", false},
      {std::string(100000, '[') + std::string(100000, ']'), true},
      {std::string(100000, '[') + std::string(99999, ']'), false}};
  for (const auto& [text, valid] : cases) {
    EXPECT_EQ(IsJsonText(text), valid) << text.substr(0, 80);
    EXPECT_EQ(IsJsonText(text), json::accept(text)) << text.substr(0, 80);
  }
  // nlohmann's parser stops at a NUL byte; a receiver would not.
  EXPECT_FALSE(IsJsonText(std::string("{}\0x", 4)));
  EXPECT_EQ(TypedBody("{\"text\":\"hi\"}").content_type, "application/json");
  EXPECT_EQ(TypedBody("{\"text\":\"hi\"").content_type, "text/plain");
}

}  // namespace
}  // namespace rendezvous::webhooks
