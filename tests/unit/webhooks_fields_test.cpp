// The checks on a webhook create or update body, and on the pages' webhook form.
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

TEST(WebhooksFields, FormIsReadAsTyped) {
  WebhookForm f = ReadWebhookForm({{"subscriber_url", " https://hooks.example.com/in "},
                                   {"secret", "s3cret"},
                                   {"payload_template", "{\r\n\"t\": \"{{title}}\"\r\n}"},
                                   {"trigger_BOOKING_CANCELLED", "1"},
                                   {"trigger_BOOKING_CREATED", "1"},
                                   {"trigger_NOT_A_TRIGGER", "1"},
                                   {"csrf_token", "x"}});
  EXPECT_EQ(f.subscriber_url, " https://hooks.example.com/in ");
  EXPECT_EQ(f.triggers, (std::vector<std::string>{"BOOKING_CREATED", "BOOKING_CANCELLED"}));
  EXPECT_FALSE(f.active);  // an unticked checkbox is not sent
  EXPECT_FALSE(f.remove_secret);
  Result<WebhookFields> r = FieldsFromForm(f, true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r->subscriber_url, "https://hooks.example.com/in");
  EXPECT_EQ(**r->payload_template, "{\n\"t\": \"{{title}}\"\n}");
  EXPECT_EQ(**r->secret, "s3cret");
  EXPECT_EQ(r->active, false);
}

TEST(WebhooksFields, FormSecretIsKeptSetOrRemovedAndTemplateCleared) {
  WebhookForm f;
  f.subscriber_url = "https://hooks.example.com/in";
  f.triggers = {"BOOKING_CREATED"};
  Result<WebhookFields> keep = FieldsFromForm(f, false);
  ASSERT_TRUE(keep.ok());
  EXPECT_FALSE(keep->secret.has_value());  // an edit with the field empty keeps the secret
  ASSERT_TRUE(keep->payload_template.has_value());
  EXPECT_FALSE(keep->payload_template->has_value());  // an empty template clears it
  f.remove_secret = true;
  Result<WebhookFields> removed = FieldsFromForm(f, false);
  ASSERT_TRUE(removed.ok() && removed->secret.has_value());
  EXPECT_FALSE(removed->secret->has_value());
  f.remove_secret = false;
  Result<WebhookFields> none = FieldsFromForm(f, true);
  ASSERT_TRUE(none.ok() && none->secret.has_value());
  EXPECT_FALSE(none->secret->has_value());
}

TEST(WebhooksFields, FormMessagesSpeakOfTheLabels) {
  WebhookForm f;
  f.subscriber_url = "";
  Result<WebhookFields> r = FieldsFromForm(f, true);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "triggers");
  EXPECT_EQ(r.status().message(), "Choose at least one trigger.");
  f.triggers = {"BOOKING_CREATED"};
  r = FieldsFromForm(f, true);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "subscriberUrl");
  EXPECT_EQ(r.status().message(), "Subscriber URL must not be empty");
  f.subscriber_url = "https://hooks.example.com/in";
  f.payload_template = std::string(kMaxTemplateBytes + 1, 'x');
  r = FieldsFromForm(f, true);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "Payload template must be at most 65536 bytes");
}

}  // namespace
}  // namespace rendezvous::webhooks
