// The subscription API: shapes, 409, 404 for another user's webhook, validation, credentials,
// the private-network rule, event-type webhooks and the per-user limit over both levels.
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

TEST_F(WebhooksApiTest, EventTypeWebhooksCreateGetListPatchDelete) {
  StartServer();
  const int64_t intro = CreateEventType(owner_key_, "intro")["id"];
  const int64_t demo = CreateEventType(owner_key_, "demo")["id"];
  const std::string base = "/v2/event-types/" + std::to_string(intro) + "/webhooks";
  json body = Body("https://hooks.example.com/et");
  body["secret"] = "s3cret";
  HttpResult created = Call("POST", base, owner_key_, body);
  ASSERT_EQ(created.status, 201) << created.body;
  const json data = created.Json()["data"];
  std::vector<std::string> keys;
  for (auto it = data.begin(); it != data.end(); ++it) keys.push_back(it.key());
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"active", "eventTypeId", "id", "payloadTemplate", "secret",
                                            "subscriberUrl", "triggers", "userId"}));
  EXPECT_EQ(data["eventTypeId"], intro);
  EXPECT_EQ(data["userId"], owner_);
  EXPECT_EQ(data["secret"], "s3cret");
  const int64_t id = data["id"];
  const std::string path = base + "/" + std::to_string(id);

  HttpResult got = Call("GET", path, owner_key_);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.Json()["data"], data);

  // The same URL at the user's level and on another event type is another webhook; twice on the
  // same event type is a conflict.
  json user_level = CreateWebhook(Body("https://hooks.example.com/et"));
  EXPECT_FALSE(user_level.contains("eventTypeId"));
  CreateEventTypeWebhook(demo, Body("https://hooks.example.com/et"));
  EXPECT_EQ(Call("POST", base, owner_key_, Body("https://hooks.example.com/et")).status, 409);
  CreateEventTypeWebhook(intro, Body("https://hooks.example.com/et2"));
  EXPECT_EQ(Call("PATCH", path, owner_key_, json{{"subscriberUrl", "https://hooks.example.com/et2"}}).status,
            409);

  HttpResult list = Call("GET", base + "?take=1", owner_key_);
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(list.Json()["pagination"], json({{"total", 2}, {"skip", 0}, {"take", 1}}));
  ASSERT_EQ(list.Json()["data"].size(), 1u);
  EXPECT_EQ(list.Json()["data"][0], data);
  EXPECT_EQ(Call("GET", base + "?take=0", owner_key_).status, 400);
  // The user's own list holds the user-level webhook only; the event type's webhook lives under
  // its event type.
  HttpResult mine = Call("GET", "/v2/webhooks", owner_key_);
  ASSERT_EQ(mine.Json()["data"].size(), 1u) << mine.body;
  EXPECT_EQ(mine.Json()["data"][0]["id"], user_level["id"]);
  EXPECT_EQ(Call("GET", "/v2/webhooks/" + std::to_string(id), owner_key_).status, 404);
  EXPECT_EQ(Call("DELETE", "/v2/webhooks/" + std::to_string(id), owner_key_).status, 404);
  // ...and a webhook is found only under its own event type.
  EXPECT_EQ(
      Call("GET", "/v2/event-types/" + std::to_string(demo) + "/webhooks/" + std::to_string(id), owner_key_)
          .status,
      404);
  EXPECT_EQ(Call("GET", base + "/" + std::to_string(user_level["id"].get<int64_t>()), owner_key_).status,
            404);

  HttpResult patched =
      Call("PATCH", path, owner_key_, json{{"active", false}, {"triggers", {"BOOKING_NO_SHOW"}}});
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(patched.Json()["data"]["active"], false);
  EXPECT_EQ(patched.Json()["data"]["triggers"], json({"BOOKING_NO_SHOW"}));
  EXPECT_EQ(patched.Json()["data"]["eventTypeId"], intro);
  EXPECT_EQ(patched.Json()["data"]["subscriberUrl"], "https://hooks.example.com/et");

  HttpResult deleted = Call("DELETE", path, owner_key_);
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(deleted.Json()["data"], patched.Json()["data"]);
  EXPECT_EQ(Call("GET", path, owner_key_).status, 404);
  EXPECT_EQ(Call("DELETE", path, owner_key_).status, 404);
}

