// Verified e-mails and phone numbers (/v2/verified-resources/...) against the real binary, the
// test MariaDB, the mail log and a real SMS gateway peer on loopback: request -> code delivered ->
// verify -> list/get; wrong, dead, expired and replaced codes; the request rate limit; other
// users' resources; scopes and bearer kinds; bad bodies that store nothing.
#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "eventually.hpp"
#include "http_client.hpp"
#include "loopback_http_server.hpp"
#include "oauth_support.hpp"
#include "scratch_db.hpp"
#include "test_server.hpp"

namespace rendezvous::testing {
namespace {

using nlohmann::json;

constexpr const char* kEmails = "/v2/verified-resources/emails";
constexpr const char* kPhones = "/v2/verified-resources/phones";
constexpr const char* kGatewayToken = "gw-secret-token-1234";

// Six digits from a message text ("" when none).
std::string CodeIn(const std::string& text) {
  std::smatch m;
  static const std::regex kCode("\\b([0-9]{6})\\b");
  return std::regex_search(text, m, kCode) ? m[1].str() : "";
}

// Another well-formed code than `code`.
std::string OtherCode(const std::string& code) {
  return code == "000000" ? "111111" : "000000";
}

class VerifiedResources : public ::testing::Test {
 protected:
  void SetUp() override {
    gateway_ = std::make_unique<LoopbackHttpServer>([this](const PeerRequest&) {
      PeerResponse r;
      if (gateway_failures_.load() > 0) {
        --gateway_failures_;
        r.status = 503;
        r.body = "{\"error\":\"busy\"}";
      } else {
        r.body = "{\"id\":\"msg-1\"}";
      }
      return r;
    });
    TestServerOptions o;
    o.top_extra =
        "mail:\n  log_file: \"var/test-mail.log\"\n"
        "sms:\n  gateway_url: \"" +
        gateway_->url() +
        "/v1/sms?account=test\"\n"
        "  gateway_token: \"" +
        kGatewayToken + "\"\n";
    server_ = std::make_unique<TestServer>(db_.name(), o);
    server_->Migrate();
    ada_ = server_->CreateUser("ada@example.com", "Ada Lovelace");
    bob_ = server_->CreateUser("bob@example.com", "Bob");
    ada_key_ = server_->CreateApiKey(ada_);
    bob_key_ = server_->CreateApiKey(bob_);
    std::string why;
    ASSERT_TRUE(server_->Start(&why)) << why;
  }

  static std::vector<std::string> Bearer(const std::string& token) {
    return {"Authorization: Bearer " + token, "Content-Type: application/json"};
  }
  HttpResult Post(const std::string& path, const json& body, const std::string& token) {
    return http_.Request("POST", server_->api() + path, body.dump(), Bearer(token));
  }
  HttpResult Get(const std::string& path, const std::string& token) {
    return http_.Get(server_->api() + path, {"Authorization: Bearer " + token});
  }
  HttpResult RequestEmail(const std::string& email, const std::string& token) {
    return Post(std::string(kEmails) + "/verification-code/request", {{"email", email}}, token);
  }
  HttpResult VerifyEmail(const std::string& email, const std::string& code, const std::string& token) {
    return Post(std::string(kEmails) + "/verification-code/verify", {{"email", email}, {"code", code}},
                token);
  }

  std::string MailLog() const { return server_->dir() + "/var/test-mail.log"; }
  std::vector<json> Mails(const std::string& to) const {
    std::vector<json> out;
    std::ifstream in(MailLog());
    for (std::string line; std::getline(in, line);) {
      json j = json::parse(line, nullptr, false);
      if (j.is_object() && j.value("to", "") == to) out.push_back(j);
    }
    return out;
  }
  // Waits (bounded) for the `n`th mail to `to` and returns the code in it.
  std::string AwaitCode(const std::string& to, size_t n = 1) const {
    std::vector<json> mails;
    if (Eventually("mail #" + std::to_string(n) + " to " + to, {std::chrono::seconds(15)}, [&] {
          mails = Mails(to);
          return mails.size() >= n;
        })) {
      return CodeIn(mails[n - 1].value("text", ""));
    }
    ADD_FAILURE() << "no mail #" << n << " to " << to << "; server log:\n" << server_->Log();
    return "";
  }
  std::string Count(const std::string& table) const {
    return db_.QueryValue("SELECT COUNT(*) FROM " + table);
  }

