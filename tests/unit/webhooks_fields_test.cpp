// The checks on a webhook create or update body.
#include <gtest/gtest.h>

#include "webhook_fields.hpp"

namespace rendezvous::webhooks {
namespace {

Json Create() {
  return Json{{"active", true}, {"subscriberUrl", "https://hooks.example.com/in"}, {"triggers", {"BOOKING_CREATED"}}};
}

std::string FieldOf(const Json& body, bool create = true) {
  Result<WebhookFields> r = ParseWebhookFields(body, create);
  EXPECT_FALSE(r.ok()) << body.dump();
  return r.ok() ? "<ok>" : r.status().field();
}

TEST(WebhooksFields, AcceptsACompleteCreate) {
  Json body = Create();
  body["payloadTemplate"] = "{\"t\":\"{{title}}\"}";
  body["secret"] = "s3cret";
  body["version"] = "2021-10-20";
  Result<WebhookFields> r = ParseWebhookFields(body, true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->active, true);
  EXPECT_EQ(r->triggers, (std::vector<std::string>{"BOOKING_CREATED"}));
  EXPECT_EQ(**r->secret, "s3cret");
}

TEST(WebhooksFields, CreateNeedsTheThreeMembersUpdateNone) {
  for (const char* member : {"active", "subscriberUrl", "triggers"}) {
    Json body = Create();
    body.erase(member);
    EXPECT_EQ(FieldOf(body), member);
  }
  EXPECT_TRUE(ParseWebhookFields(Json::object(), false).ok());
}

TEST(WebhooksFields, TriggersComeFromTheSpecificationOnceEach) {
  Json body = Create();
  body["triggers"] = Json::array();
  EXPECT_EQ(FieldOf(body), "triggers");
  body["triggers"] = {"BOOKING_CREATED", "MEETING_ENDED"};
  EXPECT_EQ(FieldOf(body), "triggers[1]");
  body["triggers"] = {"BOOKING_NO_SHOW", "BOOKING_NO_SHOW"};
  EXPECT_EQ(FieldOf(body), "triggers[1]");
  body["triggers"] = "BOOKING_CREATED";
  EXPECT_EQ(FieldOf(body), "triggers");
  body["triggers"] = AllTriggers();
  EXPECT_TRUE(ParseWebhookFields(body, true).ok());
  EXPECT_EQ(AllTriggers().size(), 8u);
}

TEST(WebhooksFields, BoundsAndTypes) {
  Json body = Create();
  body["payloadTemplate"] = std::string(kMaxTemplateBytes + 1, 'x');
  EXPECT_EQ(FieldOf(body), "payloadTemplate");
  body["payloadTemplate"] = std::string(kMaxTemplateBytes, 'x');
  EXPECT_TRUE(ParseWebhookFields(body, true).ok());
  body = Create();
  body["secret"] = std::string(kMaxSecretBytes + 1, 's');
  EXPECT_EQ(FieldOf(body), "secret");
  body["secret"] = "line\nbreak";
  EXPECT_EQ(FieldOf(body), "secret");
  body = Create();
  body["version"] = "2024-08-13";
  EXPECT_EQ(FieldOf(body), "version");
  body = Create();
  body["active"] = 1;
  EXPECT_EQ(FieldOf(body), "active");
  body = Create();
  body["id"] = 5;
  EXPECT_EQ(FieldOf(body), "id");
  body = Create();
  body["subscriberUrl"] = "https://me:pw@hooks.example.com/";
  EXPECT_EQ(FieldOf(body), "subscriberUrl");
  EXPECT_EQ(FieldOf(Json::array()), "body");
}

TEST(WebhooksFields, NullOrEmptyClearsTemplateAndSecret) {
  Result<WebhookFields> r = ParseWebhookFields(Json{{"payloadTemplate", nullptr}, {"secret", ""}}, false);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->payload_template.has_value());
  EXPECT_FALSE(r->payload_template->has_value());
  ASSERT_TRUE(r->secret.has_value());
  EXPECT_FALSE(r->secret->has_value());
}

}  // namespace
}  // namespace rendezvous::webhooks
