// The subscription API: shapes, 409, 404 for another user's webhook, validation, credentials,
// and the private-network rule.
#include <algorithm>

#include "oauth_support.hpp"
#include "webhooks_fixture.hpp"

namespace rendezvous::testing {
namespace {

class WebhooksApiTest : public WebhooksFixture {
 protected:
  static json Body(const std::string& url) {
    return WebhooksFixture::Body(url, {"BOOKING_CREATED", "BOOKING_CONFIRMED"});
  }
};

TEST_F(WebhooksApiTest, CreateGetListPatchDeleteShapes) {
  StartServer();
  json body = Body("https://hooks.example.com/a");
  body["secret"] = "s3cret";
  body["payloadTemplate"] = "{\"t\":\"{{title}}\"}";
  body["version"] = "2021-10-20";
  HttpResult created = Call("POST", "/v2/webhooks", owner_key_, body);
  ASSERT_EQ(created.status, 201) << created.body;
  json data = created.Json()["data"];
  EXPECT_EQ(created.Json()["status"], "success");
  std::vector<std::string> keys;
  for (auto it = data.begin(); it != data.end(); ++it) keys.push_back(it.key());
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"active", "id", "payloadTemplate", "secret", "subscriberUrl",
                                            "triggers", "userId"}));
  EXPECT_EQ(data["userId"], owner_);
  EXPECT_EQ(data["secret"], "s3cret");
  EXPECT_EQ(data["active"], true);
  EXPECT_EQ(data["triggers"], json({"BOOKING_CREATED", "BOOKING_CONFIRMED"}));
  EXPECT_EQ(data["payloadTemplate"], "{\"t\":\"{{title}}\"}");
  const int64_t id = data["id"].get<int64_t>();
  const std::string path = "/v2/webhooks/" + std::to_string(id);

  // The secret is stored encrypted, not as given.
  const std::string stored =
      db_.QueryValue("SELECT secret_encrypted FROM webhooks WHERE id = " + std::to_string(id));
  EXPECT_FALSE(stored.empty());
  EXPECT_EQ(stored.find("s3cret"), std::string::npos);

  HttpResult got = Call("GET", path, owner_key_);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.Json()["data"], data);

  CreateWebhook(Body("https://hooks.example.com/b"));
  HttpResult list = Call("GET", "/v2/webhooks?skip=1&take=1", owner_key_);
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(list.Json()["pagination"], json({{"total", 2}, {"skip", 1}, {"take", 1}}));
  ASSERT_EQ(list.Json()["data"].size(), 1u);
  EXPECT_EQ(list.Json()["data"][0]["subscriberUrl"], "https://hooks.example.com/b");

  HttpResult patched = Call("PATCH", path, owner_key_,
                            json{{"active", false}, {"triggers", {"BOOKING_NO_SHOW"}}, {"secret", nullptr}});
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(patched.Json()["data"]["active"], false);
  EXPECT_EQ(patched.Json()["data"]["triggers"], json({"BOOKING_NO_SHOW"}));
  EXPECT_TRUE(patched.Json()["data"]["secret"].is_null());
  EXPECT_EQ(patched.Json()["data"]["subscriberUrl"], "https://hooks.example.com/a");
  EXPECT_EQ(patched.Json()["data"]["payloadTemplate"], "{\"t\":\"{{title}}\"}");

  HttpResult deleted = Call("DELETE", path, owner_key_);
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(deleted.Json()["data"], patched.Json()["data"]);
  EXPECT_EQ(Call("GET", path, owner_key_).status, 404);
  EXPECT_EQ(Call("DELETE", path, owner_key_).status, 404);
}

TEST_F(WebhooksApiTest, DuplicateUrlIsConflictAndOtherUsersWebhookIsNotFound) {
  StartServer();
  json a = CreateWebhook(Body("https://hooks.example.com/a"));
  HttpResult dup = Call("POST", "/v2/webhooks", owner_key_, Body("https://hooks.example.com/a"));
  EXPECT_EQ(dup.status, 409) << dup.body;
  // Another user may subscribe the same URL.
  EXPECT_EQ(Call("POST", "/v2/webhooks", other_key_, Body("https://hooks.example.com/a")).status, 201);
  // Patching onto an existing URL is a conflict too.
  json b = CreateWebhook(Body("https://hooks.example.com/b"));
  EXPECT_EQ(Call("PATCH", "/v2/webhooks/" + std::to_string(b["id"].get<int64_t>()), owner_key_,
                 json{{"subscriberUrl", "https://hooks.example.com/a"}})
                .status,
            409);

  const std::string path = "/v2/webhooks/" + std::to_string(a["id"].get<int64_t>());
  EXPECT_EQ(Call("GET", path, other_key_).status, 404);
  EXPECT_EQ(Call("PATCH", path, other_key_, json{{"active", false}}).status, 404);
  EXPECT_EQ(Call("DELETE", path, other_key_).status, 404);
  EXPECT_EQ(Call("GET", path + "/deliveries", other_key_).status, 404);
  EXPECT_EQ(Call("GET", "/v2/webhooks/999999", owner_key_).status, 404);
  EXPECT_EQ(Call("GET", "/v2/webhooks/abc", owner_key_).status, 404);
  // Still there for its owner.
  EXPECT_EQ(Call("GET", path, owner_key_).status, 200);
  HttpResult other_list = Call("GET", "/v2/webhooks", other_key_);
  EXPECT_EQ(other_list.Json()["data"].size(), 1u);
}

