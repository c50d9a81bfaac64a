// The webhook Lua hooks over a fake script: the values the hooks get (never the secret), and every
// fallback to the built-in behaviour (no script, no function, an error, a wrong result type), the
// body's type and size. The real sandbox is exercised by tests/integration/webhooks_lua_test.cpp.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "script_hooks.hpp"

namespace rendezvous::webhooks {
namespace {

using nlohmann::json;

// A script whose functions answer canned results and record their arguments.
class FakeScript final : public Script {
 public:
  std::map<std::string, Result<json>> answers;
  std::vector<std::pair<std::string, std::vector<json>>> calls;

  const std::string& name() const override { return name_; }
  const std::string& path() const override { return name_; }
  bool HasFunction(const std::string& function) override { return answers.count(function) != 0; }
  Result<json> Call(const std::string& function, const std::vector<json>& args) override {
    calls.emplace_back(function, args);
    auto it = answers.find(function);
    if (it == answers.end()) return Status(ErrorCode::kNotFound, "missing");
    return it->second;
  }
  Status Reload() override { return Status::Ok(); }
  // What the hooks reported as unusable answers (the runtime logs and counts these).
  std::vector<std::pair<std::string, std::string>> unusable;
  void Unusable(const std::string& function, const std::string& message) override {
    unusable.emplace_back(function, message);
  }

 private:
  std::string name_ = "fake";
};

class CountingLogger final : public Logger {
 public:
  void Log(LogLevel level, std::string_view message, const json& fields) override {
    lines.push_back({level, std::string(message), fields});
  }
  bool Enabled(LogLevel) const override { return true; }
  struct Line {
    LogLevel level;
    std::string message;
    json fields;
  };
  std::vector<Line> lines;
};

// A runtime that hands out one fake per name, or fails to load.
class FakeRuntime final : public ScriptRuntime {
 public:
  std::map<std::string, Status> failures;  // by path
  std::vector<std::string> loaded;
  Result<std::shared_ptr<Script>> Load(const std::string& name, const std::string& path, const LuaLimits&) override {
    auto it = failures.find(path);
    if (it != failures.end()) return it->second;
    loaded.push_back(name + "=" + path);
    return std::shared_ptr<Script>(std::make_shared<FakeScript>());
  }
  void ReloadAll() override {}
};

json OutboxPayload() {
  return json{{"triggerEvent", "BOOKING_CONFIRMED"},
              {"createdAt", "2030-01-01T09:00:00.000Z"},
              {"payload", {{"id", 7}, {"title", "Intro"}, {"attendees", json::array({{{"email", "a@x.org"}}})}}},
              {"internal", "not for scripts"}};
}

Webhook SecretWebhook(std::optional<std::string> tmpl = std::nullopt) {
  Webhook w;
  w.id = 3;
  w.user_id = 9;
  w.subscriber_url = "https://hooks.example.com/x";
  w.triggers = {"BOOKING_CONFIRMED", "BOOKING_CANCELLED"};
  w.payload_template = std::move(tmpl);
  w.secret = "whsec_do_not_show";
  return w;
}

class WebhooksScriptHooks : public ::testing::Test {
 protected:
  std::shared_ptr<FakeScript> filter_ = std::make_shared<FakeScript>();
  std::shared_ptr<FakeScript> render_ = std::make_shared<FakeScript>();
  CountingLogger logger_;
  ScriptHooks hooks_{filter_, render_, &logger_};
  json event_ = ScriptHooks::EventValue(OutboxPayload());