TEST_F(WebhooksApiTest, AnotherUsersEventTypeIsNotFound) {
  StartServer();
  const int64_t mine = CreateEventType(owner_key_, "intro")["id"];
  const int64_t theirs = CreateEventType(other_key_, "theirs")["id"];
  const std::string their_base = "/v2/event-types/" + std::to_string(theirs) + "/webhooks";
  const int64_t their_webhook =
      CreateEventTypeWebhook(theirs, Body("https://hooks.example.com/t"), other_key_)["id"];
  const std::string their_path = their_base + "/" + std::to_string(their_webhook);

  for (const auto& [method, path] :
       std::vector<std::pair<std::string, std::string>>{{"POST", their_base},
                                                        {"GET", their_base},
                                                        {"GET", their_path},
                                                        {"PATCH", their_path},
                                                        {"DELETE", their_path}}) {
    HttpResult r = method == "POST" || method == "PATCH"
                       ? Call(method, path, owner_key_, Body("https://hooks.example.com/x"))
                       : Call(method, path, owner_key_);
    EXPECT_EQ(r.status, 404) << method << " " << path << " -> " << r.body;
    EXPECT_EQ(r.Json()["error"]["code"], "not_found") << r.body;
  }
  // Their webhook through the owner's own event type, and its delivery log and ping: 404 too.
  EXPECT_EQ(
      Call("GET", "/v2/event-types/" + std::to_string(mine) + "/webhooks/" + std::to_string(their_webhook),
           owner_key_)
          .status,
      404);
  EXPECT_EQ(Call("GET", "/v2/webhooks/" + std::to_string(their_webhook) + "/deliveries", owner_key_).status,
            404);
  EXPECT_EQ(
      Call("POST", "/v2/webhooks/" + std::to_string(their_webhook) + "/ping", owner_key_, std::string("{}"))
          .status,
      404);
  // An event type that does not exist, and ids that are not ids.
  EXPECT_EQ(Call("GET", "/v2/event-types/999999/webhooks", owner_key_).status, 404);
  EXPECT_EQ(
      Call("POST", "/v2/event-types/999999/webhooks", owner_key_, Body("https://hooks.example.com/x")).status,
      404);
  EXPECT_EQ(Call("GET", "/v2/event-types/abc/webhooks", owner_key_).status, 404);
  EXPECT_EQ(Call("GET", "/v2/event-types/" + std::to_string(mine) + "/webhooks/abc", owner_key_).status, 404);
  // Nothing of theirs changed, nothing of ours was made.
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM webhooks"), "1");
  HttpResult still = Call("GET", their_path, other_key_);
  ASSERT_EQ(still.status, 200) << still.body;
  EXPECT_EQ(still.Json()["data"]["active"], true);
  // API keys only, as for the user's webhooks.
  OAuthGrant grant = GrantOAuthToken(*server_, db_, owner_, owner_, {"EVENT_TYPE_READ"}, {"EVENT_TYPE_READ"});
  EXPECT_EQ(Call("GET", "/v2/event-types/" + std::to_string(mine) + "/webhooks", grant.access_token).status,
            401);
  EXPECT_EQ(Call("GET", "/v2/event-types/" + std::to_string(mine) + "/webhooks", "").status, 401);
}

TEST_F(WebhooksApiTest, EventTypeWebhookValidationErrorsNameTheField) {
  StartServer();
  const int64_t intro = CreateEventType(owner_key_, "intro")["id"];
  const std::string base = "/v2/event-types/" + std::to_string(intro) + "/webhooks";
  auto field_of = [&](const std::string& method, const std::string& path, const json& body) {
    HttpResult r = Call(method, path, owner_key_, body);
    EXPECT_EQ(r.status, 400) << body.dump() << " -> " << r.body;
    EXPECT_EQ(r.Json()["error"]["code"], "validation_error") << r.body;
    return r.Json()["error"]["details"].value("field", "");
  };
  json good = Body("https://hooks.example.com/a");
  json bad = good;
  bad.erase("triggers");
  EXPECT_EQ(field_of("POST", base, bad), "triggers");
  bad = good;
  bad["triggers"] = {"BOOKING_CREATED", "BOOKING_EXPLODED"};
  EXPECT_EQ(field_of("POST", base, bad), "triggers[1]");
  bad = good;
  bad["eventTypeId"] = intro;  // the path names it
  EXPECT_EQ(field_of("POST", base, bad), "eventTypeId");
  bad = good;
  bad["subscriberUrl"] = "ftp://hooks.example.com/";
  EXPECT_EQ(field_of("POST", base, bad), "subscriberUrl");
  bad = good;
  bad["secret"] = std::string(257, 's');
  EXPECT_EQ(field_of("POST", base, bad), "secret");
  EXPECT_EQ(Call("POST", base, owner_key_, std::string("[1]")).status, 400);
  EXPECT_EQ(Call("POST", base, owner_key_, std::string("{\"active\":")).status, 400);
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM webhooks"), "0");

  const int64_t id = CreateEventTypeWebhook(intro, good)["id"];
  const std::string path = base + "/" + std::to_string(id);
  EXPECT_EQ(field_of("PATCH", path, json{{"active", "yes"}}), "active");
  EXPECT_EQ(field_of("PATCH", path, json{{"eventTypeId", intro + 1}}), "eventTypeId");
  EXPECT_EQ(field_of("PATCH", path, json{{"triggers", json::array()}}), "triggers");
  HttpResult unchanged = Call("GET", path, owner_key_);
  EXPECT_EQ(unchanged.Json()["data"]["active"], true) << unchanged.body;
  EXPECT_EQ(unchanged.Json()["data"]["eventTypeId"], intro) << unchanged.body;
}

