// OAuth-client webhooks (DESIGN §10) against the real server, MariaDB and a receiver on loopback:
// a client's webhook gets the booking events of the users the client manages and of no one else,
// the client's own credentials guard its routes (401, 404 for another client's webhook), the
// per-user limit counts them with their owner's, and the deletions of all of a level's webhooks
// (a client's, an event type's) remove that level's only. Also GET /v2/timezones.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "eventually.hpp"
#include "google_connect.hpp"
#include "loopback_http_server.hpp"
#include "webhooks_fixture.hpp"

namespace rendezvous::testing {
namespace {

class WebhooksClients : public WebhooksFixture {
 protected:
  static constexpr const char* kSecret = "client-hook-secret";
  static constexpr int64_t kMaxWebhooksPerUser = 100;

  struct Client {
    std::string id;
    std::string secret;
  };

  void SetUp() override {
    receiver_ = std::make_unique<LoopbackHttpServer>([](const PeerRequest&) { return PeerResponse{}; });
    StartServer();
    started_ = time::Now() / 1000;
  }

  // An approved confidential client of `owner` and its secret.
  Client NewClient(int64_t owner, const std::string& name) {
    CliResult created = server_->Cli({"admin", "oauth-client", "create", "--owner-id", std::to_string(owner),
                                      "--name", name, "--redirect-uri", "https://app.example.com/callback"});
    EXPECT_EQ(created.exit_code, 0) << created.err;
    Client c{created.Json().value("client_id", ""), created.Json().value("client_secret", "")};
    CliResult reviewed = server_->Cli({"admin", "oauth-client", "review", c.id, "--accept"});
    EXPECT_EQ(reviewed.exit_code, 0) << reviewed.err;
    return c;
  }