  bool Deliver(const ScriptHooks& hooks, const json& webhook) {
    const json outbox = OutboxPayload();
    ScriptHooks::Args args(outbox, webhook);
    return hooks.ShouldDeliver(args);
  }
  RenderedBody BodyOf(const Webhook& w, const json& webhook) {
    const json outbox = OutboxPayload();
    ScriptHooks::Args args(outbox, webhook);
    return hooks_.Body(w, outbox, args);
  }
};

TEST_F(WebhooksScriptHooks, ValuesAreTheDocumentedOnesWithoutTheSecret) {
  EXPECT_EQ(event_, (json{{"triggerEvent", "BOOKING_CONFIRMED"},
                          {"createdAt", "2030-01-01T09:00:00.000Z"},
                          {"payload", OutboxPayload()["payload"]}}));
  const json webhook = ScriptHooks::WebhookValue(SecretWebhook("{{title}}"));
  EXPECT_EQ(webhook, (json{{"id", 3},
                           {"userId", 9},
                           {"subscriberUrl", "https://hooks.example.com/x"},
                           {"triggers", {"BOOKING_CONFIRMED", "BOOKING_CANCELLED"}},
                           {"active", true},
                           {"payloadTemplate", "{{title}}"}}));
  EXPECT_EQ(webhook.dump().find("whsec"), std::string::npos);
  EXPECT_TRUE(ScriptHooks::WebhookValue(SecretWebhook())["payloadTemplate"].is_null());
  // An event type's webhook names its event type; a user's own has no such member.
  EXPECT_FALSE(webhook.contains("eventTypeId"));
  Webhook of_event_type = SecretWebhook();
  of_event_type.event_type_id = 12;
  EXPECT_EQ(ScriptHooks::WebhookValue(of_event_type)["eventTypeId"], 12);
}

TEST_F(WebhooksScriptHooks, AnOutboxPayloadHoldingOnlyTheEventIsReadInPlace) {
  const json outbox = OutboxPayload();  // holds a member scripts must not see
  ScriptHooks::Args filtered(outbox);
  EXPECT_NE(&filtered.event(), &outbox);
  EXPECT_EQ(filtered.event(), event_);
  ScriptHooks::Args in_place(event_);
  EXPECT_EQ(&in_place.event(), &event_);
  // Either way the script is given the event value.
  filter_->answers.emplace("should_deliver", json(true));
  EXPECT_TRUE(hooks_.ShouldDeliver(filtered));
  EXPECT_TRUE(hooks_.ShouldDeliver(in_place));
  ASSERT_EQ(filter_->calls.size(), 2u);
  EXPECT_EQ(filter_->calls[0].second[0], event_);
  EXPECT_EQ(filter_->calls[1].second[0], event_);
}

TEST_F(WebhooksScriptHooks, FilterAnswerDecides) {
  const json webhook = ScriptHooks::WebhookValue(SecretWebhook());
  filter_->answers.emplace("should_deliver", json(false));
  EXPECT_FALSE(Deliver(hooks_, webhook));
  ASSERT_EQ(filter_->calls.size(), 1u);
  EXPECT_EQ(filter_->calls[0].second, (std::vector<json>{event_, webhook}));
  filter_->answers.insert_or_assign("should_deliver", json(true));
  EXPECT_TRUE(Deliver(hooks_, webhook));
}

TEST_F(WebhooksScriptHooks, FilterFallsBackToDeliver) {
  const json webhook = ScriptHooks::WebhookValue(SecretWebhook());
  EXPECT_TRUE(Deliver(hooks_, webhook)) << "no should_deliver: deliver";
  EXPECT_TRUE(filter_->calls.empty()) << "an absent function is not called (not an error)";
  filter_->answers.emplace("should_deliver", Status(ErrorCode::kInvalid, "fake:3: boom"));
  EXPECT_TRUE(Deliver(hooks_, webhook));
  filter_->answers.insert_or_assign("should_deliver", json(nullptr));
  EXPECT_TRUE(Deliver(hooks_, webhook)) << "nil is not false";
  filter_->answers.insert_or_assign("should_deliver", json(0));
  EXPECT_TRUE(Deliver(hooks_, webhook));
  ASSERT_EQ(filter_->unusable.size(), 2u) << "wrong answer types are reported to the runtime";
  EXPECT_EQ(filter_->unusable[1].first, "should_deliver");
  EXPECT_NE(filter_->unusable[1].second.find("not a boolean (number)"), std::string::npos);
  EXPECT_TRUE(Deliver(ScriptHooks(), webhook)) << "no scripts at all";
}

TEST_F(WebhooksScriptHooks, RenderedBodyIsTypedLikeTemplates) {
  const Webhook w = SecretWebhook("{\"t\":\"{{title}}\"}");
  const json webhook = ScriptHooks::WebhookValue(w);
  render_->answers.emplace("render", json("{\"text\":\"hi\"}"));
  RenderedBody body = BodyOf(w, webhook);
  EXPECT_EQ(body.body, "{\"text\":\"hi\"}");
  EXPECT_EQ(body.content_type, "application/json");
  ASSERT_EQ(render_->calls.size(), 1u);
  EXPECT_EQ(render_->calls[0].second, (std::vector<json>{json("{\"t\":\"{{title}}\"}"), event_, webhook}));

  render_->answers.insert_or_assign("render", json("plain words"));
  body = BodyOf(w, webhook);
  EXPECT_EQ(body.body, "plain words");
  EXPECT_EQ(body.content_type, "text/plain");

  render_->answers.insert_or_assign("render", json(std::string(kMaxRenderedBytes + 10, 'x')));
  EXPECT_EQ(BodyOf(w, webhook).body.size(), kMaxRenderedBytes);

  // Cut before a character that does not fit whole.
  render_->answers.insert_or_assign("render", json(std::string(kMaxRenderedBytes - 1, 'x') + "\xC3\xA9"));
  EXPECT_EQ(BodyOf(w, webhook).body, std::string(kMaxRenderedBytes - 1, 'x'));
}

TEST_F(WebhooksScriptHooks, RenderAnsweringTextThatIsNotUtf8GivesTheBuiltInBody) {
  const Webhook w = SecretWebhook();
  const json webhook = ScriptHooks::WebhookValue(w);
  const json outbox = OutboxPayload();
  for (const std::string bad : {"caf\xC3", "\xFF\xFE", "\xED\xA0\x80 surrogate", "over\xC0\xAFlong"}) {
    render_->answers.insert_or_assign("render", json(bad));
    ScriptHooks::Args args(outbox, webhook);
    EXPECT_EQ(hooks_.Render(w.payload_template, args), std::nullopt) << bad;
    const RenderedBody body = BodyOf(w, webhook);
    EXPECT_EQ(body.content_type, "application/json") << bad;
    EXPECT_EQ(json::parse(body.body), outbox) << bad;
  }
}

TEST_F(WebhooksScriptHooks, TemplateIsNilWithoutOne) {
  render_->answers.emplace("render", json("x"));
  ScriptHooks::Args args(event_, json::object());
  hooks_.Render(std::nullopt, args);
  ASSERT_EQ(render_->calls.size(), 1u);
  EXPECT_TRUE(render_->calls[0].second[0].is_null());
}

TEST_F(WebhooksScriptHooks, RenderFallsBackToTheBuiltInBody) {
  const Webhook templated = SecretWebhook("Hello {{title}}");
  const Webhook plain = SecretWebhook();
  const json webhook = ScriptHooks::WebhookValue(templated);
  const RenderedBody builtin_templated = RenderBody(templated.payload_template, OutboxPayload());
  const RenderedBody builtin_plain = RenderBody(std::nullopt, OutboxPayload());
  EXPECT_EQ(builtin_templated.body, "Hello Intro");

  auto expect_builtin = [&](const char* why) {
    EXPECT_EQ(BodyOf(templated, webhook).body, builtin_templated.body) << why;
    const RenderedBody b = BodyOf(plain, webhook);
    EXPECT_EQ(b.body, builtin_plain.body) << why;
    EXPECT_EQ(b.content_type, "application/json") << why;
  };
  expect_builtin("no render function");
  render_->answers.emplace("render", json(nullptr));
  expect_builtin("nil");
  render_->answers.insert_or_assign("render", Status(ErrorCode::kInvalid, "fake:1: instruction limit"));
  expect_builtin("error");
  const size_t reported = render_->unusable.size();
  render_->answers.insert_or_assign("render", json{{"text", "a table"}});
  expect_builtin("a table");
  ASSERT_GT(render_->unusable.size(), reported) << "a result that is not a string is reported";
  EXPECT_NE(render_->unusable.back().second.find("not a string (object)"), std::string::npos);
  render_->answers.insert_or_assign("render", json("caf\xC3"));
  expect_builtin("not UTF-8");
  EXPECT_NE(render_->unusable.back().second.find("not valid UTF-8"), std::string::npos);
}

TEST(WebhooksScriptHooksLoad, LoadsConfiguredScriptsAndNamesTheFileOnFailure) {
  FakeRuntime runtime;
  CountingLogger logger;
  Result<ScriptHooks> none = ScriptHooks::Load(runtime, logger, "", "", LuaLimits{});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_filter());
  EXPECT_FALSE(none->has_render());
  EXPECT_TRUE(runtime.loaded.empty());

  Result<ScriptHooks> both = ScriptHooks::Load(runtime, logger, "/s/f.lua", "/s/r.lua", LuaLimits{});
  ASSERT_TRUE(both.ok());
  EXPECT_TRUE(both->has_filter());
  EXPECT_TRUE(both->has_render());
  EXPECT_EQ(runtime.loaded, (std::vector<std::string>{"webhooks.filter=/s/f.lua", "webhooks.render=/s/r.lua"}));

  runtime.failures.emplace("/s/bad.lua", Status(ErrorCode::kInvalid, "webhooks.render:4: unexpected symbol"));
  Result<ScriptHooks> bad = ScriptHooks::Load(runtime, logger, "/s/f.lua", "/s/bad.lua", LuaLimits{});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("/s/bad.lua"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("webhooks.render:4:"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace rendezvous::webhooks