  ScratchDatabase db_;
  std::atomic<int> gateway_failures_{0};
  std::unique_ptr<LoopbackHttpServer> gateway_;
  std::unique_ptr<TestServer> server_;
  HttpClient http_;
  int64_t ada_ = 0;
  int64_t bob_ = 0;
  std::string ada_key_;
  std::string bob_key_;
};

TEST_F(VerifiedResources, EmailRequestVerifyListGet) {
  HttpResult req = RequestEmail("  Ada.Work@Example.COM ", ada_key_);
  ASSERT_EQ(req.status, 200) << req.body;
  EXPECT_EQ(req.Json()["status"], "success");
  EXPECT_EQ(req.Json()["data"]["email"], "ada.work@example.com");
  const std::string code = AwaitCode("ada.work@example.com");
  ASSERT_EQ(code.size(), 6u);
  json mail = Mails("ada.work@example.com")[0];
  EXPECT_EQ(mail["subject"], "Your verification code");

  // Only a hash is stored, bound to the target.
  const std::string stored =
      db_.QueryValue("SELECT code_hash FROM verification_codes WHERE user_id = " + std::to_string(ada_) +
                     " AND kind = 'email'");
  EXPECT_EQ(stored.size(), 64u);
  EXPECT_EQ(stored.find(code), std::string::npos);
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM verification_codes WHERE code_hash = '" + code + "'"), "0");
  EXPECT_EQ(Count("verified_emails"), "0");  // not verified before the code comes back

  HttpResult v = VerifyEmail("ada.work@example.com", code, ada_key_);
  ASSERT_EQ(v.status, 200) << v.body;
  json e = v.Json()["data"];
  EXPECT_TRUE(e["id"].is_number_integer());
  EXPECT_EQ(e["email"], "ada.work@example.com");
  EXPECT_EQ(e["userId"], ada_);
  EXPECT_TRUE(
      std::regex_match(e["createdAt"].get<std::string>(),
                       std::regex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z")))
      << e.dump();
  EXPECT_EQ(e.size(), 4u) << e.dump();

  // Idempotent: the same code again answers the same verified e-mail.
  HttpResult again = VerifyEmail("ADA.WORK@example.com", code, ada_key_);
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.Json()["data"], e);
  EXPECT_EQ(Count("verified_emails"), "1");

  HttpResult list = Get(kEmails, ada_key_);
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(list.Json()["data"], json::array({e}));
  EXPECT_EQ(list.Json()["pagination"], (json{{"total", 1}, {"skip", 0}, {"take", 100}}));
  HttpResult page2 = Get(std::string(kEmails) + "?skip=1&take=5", ada_key_);
  ASSERT_EQ(page2.status, 200) << page2.body;
  EXPECT_EQ(page2.Json()["data"], json::array());
  EXPECT_EQ(page2.Json()["pagination"], (json{{"total", 1}, {"skip", 1}, {"take", 5}}));

  const std::string one = std::string(kEmails) + "/" + std::to_string(e["id"].get<int64_t>());
  HttpResult got = Get(one, ada_key_);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.Json()["data"], e);

  // Another user's: 404, and not in their list.
  EXPECT_EQ(Get(one, bob_key_).status, 404);
  EXPECT_EQ(Get(kEmails, bob_key_).Json()["data"], json::array());
  EXPECT_EQ(Get(std::string(kEmails) + "/999999", ada_key_).status, 404);
  EXPECT_EQ(Get(std::string(kEmails) + "/abc", ada_key_).status, 404);
  // Bob cannot use Ada's code for the same address: codes are per user.
  EXPECT_EQ(VerifyEmail("ada.work@example.com", code, bob_key_).status, 400);

  // The code reaches the mail log only: the outbox copy of the mail is blanked once delivered.
  EXPECT_EQ(server_->Log().find(code), std::string::npos);
  std::string left;
  EXPECT_TRUE(Eventually("the outbox copy of the mail blanked", {std::chrono::seconds(10)},
                         [&] {
                           left = db_.QueryValue(
                               "SELECT COUNT(*) FROM outbox_events WHERE topic = 'mail' AND payload LIKE '%" +
                               code + "%'");
                           return left == "0";
                         }))
      << left << " copies left";
  EXPECT_NE(db_.QueryValue("SELECT payload FROM outbox_events WHERE topic = 'mail' ORDER BY id DESC LIMIT 1")
                .find("\"delivered\":true"),
            std::string::npos);
}

TEST_F(VerifiedResources, WrongCodesThenTheCodeIsDeadUntilANewRequest) {
  ASSERT_EQ(RequestEmail("ada@lab.example", ada_key_).status, 200);
  const std::string code = AwaitCode("ada@lab.example");
  ASSERT_EQ(code.size(), 6u);
  const std::string wrong = OtherCode(code);
  for (int i = 1; i <= 5; ++i) {
    HttpResult r = VerifyEmail("ada@lab.example", wrong, ada_key_);
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(r.Json()["error"]["code"], "invalid_verification_code");
    EXPECT_EQ(r.Json()["error"]["details"]["field"], "code");
    EXPECT_EQ(r.Json()["error"]["details"]["attemptsLeft"], 5 - i);
  }
  HttpResult dead = VerifyEmail("ada@lab.example", code, ada_key_);
  EXPECT_EQ(dead.status, 429) << dead.body;
  EXPECT_EQ(dead.Json()["error"]["code"], "verification_code_locked");
  EXPECT_NE(dead.Json()["error"]["message"].get<std::string>().find("request a new one"), std::string::npos);
  EXPECT_EQ(Count("verified_emails"), "0");

  // A new request replaces the dead code; the old one stays refused.
  ASSERT_EQ(RequestEmail("ada@lab.example", ada_key_).status, 200);
  const std::string fresh = AwaitCode("ada@lab.example", 2);
  ASSERT_EQ(fresh.size(), 6u);
  EXPECT_EQ(db_.QueryValue("SELECT attempts FROM verification_codes WHERE kind = 'email'"), "0");
  if (fresh != code) {
    EXPECT_EQ(VerifyEmail("ada@lab.example", code, ada_key_).status, 400);
  }
  HttpResult ok = VerifyEmail("ada@lab.example", fresh, ada_key_);
  EXPECT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(Count("verified_emails"), "1");
}

TEST_F(VerifiedResources, ExpiredUnrequestedAndReplacedCodes) {
  HttpResult none = VerifyEmail("never@example.com", "123456", ada_key_);
  EXPECT_EQ(none.status, 400);
  EXPECT_EQ(none.Json()["error"]["code"], "invalid_verification_code");

  ASSERT_EQ(RequestEmail("old@example.com", ada_key_).status, 200);
  const std::string code = AwaitCode("old@example.com");
  ASSERT_EQ(code.size(), 6u);
  db_.Exec("UPDATE verification_codes SET expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND");
  HttpResult expired = VerifyEmail("old@example.com", code, ada_key_);
  EXPECT_EQ(expired.status, 400) << expired.body;
  EXPECT_EQ(expired.Json()["error"]["code"], "verification_code_expired");
  EXPECT_EQ(Count("verified_emails"), "0");

  // Two requests: only the second code works.
  ASSERT_EQ(RequestEmail("new@example.com", ada_key_).status, 200);
  const std::string first = AwaitCode("new@example.com", 1);
  ASSERT_EQ(RequestEmail("new@example.com", ada_key_).status, 200);
  const std::string second = AwaitCode("new@example.com", 2);
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM verification_codes WHERE target = 'new@example.com'"), "1");
  if (first != second) {
    HttpResult stale = VerifyEmail("new@example.com", first, ada_key_);
    EXPECT_EQ(stale.status, 400) << stale.body;
    EXPECT_EQ(stale.Json()["error"]["code"], "invalid_verification_code");
  }
  EXPECT_EQ(VerifyEmail("new@example.com", second, ada_key_).status, 200);
}

TEST_F(VerifiedResources, FiveRequestsPerTargetPerHourThen429) {
  for (int i = 0; i < 5; ++i) {
    HttpResult r = RequestEmail("limit@example.com", ada_key_);
    ASSERT_EQ(r.status, 200) << i << " " << r.body;
  }
  HttpResult limited = RequestEmail("limit@example.com", ada_key_);
  ASSERT_EQ(limited.status, 429) << limited.body;
  EXPECT_EQ(limited.Json()["error"]["code"], "rate_limited");
  const std::string retry = limited.Header("retry-after");
  ASSERT_FALSE(retry.empty());
  const int seconds = std::stoi(retry);
  EXPECT_GT(seconds, 3000);
  EXPECT_LE(seconds, 3600);
  EXPECT_EQ(limited.Json()["error"]["details"]["retryAfter"], seconds);
  // The refused request stored nothing and sent nothing.
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM verification_requests WHERE target = 'limit@example.com'"),
            "5");
  AwaitCode("limit@example.com", 5);
  EXPECT_EQ(Mails("limit@example.com").size(), 5u);
  // Other targets and other users have their own budgets.
  EXPECT_EQ(RequestEmail("other@example.com", ada_key_).status, 200);
  EXPECT_EQ(RequestEmail("limit@example.com", bob_key_).status, 200);
  // Once the window has passed (the log rows aged in the database), requests are allowed again.
  db_.Exec("UPDATE verification_requests SET requested_at = requested_at - INTERVAL 2 HOUR");
  EXPECT_EQ(RequestEmail("limit@example.com", ada_key_).status, 200);
}

TEST_F(VerifiedResources, TwentyRequestsPerUserAndKindPerHour) {
  for (int i = 0; i < 20; ++i) {
    HttpResult r = RequestEmail("t" + std::to_string(i) + "@example.com", ada_key_);
    ASSERT_EQ(r.status, 200) << i << " " << r.body;
  }
  HttpResult limited = RequestEmail("t20@example.com", ada_key_);
  ASSERT_EQ(limited.status, 429) << limited.body;
  EXPECT_EQ(limited.Json()["error"]["code"], "rate_limited");
  EXPECT_FALSE(limited.Header("retry-after").empty());
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM verification_codes WHERE target = 't20@example.com'"), "0");
  // Phones have their own budget, and so has every other user.
  EXPECT_EQ(Post(std::string(kPhones) + "/verification-code/request", {{"phone", "+4930123456"}}, ada_key_).status,
            200);
  EXPECT_EQ(RequestEmail("t20@example.com", bob_key_).status, 200);
}

TEST_F(VerifiedResources, PhoneCodesGoThroughTheSmsGatewayWhichIsRetried) {
  gateway_failures_ = 1;  // the first delivery attempt answers 503
  HttpResult req =
      Post(std::string(kPhones) + "/verification-code/request", {{"phone", "+15551234567"}}, ada_key_);
  ASSERT_EQ(req.status, 200) << req.body;
  EXPECT_EQ(req.Json()["data"]["phone"], "+15551234567");
  ASSERT_TRUE(gateway_->AwaitRequests(2, std::chrono::seconds(20))) << server_->Log();
  auto seen = gateway_->Requests();
  for (const PeerRequest& r : seen) {
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.path, "/v1/sms");
    EXPECT_EQ(r.Query("account"), "test");
    EXPECT_EQ(r.Header("authorization"), std::string("Bearer ") + kGatewayToken);
    EXPECT_EQ(r.Header("content-type"), "application/json");
  }
  EXPECT_EQ(seen[0].body, seen[1].body);  // the retry carries the same message
  json body = json::parse(seen[1].body, nullptr, false);
  ASSERT_TRUE(body.is_object()) << seen[1].body;
  EXPECT_EQ(body.size(), 2u);
  EXPECT_EQ(body["to"], "+15551234567");
  const std::string code = CodeIn(body["text"].get<std::string>());
  ASSERT_EQ(code.size(), 6u) << body.dump();