  // A user managed by `client`: its id and access token.
  std::pair<int64_t, std::string> NewManagedUser(const Client& client, const std::string& email) {
    CliResult r = server_->Cli({"admin", "managed-user", "create", "--client-id", client.id, "--email", email,
                                "--name", "Mia Managed"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return {r.Json().value("id", int64_t{0}), r.Json().value("access_token", "")};
  }

  // A call on a client's route with that client's headers (`secret` as given).
  HttpResult ClientCall(const std::string& method, const std::string& path, const std::string& client_id,
                        const std::string& secret, const std::string& body = "") {
    std::vector<std::string> headers = {"x-cal-client-id: " + client_id, "x-cal-secret-key: " + secret};
    if (!body.empty()) headers.push_back("Content-Type: application/json");
    return http_.Request(method, server_->api() + path, body, headers);
  }
  HttpResult ClientCall(const std::string& method, const std::string& path, const Client& c,
                        const std::string& body = "") {
    return ClientCall(method, path, c.id, c.secret, body);
  }
  static std::string Hooks(const Client& c) { return "/v2/oauth-clients/" + c.id + "/webhooks"; }

  json Book(int64_t event_type, const std::string& start) {
    HttpResult r = Call(
        "POST", "/v2/bookings", "",
        json{{"start", start},
             {"eventTypeId", event_type},
             {"attendee", {{"name", "Ann Attendee"}, {"email", "ann@example.com"}, {"timeZone", "UTC"}}}});
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Json()["data"];
  }

  // The receiver's requests at `path` whose event names booking `uid`.
  std::vector<PeerRequest> ReceivedFor(const std::string& path, const std::string& uid) const {
    std::vector<PeerRequest> out;
    for (const PeerRequest& r : receiver_->Requests()) {
      const json event = json::parse(r.body, nullptr, false);
      if (r.path == path && event.is_object() && event["payload"].value("uid", "") == uid) out.push_back(r);
    }
    return out;
  }
  bool AwaitReceived(const std::string& path, const std::string& uid) {
    return Eventually("a delivery for " + uid + " at " + path, {std::chrono::seconds(60)},
                      [&] { return !ReceivedFor(path, uid).empty(); });
  }

  std::unique_ptr<LoopbackHttpServer> receiver_;
  int64_t started_ = 0;
};

TEST_F(WebhooksClients, ClientWebhookGetsItsManagedUsersBookingsOnly) {
  const Client client = NewClient(owner_, "Platform");
  const int64_t managed = NewManagedUser(client, "mia@example.com").first;
  ASSERT_GT(managed, 0);
  json body = Body(receiver_->url() + "/client", {"BOOKING_CREATED"});
  body["secret"] = kSecret;
  HttpResult created = ClientCall("POST", Hooks(client), client, body.dump());
  ASSERT_EQ(created.status, 201) << created.body;
  const json hook = created.Json()["data"];
  EXPECT_EQ(hook["oAuthClientId"], client.id);
  EXPECT_EQ(hook["subscriberUrl"], receiver_->url() + "/client");
  EXPECT_EQ(hook["triggers"], json({"BOOKING_CREATED"}));
  EXPECT_EQ(hook["active"], true);
  EXPECT_EQ(hook["secret"], kSecret);
  EXPECT_TRUE(hook["payloadTemplate"].is_null());
  const int64_t hook_id = hook["id"];

  // A user no client manages, whose own webhook shows when its event has been handled.
  const int64_t plain_type = CreateEventType(other_key_, "plain")["id"];
  CreateWebhook(Body(receiver_->url() + "/other", {"BOOKING_CREATED"}), other_key_);
  // The managed user's event type, made with an API key of theirs (the route takes both).
  const int64_t managed_type = CreateEventType(server_->CreateApiKey(managed), "managed")["id"];

  const std::string monday = Monday();
  const json mine = Book(managed_type, At(monday, "09:00"));
  const json theirs = Book(plain_type, At(monday, "10:00"));
  ASSERT_TRUE(AwaitReceived("/client", mine["uid"]));
  const PeerRequest got = ReceivedFor("/client", mine["uid"]).front();
  ExpectSignedDelivery(got, kSecret, started_);
  const json event = json::parse(got.body);
  EXPECT_EQ(event["triggerEvent"], "BOOKING_CREATED");
  EXPECT_EQ(event["payload"]["organizer"]["id"], managed);

  // The consumer writes every delivery of one event in one transaction: once the other user's own
  // webhook has its delivery, the client's webhook would have one of that event too.
  ASSERT_TRUE(AwaitReceived("/other", theirs["uid"]));
  EXPECT_TRUE(ReceivedFor("/client", theirs["uid"]).empty());
  // The delivery log is the owner's, as for their other webhooks: one delivery, the managed one.
  const json log = Deliveries(hook_id);
  ASSERT_EQ(log.size(), 1u) << log.dump();
  EXPECT_EQ(log[0]["triggerEvent"], "BOOKING_CREATED");

  // The owner pings it with their API key (the webhook's own routes serve every level); the
  // client lists and reads it.
  HttpResult ping = Call("POST", "/v2/webhooks/" + std::to_string(hook_id) + "/ping", owner_key_, "{}");
  ASSERT_EQ(ping.status, 200) << ping.body;
  EXPECT_EQ(ping.Json()["data"]["ok"], true);
  HttpResult list = ClientCall("GET", Hooks(client) + "?take=10&skip=0", client);
  ASSERT_EQ(list.status, 200) << list.body;
  ASSERT_EQ(list.Json()["data"].size(), 1u);
  EXPECT_EQ(list.Json()["data"][0]["id"], hook_id);
  HttpResult one = ClientCall("GET", Hooks(client) + "/" + std::to_string(hook_id), client);
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(one.Json()["data"]["oAuthClientId"], client.id);
  // A client's webhook is not the owner's own level.
  HttpResult own_level = Call("GET", "/v2/webhooks", owner_key_);
  ASSERT_EQ(own_level.status, 200);
  EXPECT_TRUE(own_level.Json()["data"].empty()) << own_level.body;

  // The owner's webhook pages list it among their clients' webhooks and show it; another user's
  // pages do not.
  const std::string owner_cookie =
      SignInBrowser(http_, server_->app(), "owner@example.com", "correct horse battery", nullptr);
  ASSERT_FALSE(owner_cookie.empty());
  HttpResult list_page =
      http_.Get(server_->app() + "/settings/developer/webhooks", {"Cookie: " + owner_cookie});
  ASSERT_EQ(list_page.status, 200);
  const size_t section = list_page.body.find("id=\"client_webhooks\"");
  ASSERT_NE(section, std::string::npos) << list_page.body;
  EXPECT_NE(list_page.body.find(client.id, section), std::string::npos);
  EXPECT_NE(list_page.body.find("/settings/developer/webhooks/" + std::to_string(hook_id), section),
            std::string::npos);
  HttpResult hook_page = http_.Get(server_->app() + "/settings/developer/webhooks/" + std::to_string(hook_id),
                                   {"Cookie: " + owner_cookie});
  ASSERT_EQ(hook_page.status, 200);
  EXPECT_NE(hook_page.body.find("OAuth client"), std::string::npos);
  EXPECT_NE(hook_page.body.find(client.id), std::string::npos);
  const std::string other_cookie =
      SignInBrowser(http_, server_->app(), "other@example.com", "correct horse battery", nullptr);
  ASSERT_FALSE(other_cookie.empty());
  EXPECT_EQ(http_
                .Get(server_->app() + "/settings/developer/webhooks/" + std::to_string(hook_id),
                     {"Cookie: " + other_cookie})
                .status,
            404);
  HttpResult other_list =
      http_.Get(server_->app() + "/settings/developer/webhooks", {"Cookie: " + other_cookie});
  EXPECT_EQ(other_list.body.find(client.id), std::string::npos);

  HttpResult patched = ClientCall("PATCH", Hooks(client) + "/" + std::to_string(hook_id), client,
                                  json{{"active", false}}.dump());
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(patched.Json()["data"]["active"], false);
  HttpResult deleted = ClientCall("DELETE", Hooks(client) + "/" + std::to_string(hook_id), client);
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(deleted.Json()["data"]["id"], hook_id);
  EXPECT_EQ(ClientCall("GET", Hooks(client) + "/" + std::to_string(hook_id), client).status, 404);
}

TEST_F(WebhooksClients, ClientCredentialsGuardTheRoutes) {
  const Client client = NewClient(owner_, "Platform");
  const Client rival = NewClient(other_, "Rival");
  const std::string url = receiver_->url() + "/a";
  HttpResult created = ClientCall("POST", Hooks(client), client, Body(url).dump());
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string hook = Hooks(client) + "/" + std::to_string(created.Json()["data"]["id"].get<int64_t>());

  // A wrong secret, another client's secret, no headers, the other client's id in the headers.
  for (const HttpResult& r :
       {ClientCall("GET", hook, client.id, client.secret + "x"),
        ClientCall("GET", hook, client.id, rival.secret),
        ClientCall("GET", Hooks(client), rival.id, rival.secret), Call("GET", hook, ""),
        ClientCall("DELETE", Hooks(client), client.id, "wrong"),
        ClientCall("POST", Hooks(client), client.id, "wrong", Body(receiver_->url() + "/b").dump())}) {
    EXPECT_EQ(r.status, 401) << r.body;
    EXPECT_EQ(r.Json()["status"], "error") << r.body;
  }
  // A client not approved yet: 403, nothing stored.
  CliResult pending =
      server_->Cli({"admin", "oauth-client", "create", "--owner-id", std::to_string(owner_), "--name",
                    "Pending", "--redirect-uri", "https://app.example.com/callback"});
  ASSERT_EQ(pending.exit_code, 0) << pending.err;
  const Client unapproved{pending.Json().value("client_id", ""), pending.Json().value("client_secret", "")};
  HttpResult forbidden =
      ClientCall("POST", Hooks(unapproved), unapproved, Body(receiver_->url() + "/p").dump());
  EXPECT_EQ(forbidden.status, 403) << forbidden.body;
  EXPECT_EQ(ClientCall("GET", Hooks(unapproved), unapproved).status, 403);
  // An API key is not a client's credential.
  EXPECT_EQ(Call("GET", Hooks(client), owner_key_).status, 401);

  // Another client's webhook under its own credentials: 404, and nothing changed.
  const std::string as_rival =
      Hooks(rival) + "/" + std::to_string(created.Json()["data"]["id"].get<int64_t>());
  EXPECT_EQ(ClientCall("GET", as_rival, rival).status, 404);
  EXPECT_EQ(ClientCall("PATCH", as_rival, rival, json{{"active", false}}.dump()).status, 404);
  EXPECT_EQ(ClientCall("DELETE", as_rival, rival).status, 404);
  HttpResult rival_all = ClientCall("DELETE", Hooks(rival), rival);
  ASSERT_EQ(rival_all.status, 200) << rival_all.body;
  EXPECT_EQ(rival_all.Json()["data"], "0 webhooks deleted");
  HttpResult still = ClientCall("GET", hook, client);
  ASSERT_EQ(still.status, 200) << still.body;
  EXPECT_EQ(still.Json()["data"]["active"], true);

  // The same URL twice at the client's level: 409; at the owner's own level it is another webhook.
  EXPECT_EQ(ClientCall("POST", Hooks(client), client, Body(url).dump()).status, 409);
  CreateWebhook(Body(url));
  // Bad bodies: 400 naming the field, nothing stored.
  json bad = Body(receiver_->url() + "/c");
  bad["triggers"] = {"BOOKING_EXPLODED"};
  HttpResult refused = ClientCall("POST", Hooks(client), client, bad.dump());
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhooks WHERE client_id IS NOT NULL"), 1);
}

TEST_F(WebhooksClients, LimitCountsClientWebhooksWithTheOwnersAndDeleteAllRemovesTheClientsOnly) {
  const Client client = NewClient(owner_, "Platform");
  const int64_t own = CreateWebhook(Body(receiver_->url() + "/own"))["id"];
  for (int i = 1; i < kMaxWebhooksPerUser; ++i) {
    HttpResult r =
        ClientCall("POST", Hooks(client), client, Body(receiver_->url() + "/" + std::to_string(i)).dump());
    ASSERT_EQ(r.status, 201) << i << " " << r.body;
  }
  HttpResult over = ClientCall("POST", Hooks(client), client, Body(receiver_->url() + "/over").dump());
  EXPECT_EQ(over.status, 409) << over.body;
  EXPECT_EQ(Call("POST", "/v2/webhooks", owner_key_, Body(receiver_->url() + "/over")).status, 409);

  HttpResult page = ClientCall("GET", Hooks(client) + "?take=10&skip=95", client);
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_EQ(page.Json()["data"].size(), 4u);
  EXPECT_EQ(page.Json()["pagination"]["total"], kMaxWebhooksPerUser - 1) << page.body;

  HttpResult all = ClientCall("DELETE", Hooks(client), client);
  ASSERT_EQ(all.status, 200) << all.body;
  EXPECT_EQ(all.Json(), (json{{"status", "success"},
                              {"data", std::to_string(kMaxWebhooksPerUser - 1) + " webhooks deleted"}}));
  EXPECT_TRUE(ClientCall("GET", Hooks(client), client).Json()["data"].empty());
  EXPECT_EQ(Call("GET", "/v2/webhooks/" + std::to_string(own), owner_key_).status, 200);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhooks"), 1);
  // Room again.
  EXPECT_EQ(ClientCall("POST", Hooks(client), client, Body(receiver_->url() + "/again").dump()).status, 201);
}

TEST_F(WebhooksClients, EventTypeDeleteAllRemovesThatEventTypesWebhooksOnly) {
  const int64_t intro = CreateEventType(owner_key_, "intro")["id"];
  const int64_t deep = CreateEventType(owner_key_, "deep")["id"];
  CreateEventTypeWebhook(intro, Body(receiver_->url() + "/a"));
  CreateEventTypeWebhook(intro, Body(receiver_->url() + "/b"));
  const int64_t kept = CreateEventTypeWebhook(deep, Body(receiver_->url() + "/a"))["id"];
  const int64_t own = CreateWebhook(Body(receiver_->url() + "/a"))["id"];
  const std::string path = "/v2/event-types/" + std::to_string(intro) + "/webhooks";

  // Another user's event type, or none: 404, nothing deleted.
  EXPECT_EQ(Call("DELETE", path, other_key_).status, 404);
  EXPECT_EQ(Call("DELETE", "/v2/event-types/999999/webhooks", owner_key_).status, 404);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhooks"), 4);

  HttpResult r = Call("DELETE", path, owner_key_);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json(), (json{{"status", "success"}, {"data", "2 webhooks deleted"}}));
  EXPECT_TRUE(Call("GET", path, owner_key_).Json()["data"].empty());
  HttpResult deep_list = Call("GET", "/v2/event-types/" + std::to_string(deep) + "/webhooks", owner_key_);
  ASSERT_EQ(deep_list.Json()["data"].size(), 1u) << deep_list.body;
  EXPECT_EQ(deep_list.Json()["data"][0]["id"], kept);
  EXPECT_EQ(Call("GET", "/v2/webhooks/" + std::to_string(own), owner_key_).status, 200);
  EXPECT_EQ(Call("DELETE", path, owner_key_).Json()["data"], "0 webhooks deleted");
}

TEST_F(WebhooksClients, TimezonesListTheServersZones) {
  HttpResult r = Call("GET", "/v2/timezones", "");
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = r.Json();
  EXPECT_EQ(j["status"], "success");
  ASSERT_TRUE(j["data"].is_array());
  EXPECT_GT(j["data"].size(), 300u);
  std::set<std::string> zones;
  for (const json& z : j["data"]) {
    ASSERT_TRUE(z["city"].is_string() && z["timezone"].is_string() && z["pop"].is_number()) << z.dump();
    zones.insert(z["timezone"].get<std::string>());
    EXPECT_EQ(z["timezone"].get<std::string>().rfind("Etc/", 0), std::string::npos) << z.dump();
  }
  EXPECT_EQ(zones.size(), j["data"].size());  // no zone twice
  bool found = false;
  for (const json& z : j["data"]) {
    if (z["timezone"] == "America/New_York") {
      EXPECT_EQ(z["city"], "New York");
      found = true;
    }
  }
  EXPECT_TRUE(found);
  // Every zone listed is one a user may pick.
  for (const char* zone : {"America/Argentina/Buenos_Aires", "Europe/Berlin", "Pacific/Auckland"}) {
    ASSERT_TRUE(zones.count(zone)) << zone;
    HttpResult me = Call("PATCH", "/v2/me", owner_key_, json{{"timeZone", zone}});
    EXPECT_EQ(me.status, 200) << me.body;
  }
}

}  // namespace
}  // namespace rendezvous::testing
