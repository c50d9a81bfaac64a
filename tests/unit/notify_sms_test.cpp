// The SMS service without a database: E.164 and message checks, the outbox round trip through a
// fake outbox, the SMS log, and delivery to a real HTTP gateway peer on loopback (JSON body,
// Bearer token, retry on 5xx/429/timeouts/redirects, drop on 4xx).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "log/logger.hpp"
#include "loopback_http_server.hpp"
#include "notify/sms_service.hpp"
#include "notify_test_support.hpp"

namespace rendezvous::core {
namespace {

namespace fs = std::filesystem;
using mail_test::FakeOutbox;
using mail_test::NullConnection;
using mail_test::ReadJsonLines;
using mail_test::TempDir;
using SmsUnderTest = mail_test::ServiceUnderTest<SmsService>;
using testing::LoopbackHttpServer;
using testing::PeerRequest;
using testing::PeerResponse;

double Counter(prometheus::Registry& registry, const std::string& result) {
  return mail_test::SentCount(registry, "sms_sent_total", result);
}

Sms GoodSms() {
  return Sms{"+15551234567", "Your code is 123456."};
}

TEST(SmsValidation, E164PhoneNumbers) {
  for (const char* ok : {"+15551234567", "+4930123456", "+6831234", "+123456789012345"}) {
    EXPECT_TRUE(IsE164PhoneNumber(ok)) << ok;
  }
  for (const char* bad :
       {"", "+", "15551234567", "+05551234567", "+155512", "+1234567890123456", "+1 555 123 4567",
        "+1-555-1234567", "+1555123456a", "++15551234567", "+1555\n1234567", "tel:+15551234567"}) {
    EXPECT_FALSE(IsE164PhoneNumber(bad)) << bad;
  }
}

TEST(SmsValidation, MessagesMustBeBoundedUtf8) {
  EXPECT_TRUE(ValidateSms(GoodSms()).ok());
  Sms bad_to = GoodSms();
  bad_to.to = "5551234567";
  EXPECT_EQ(ValidateSms(bad_to).code(), ErrorCode::kInvalid);
  Sms empty = GoodSms();
  empty.text.clear();
  EXPECT_EQ(ValidateSms(empty).code(), ErrorCode::kInvalid);
  Sms big = GoodSms();
  big.text = std::string(kMaxSmsTextBytes + 1, 'x');
  EXPECT_EQ(ValidateSms(big).code(), ErrorCode::kInvalid);
  big.text.pop_back();
  EXPECT_TRUE(ValidateSms(big).ok());
  Sms bad_utf8 = GoodSms();
  bad_utf8.text = "code \xc3\x28";
  EXPECT_EQ(ValidateSms(bad_utf8).code(), ErrorCode::kInvalid);
}

TEST(SmsGateway, BodyAndStatusClassification) {
  EXPECT_EQ(SmsGatewayBody(GoodSms()),
            (nlohmann::json{{"to", "+15551234567"}, {"text", "Your code is 123456."}}));
  EXPECT_EQ(ClassifyGatewayStatus(200), GatewayOutcome::kSent);
  EXPECT_EQ(ClassifyGatewayStatus(202), GatewayOutcome::kSent);
  EXPECT_EQ(ClassifyGatewayStatus(500), GatewayOutcome::kRetry);
  EXPECT_EQ(ClassifyGatewayStatus(503), GatewayOutcome::kRetry);
  EXPECT_EQ(ClassifyGatewayStatus(429), GatewayOutcome::kRetry);
  EXPECT_EQ(ClassifyGatewayStatus(302), GatewayOutcome::kRetry);  // redirects are not followed
  EXPECT_EQ(ClassifyGatewayStatus(0), GatewayOutcome::kRetry);
  EXPECT_EQ(ClassifyGatewayStatus(400), GatewayOutcome::kDrop);
  EXPECT_EQ(ClassifyGatewayStatus(401), GatewayOutcome::kDrop);
  EXPECT_EQ(ClassifyGatewayStatus(422), GatewayOutcome::kDrop);
}

TEST(SmsService, SendPublishesAndTheConsumerWritesTheLog) {
  TempDir dir;
  SmsOptions o;
  o.log_file = dir.path() + "/var/sms.log";  // the folder does not exist yet
  SmsUnderTest t(o);
  SmsService& sms = t.service;
  FakeOutbox& outbox = t.outbox;
  sms.Register();
  EXPECT_EQ(outbox.consumer, "core.sms");
  EXPECT_EQ(outbox.topics, std::vector<std::string>{"sms"});

  NullConnection tx;
  sms.Send(tx, GoodSms());
  EXPECT_THROW(sms.Send(tx, Sms{"+1 555", "x"}), std::invalid_argument);
  ASSERT_EQ(outbox.events.size(), 1u);
  EXPECT_EQ(outbox.events[0].topic, "sms");
  EXPECT_EQ(outbox.events[0].type, "SMS");

  OutboxEvent poisoned;
  poisoned.id = 99;
  poisoned.payload =
      std::make_shared<const nlohmann::json>(nlohmann::json{{"to", "not a number"}, {"text", "t"}});
  outbox.handler(tx, {poisoned, outbox.events[0]});
  auto lines = ReadJsonLines(o.log_file);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["to"], "+15551234567");
  EXPECT_EQ(lines[0]["text"], "Your code is 123456.");
  EXPECT_TRUE(lines[0]["at"].is_string());
  // Each handled event's outbox copy is blanked in the consumer's transaction: no code at rest.
  ASSERT_EQ(tx.statements.size(), 2u);
  EXPECT_EQ(tx.statements[1], "UPDATE outbox_events SET payload = ? WHERE id = ?");
  EXPECT_EQ(SmsService::Blanked(*outbox.events[0].payload),
            (nlohmann::json{{"to", "+15551234567"}, {"delivered", true}}));
  outbox.handler(tx, {outbox.events[0]});
  EXPECT_EQ(ReadJsonLines(o.log_file).size(), 2u);  // appended
  EXPECT_EQ(Counter(t.registry, "logged"), 2);
  EXPECT_EQ(Counter(t.registry, "failed"), 1);
}

TEST(SmsService, UnwritableLogThrowsSoTheBatchIsRetried) {
  SmsOptions o;
  o.log_file = "/proc/no-such-dir/sms.log";
  SmsUnderTest t(o);
  SmsService& sms = t.service;
  EXPECT_THROW(sms.Deliver(GoodSms()), std::runtime_error);
}

TEST(SmsService, PostsJsonWithTheBearerTokenToTheGateway) {
  std::atomic<int> next_status{200};
  LoopbackHttpServer gateway([&](const PeerRequest&) {
    PeerResponse r;
    r.status = next_status;
    r.body = "{}";
    return r;
  });
  SmsOptions o;
  o.gateway_url = gateway.url() + "/v1/messages?account=7";
  o.gateway_token = "gw-token-123";
  o.log_file = "/proc/no-such-dir/sms.log";  // must not be used
  SmsUnderTest t(o);
  SmsService& sms = t.service;

  EXPECT_TRUE(sms.Deliver(GoodSms()));
  ASSERT_TRUE(gateway.AwaitRequests(1));
  PeerRequest req = gateway.Requests()[0];
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.target, "/v1/messages?account=7");
  EXPECT_EQ(req.Header("authorization"), "Bearer gw-token-123");
  EXPECT_EQ(req.Header("content-type"), "application/json");
  EXPECT_EQ(nlohmann::json::parse(req.body), SmsGatewayBody(GoodSms()));
  EXPECT_EQ(Counter(t.registry, "sent"), 1);