TEST_F(WebhooksApiTest, ValidationErrorsNameTheField) {
  StartServer();
  auto field_of = [&](const json& body) {
    HttpResult r = Call("POST", "/v2/webhooks", owner_key_, body);
    EXPECT_EQ(r.status, 400) << body.dump() << " -> " << r.body;
    return r.Json()["error"]["details"].value("field", "");
  };
  json base = Body("https://hooks.example.com/a");
  json no_url = base;
  no_url.erase("subscriberUrl");
  EXPECT_EQ(field_of(no_url), "subscriberUrl");
  json no_active = base;
  no_active.erase("active");
  EXPECT_EQ(field_of(no_active), "active");
  json bad = base;
  bad["triggers"] = json::array();
  EXPECT_EQ(field_of(bad), "triggers");
  bad["triggers"] = {"BOOKING_CREATED", "BOOKING_EXPLODED"};
  EXPECT_EQ(field_of(bad), "triggers[1]");
  bad["triggers"] = {"BOOKING_CREATED", "BOOKING_CREATED"};
  EXPECT_EQ(field_of(bad), "triggers[1]");
  bad = base;
  bad["version"] = "2024-08-13";
  EXPECT_EQ(field_of(bad), "version");
  bad = base;
  bad["subscriberUrl"] = "ftp://hooks.example.com/";
  EXPECT_EQ(field_of(bad), "subscriberUrl");
  bad = base;
  bad["userId"] = other_;
  EXPECT_EQ(field_of(bad), "userId");
  bad = base;
  bad["subscriberUrl"] = "https://user:pw@hooks.example.com/";
  EXPECT_EQ(field_of(bad), "subscriberUrl");
  bad["subscriberUrl"] = "/relative/hook";
  EXPECT_EQ(field_of(bad), "subscriberUrl");
  bad = base;
  bad["payloadTemplate"] = std::string(64 * 1024 + 1, 'x');
  EXPECT_EQ(field_of(bad), "payloadTemplate");
  bad = base;
  bad["secret"] = std::string(257, 's');
  EXPECT_EQ(field_of(bad), "secret");
  bad = base;
  bad["active"] = "yes";
  EXPECT_EQ(field_of(bad), "active");
  // A template of exactly 64 KiB is fine.
  json big = base;
  big["payloadTemplate"] = std::string(64 * 1024, 'x');
  EXPECT_EQ(Call("POST", "/v2/webhooks", owner_key_, big).status, 201);
  EXPECT_EQ(Call("POST", "/v2/webhooks", owner_key_, std::string("[1]")).status, 400);
  EXPECT_EQ(Call("GET", "/v2/webhooks?take=0", owner_key_).status, 400);
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM webhooks"), "1");
}

TEST_F(WebhooksApiTest, ApiKeysOnly) {
  StartServer();
  EXPECT_EQ(Call("GET", "/v2/webhooks", "").status, 401);
  EXPECT_EQ(Call("GET", "/v2/webhooks", "rdv_not-a-real-key").status, 401);
  OAuthGrant grant = GrantOAuthToken(*server_, db_, owner_, owner_, {"BOOKING_READ"}, {"BOOKING_READ"});
  ASSERT_FALSE(grant.access_token.empty());
  EXPECT_EQ(Call("GET", "/v2/webhooks", grant.access_token).status, 401);
  EXPECT_EQ(Call("POST", "/v2/webhooks", grant.access_token, Body("https://hooks.example.com/a")).status,
            401);
  EXPECT_EQ(Call("GET", "/v2/webhooks", owner_key_).status, 200);
}

TEST_F(WebhooksApiTest, PrivateUrlsRefusedWithoutTheFlag) {
  StartServer("webhooks:\n  workers: 1\n");
  for (const char* url : {"http://127.0.0.1:9/hook", "http://localhost/hook", "http://10.0.0.5/hook",
                          "http://169.254.169.254/latest/meta-data", "http://[::1]/hook", "http://[::ffff:127.0.0.1]/hook",
                          "http://100.64.1.1/hook", "http://0.0.0.0/hook", "http://127.1/hook",
                          // NAT64 forms of the metadata address, the local-use prefix included, and Teredo
                          "http://[64:ff9b::a9fe:a9fe]/hook", "http://[64:ff9b:1::a9fe:a9fe]/hook",
                          "http://[2001::a9fe:a9fe]/hook"}) {
    HttpResult r = Call("POST", "/v2/webhooks", owner_key_, Body(url));
    EXPECT_EQ(r.status, 400) << url << " -> " << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], "subscriberUrl") << url;
  }
  json created = CreateWebhook(Body("https://93.184.216.34/hook"));
  // Update is checked the same way, and a refused update changes nothing.
  HttpResult patched = Call("PATCH", "/v2/webhooks/" + std::to_string(created["id"].get<int64_t>()), owner_key_,
                            json{{"subscriberUrl", "http://192.168.0.10/hook"}});
  EXPECT_EQ(patched.status, 400) << patched.body;
  EXPECT_EQ(db_.QueryValue("SELECT subscriber_url FROM webhooks"), "https://93.184.216.34/hook");
}

}  // namespace
}  // namespace rendezvous::testing
