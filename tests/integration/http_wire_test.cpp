// RFC 9112 framing of the real binary on raw sockets: pipelining, an oversized body with a request
// hidden in it, garbage, an unknown content type.
#include <string>

#include <gtest/gtest.h>

#include "api_user_fixture.hpp"
#include "raw_http.hpp"

namespace rendezvous::testing {
namespace {

using rdv_test::Conn;
using rdv_test::RequestText;
using namespace std::chrono_literals;

class HttpWireTest : public ApiUserTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartServer({}, "Ada"));
    port_ = static_cast<uint16_t>(server_->api_port());
  }
  std::string Auth() const { return "Authorization: Bearer " + key_; }
  std::string Name() {
    auto r = rdv_test::Fetch(port_, "GET", "/v2/me", {Auth()});
    return r ? r->Json()["data"].value("name", "") : "";
  }

  uint16_t port_ = 0;
};

TEST_F(HttpWireTest, FourPipelinedRequestsGetFourAnswersInOrder) {
  Conn c(port_);
  ASSERT_TRUE(c.Send(RequestText("GET", "/v2/me", {Auth()}) + RequestText("GET", "/healthz") +
                     RequestText("GET", "/v2/me", {Auth(), "X-Request-Id: third"}) + RequestText("GET", "/readyz")));
  auto me = c.Read();
  ASSERT_TRUE(me);
  EXPECT_EQ(me->Json()["data"]["email"], "ada@example.com");
  auto health = c.Read();
  ASSERT_TRUE(health);
  EXPECT_EQ(health->Json()["status"], "ok");
  auto third = c.Read();
  ASSERT_TRUE(third);
  EXPECT_EQ(third->Header("x-request-id"), "third");
  EXPECT_EQ(third->Json()["data"]["id"], user_);
  auto ready = c.Read();
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);
  EXPECT_EQ(ready->Json()["status"], "ok");
}

TEST_F(HttpWireTest, OversizedBodyWithAHiddenRequestIsOne413AndNeverExecuted) {
  // max_body_bytes is 1 MiB by default: declare 2 MiB; a complete PATCH hides past the first 300 KB.
  std::string hidden = RequestText("PATCH", "/v2/me", {Auth(), "Content-Type: application/json"}, R"({"name":"Hacked"})");
  std::string body = std::string(300 * 1024, ' ') + hidden;
  Conn c(port_);
  ASSERT_TRUE(c.Send("POST /v2/verified-resources/emails/verification-code/request HTTP/1.1\r\nHost: x\r\n" + Auth() +
                     "\r\nContent-Type: application/json\r\nContent-Length: 2097152\r\n\r\n"));
  auto r = c.Read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(r->Header("content-type"), "application/json");
  EXPECT_EQ(r->Json()["error"]["code"], "payload_too_large");
  EXPECT_FALSE(r->Header("x-request-id").empty());
  c.Send(body);
  EXPECT_TRUE(c.AwaitClose(10s));
  EXPECT_FALSE(c.Read(false, 100ms));
  EXPECT_EQ(Name(), "Ada");
  EXPECT_TRUE(server_->AwaitLog("\"status\":413"));
}

TEST_F(HttpWireTest, GarbageIsAJson400AndTheConnectionCloses) {
  Conn c(port_);
  ASSERT_TRUE(c.Send("THIS IS NOT HTTP\r\n"));
  auto r = c.Read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->Json()["status"], "error");
  EXPECT_EQ(r->Header("connection"), "close");
  EXPECT_TRUE(c.AwaitClose(5s));
}

TEST_F(HttpWireTest, UnknownContentTypeIsAJson415) {
  auto r = rdv_test::Fetch(port_, "PATCH", "/v2/me", {Auth(), "Content-Type: foo", "Accept: */weird"}, R"({"name":"X"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 415);
  EXPECT_EQ(r->Json()["error"]["code"], "unsupported_media_type");
  EXPECT_FALSE(r->Header("x-request-id").empty());
  EXPECT_EQ(Name(), "Ada");
}

}  // namespace
}  // namespace rendezvous::testing