  HttpResult wrong = Post(std::string(kPhones) + "/verification-code/verify",
                          {{"phone", "+15551234567"}, {"code", OtherCode(code)}}, ada_key_);
  EXPECT_EQ(wrong.status, 400);
  EXPECT_EQ(wrong.Json()["error"]["code"], "invalid_verification_code");
  HttpResult v = Post(std::string(kPhones) + "/verification-code/verify",
                      {{"phone", "+15551234567"}, {"code", code}}, ada_key_);
  ASSERT_EQ(v.status, 200) << v.body;
  json p = v.Json()["data"];
  EXPECT_EQ(p["phone"], "+15551234567");
  EXPECT_EQ(p["userId"], ada_);
  EXPECT_TRUE(p["id"].is_number_integer());
  EXPECT_TRUE(p["createdAt"].is_string());
  EXPECT_EQ(p.size(), 4u);

  HttpResult list = Get(kPhones, ada_key_);
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.Json()["data"], json::array({p}));
  EXPECT_EQ(list.Json()["pagination"]["total"], 1);
  const std::string one = std::string(kPhones) + "/" + std::to_string(p["id"].get<int64_t>());
  EXPECT_EQ(Get(one, ada_key_).Json()["data"], p);
  EXPECT_EQ(Get(one, bob_key_).status, 404);
  // An e-mail id is not a phone id.
  EXPECT_EQ(Get(std::string(kEmails) + "/" + std::to_string(p["id"].get<int64_t>()), ada_key_).status, 404);

  // Not E.164: 400 naming the field, nothing stored, nothing sent.
  for (const json& bad :
       {json("5551234567"), json("+1 555 123 4567"), json("+0123456789"), json(15551234567LL)}) {
    HttpResult r = Post(std::string(kPhones) + "/verification-code/request", {{"phone", bad}}, ada_key_);
    EXPECT_EQ(r.status, 400) << bad.dump() << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], "phone") << r.body;
  }
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM verification_codes WHERE kind = 'phone'"), "1");
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM verification_requests WHERE kind = 'phone'"), "1");
  EXPECT_EQ(server_->Log().find(code), std::string::npos);
}