TEST_F(WebhooksApiTest, WebhookLimitCountsBothLevels) {
  StartServer();
  const int64_t intro = CreateEventType(owner_key_, "intro")["id"];
  const std::string base = "/v2/event-types/" + std::to_string(intro) + "/webhooks";
  // 98 user-level webhooks written straight to the table, then one of each level through the API:
  // 100 in all, the most a user may have.
  std::string values;
  for (int i = 0; i < 98; ++i) {
    const std::string url = "'https://hooks.example.com/bulk/" + std::to_string(i) + "'";
    values += std::string(values.empty() ? "" : ",") + "(" + std::to_string(owner_) + ", " + url + ", SHA2(" +
              url + ", 256), 1, '[\"BOOKING_CREATED\"]', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))";
  }
  db_.Exec(
      "INSERT INTO webhooks (user_id, subscriber_url, url_hash, active, triggers, created_at, updated_at) "
      "VALUES " +
      values);
  CreateWebhook(Body("https://hooks.example.com/user-99"));
  const int64_t last = CreateEventTypeWebhook(intro, Body("https://hooks.example.com/et-100"))["id"];

  HttpResult user_over = Call("POST", "/v2/webhooks", owner_key_, Body("https://hooks.example.com/user-101"));
  EXPECT_EQ(user_over.status, 409) << user_over.body;
  HttpResult type_over = Call("POST", base, owner_key_, Body("https://hooks.example.com/et-101"));
  EXPECT_EQ(type_over.status, 409) << type_over.body;
  EXPECT_NE(type_over.Json()["error"]["message"].get<std::string>().find("100"), std::string::npos)
      << type_over.body;
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM webhooks WHERE user_id = " + std::to_string(owner_)), "100");
  // Another user's count is their own.
  CreateWebhook(Body("https://hooks.example.com/other"), other_key_);

  // Freeing an event-type webhook makes room at the user's level.
  ASSERT_EQ(Call("DELETE", base + "/" + std::to_string(last), owner_key_).status, 200);
  CreateWebhook(Body("https://hooks.example.com/user-100"));
  EXPECT_EQ(Call("POST", base, owner_key_, Body("https://hooks.example.com/et-101")).status, 409);
}

TEST_F(WebhooksApiTest, DeletingAnEventTypeDeletesItsWebhooks) {
  LoopbackHttpServer receiver([](const PeerRequest&) {
    PeerResponse r;
    r.status = 200;
    return r;
  });
  StartServer();
  const int64_t intro = CreateEventType(owner_key_, "intro")["id"];
  const int64_t demo = CreateEventType(owner_key_, "demo")["id"];
  const int64_t gone = CreateEventTypeWebhook(intro, Body(receiver.url() + "/a"))["id"];
  const int64_t kept = CreateEventTypeWebhook(demo, Body("https://hooks.example.com/a"))["id"];
  const int64_t user_level = CreateWebhook(Body("https://hooks.example.com/a"))["id"];
  ASSERT_EQ(
      Call("POST", "/v2/webhooks/" + std::to_string(gone) + "/ping", owner_key_, std::string("{}")).status,
      200);
  ASSERT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = " + std::to_string(gone)), 1);

  HttpResult deleted = Call("DELETE", "/v2/event-types/" + std::to_string(intro), owner_key_);
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhooks WHERE id = " + std::to_string(gone)), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = " + std::to_string(gone)), 0);
  EXPECT_EQ(Call("GET", "/v2/event-types/" + std::to_string(intro) + "/webhooks", owner_key_).status, 404);
  EXPECT_EQ(Call("GET", "/v2/webhooks/" + std::to_string(gone) + "/deliveries", owner_key_).status, 404);
  // The other event type's and the user's webhooks stay.
  EXPECT_EQ(
      Call("GET", "/v2/event-types/" + std::to_string(demo) + "/webhooks/" + std::to_string(kept), owner_key_)
          .status,
      200);
  EXPECT_EQ(Call("GET", "/v2/webhooks/" + std::to_string(user_level), owner_key_).status, 200);
}

}  // namespace
}  // namespace rendezvous::testing