  next_status = 503;
  EXPECT_THROW(sms.Deliver(GoodSms()), std::runtime_error);
  next_status = 429;
  EXPECT_THROW(sms.Deliver(GoodSms()), std::runtime_error);
  next_status = 400;
  EXPECT_FALSE(sms.Deliver(GoodSms()));
  EXPECT_EQ(Counter(t.registry, "failed"), 3);
  EXPECT_EQ(gateway.Requests().size(), 4u);
}

TEST(SmsService, RedirectsAreNotFollowedAndNoTokenMeansNoAuthorization) {
  LoopbackHttpServer gateway([](const PeerRequest& req) {
    PeerResponse r;
    if (req.path == "/send") {
      r.status = 307;
      r.headers.emplace_back("Location", "/elsewhere");
    }
    return r;
  });
  SmsOptions o;
  o.gateway_url = gateway.url() + "/send";
  SmsUnderTest t(o);
  SmsService& sms = t.service;
  EXPECT_THROW(sms.Deliver(GoodSms()), std::runtime_error);
  ASSERT_EQ(gateway.Requests().size(), 1u);
  EXPECT_EQ(gateway.Requests()[0].Header("authorization"), "");
}

TEST(SmsService, UnreachableOrSlowGatewayThrows) {
  LoopbackHttpServer slow([](const PeerRequest&) {
    PeerResponse r;
    r.delay = std::chrono::milliseconds(3000);
    return r;
  });
  SmsOptions o;
  o.gateway_url = slow.url() + "/send";
  o.total_timeout = std::chrono::seconds(1);
  SmsUnderTest sms(o);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(sms.service.Deliver(GoodSms()), std::runtime_error);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2900));

  SmsOptions closed;
  closed.gateway_url = "http://127.0.0.1:1/send";  // nothing listens on port 1
  SmsUnderTest unreachable(closed);
  EXPECT_THROW(unreachable.service.Deliver(GoodSms()), std::runtime_error);
}

}  // namespace
}  // namespace rendezvous::core