TEST_F(VerifiedResources, ScopesAndBearerKinds) {
  const int64_t owner = server_->CreateUser("owner@example.com", "Owner");
  OAuthGrant narrow = GrantOAuthToken(*server_, db_, owner, ada_,
                                      {"PROFILE_READ", "VERIFIED_RESOURCES_WRITE"}, {"PROFILE_READ"});
  ASSERT_FALSE(narrow.access_token.empty());
  const std::vector<std::pair<std::string, std::string>> routes = {
      {"POST", std::string(kEmails) + "/verification-code/request"},
      {"POST", std::string(kEmails) + "/verification-code/verify"},
      {"GET", kEmails},
      {"GET", std::string(kEmails) + "/1"},
      {"POST", std::string(kPhones) + "/verification-code/request"},
      {"POST", std::string(kPhones) + "/verification-code/verify"},
      {"GET", kPhones},
      {"GET", std::string(kPhones) + "/1"},
  };
  for (const auto& [method, path] : routes) {
    HttpResult r = http_.Request(method, server_->api() + path, method == "POST" ? "{}" : "",
                                 Bearer(narrow.access_token));
    EXPECT_EQ(r.status, 403) << method << " " << path << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["code"], "insufficient_scope") << r.body;
    EXPECT_NE(r.body.find("VERIFIED_RESOURCES_WRITE"), std::string::npos) << r.body;
    HttpResult anon = http_.Request(method, server_->api() + path, method == "POST" ? "{}" : "",
                                    {"Content-Type: application/json"});
    EXPECT_EQ(anon.status, 401) << method << " " << path;
  }
  EXPECT_EQ(Count("verification_codes"), "0");

  OAuthGrant scoped =
      GrantOAuthToken(*server_, db_, owner, ada_, {"VERIFIED_RESOURCES_WRITE"}, {"VERIFIED_RESOURCES_WRITE"});
  ASSERT_FALSE(scoped.access_token.empty());
  HttpResult ok = RequestEmail("scoped@example.com", scoped.access_token);
  EXPECT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(Get(kEmails, scoped.access_token).status, 200);
  const std::string code = AwaitCode("scoped@example.com");
  HttpResult v = VerifyEmail("scoped@example.com", code, scoped.access_token);
  ASSERT_EQ(v.status, 200) << v.body;
  EXPECT_EQ(v.Json()["data"]["userId"], ada_);  // the token's user

  OAuthGrant legacy = GrantOAuthToken(*server_, db_, owner, ada_, {}, {});
  ASSERT_FALSE(legacy.access_token.empty());
  EXPECT_EQ(Get(kEmails, legacy.access_token).status, 200);
  EXPECT_EQ(RequestEmail("legacy@example.com", legacy.access_token).status, 200);

  CliResult m = server_->Cli({"admin", "managed-user", "create", "--client-id", scoped.client_id, "--email",
                              "managed@example.com", "--name", "Managed"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const std::string managed = m.Json().value("access_token", "");
  ASSERT_FALSE(managed.empty());
  // A managed user's token acts as that user, with its client's scopes.
  EXPECT_EQ(Get(kEmails, managed).status, 200);
  EXPECT_EQ(RequestEmail("managed-alt@example.com", managed).status, 200);
  EXPECT_EQ(db_.QueryValue("SELECT user_id FROM verification_codes WHERE target = 'managed-alt@example.com'"),
            std::to_string(m.Json()["id"].get<int64_t>()));
}

TEST_F(VerifiedResources, BadBodiesAndQueriesStoreNothing) {
  const std::string url = server_->api() + kEmails + "/verification-code/request";
  const std::string verify = server_->api() + kEmails + "/verification-code/verify";
  auto auth = [&](const std::string& content_type) {
    return std::vector<std::string>{"Authorization: Bearer " + ada_key_, "Content-Type: " + content_type};
  };
  EXPECT_EQ(http_.Request("POST", url, "email=a@b.c", auth("application/x-www-form-urlencoded")).status, 415);
  EXPECT_EQ(http_.Request("POST", url, "{\"email\":", auth("application/json")).status, 400);
  EXPECT_EQ(http_.Request("POST", url, "[\"a@b.c\"]", auth("application/json")).status, 400);
  for (const json& body :
       {json::object(), json{{"email", 42}}, json{{"email", nullptr}}, json{{"email", "nope"}},
        json{{"email", "a@b.c\r\nBcc: victim@example.com"}}, json{{"email", "Ada <a@b.c>"}},
        json{{"email", std::string(400, 'a') + "@example.com"}}}) {
    HttpResult r = http_.Request("POST", url, body.dump(), auth("application/json"));
    EXPECT_EQ(r.status, 400) << body.dump() << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], "email") << r.body;
  }
  for (const json& body :
       {json{{"email", "a@b.c"}}, json{{"email", "a@b.c"}, {"code", "12345"}},
        json{{"email", "a@b.c"}, {"code", 123456}}, json{{"email", "a@b.c"}, {"code", "12345a"}}}) {
    HttpResult r = http_.Request("POST", verify, body.dump(), auth("application/json"));
    EXPECT_EQ(r.status, 400) << body.dump() << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], "code") << r.body;
  }
  EXPECT_EQ(Count("verification_codes"), "0");
  EXPECT_EQ(Count("verification_requests"), "0");
  EXPECT_EQ(Count("verified_emails"), "0");
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM outbox_events"), "0");

  for (const char* q : {"?take=0", "?take=251", "?take=x", "?skip=-1", "?skip=1.5", "?skip=99999999999"}) {
    HttpResult r = Get(std::string(kEmails) + q, ada_key_);
    EXPECT_EQ(r.status, 400) << q << " " << r.body;
  }
  EXPECT_EQ(Get(std::string(kEmails) + "?take=250", ada_key_).status, 200);
}

}  // namespace
}  // namespace rendezvous::testing
