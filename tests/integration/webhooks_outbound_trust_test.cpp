// One trust setting for every outbound TLS connection: a webhook receiver whose certificate comes
// from a private CA gets its ping and its deliveries once that CA is configured (`outbound.ca_file`)
// or named by SSL_CERT_FILE in the server's environment, and neither without it. The receiver is a
// real HTTPS peer on loopback (tls_peer.hpp), its certificate its own CA.
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "ca_file_in_environment.hpp"
#include "tls_peer.hpp"
#include "webhooks_fixture.hpp"

namespace rendezvous::testing {
namespace {

class WebhooksOutboundTrust : public WebhooksFixture {
 protected:
  // The receiver's paths, from its connection threads.
  std::vector<std::string> Seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }
  TlsHandler Recorder() {
    return [this](const std::string&, const std::string& target, const std::string&) {
      std::lock_guard lock(mu_);
      seen_.push_back(target);
      return TlsPeer::Answer(200, "pong");
    };
  }

  // Pings the webhook; its answer's data.
  json Ping(int64_t webhook) {
    HttpResult r =
        Call("POST", "/v2/webhooks/" + std::to_string(webhook) + "/ping", owner_key_, std::string("{}"));
    EXPECT_EQ(r.status, 200) << r.body;
    return r.Json()["data"];
  }

  // A webhook to `receiver`, pinged, then one booking's delivery awaited: both arrive.
  void ExpectPingAndDeliveryArrive(const TlsPeer& receiver) {
    const int64_t webhook = CreateWebhook(Body(receiver.url() + "/hook"))["id"];
    const json ping = Ping(webhook);
    EXPECT_EQ(ping["ok"], true) << ping.dump();
    EXPECT_EQ(ping["statusCode"], 200) << ping.dump();
    ConfirmNewBooking();
    // The ping is logged as a delivery too: the booking's is the second.
    json log;
    EXPECT_TRUE(Eventually("the booking's delivery succeeded", [&] {
      log = Deliveries(webhook);
      return log.is_array() && log.size() == 2 && log[0]["status"] == "succeeded";
    })) << log.dump();
    EXPECT_EQ(log[0]["attempts"][0]["statusCode"], 200) << log.dump();
    EXPECT_EQ(Seen().size(), 2u);
  }

  // The same without the CA: the ping fails on the certificate, the delivery too (retried, then
  // failed), and the receiver's handler never sees a request.
  void ExpectPingAndDeliveryRefused(const TlsPeer& receiver) {
    const int64_t webhook = CreateWebhook(Body(receiver.url() + "/hook"))["id"];
    const json ping = Ping(webhook);
    EXPECT_EQ(ping["ok"], false) << ping.dump();
    EXPECT_TRUE(ping["statusCode"].is_null()) << ping.dump();
    EXPECT_NE(ping["error"].get<std::string>().find("certificate"), std::string::npos) << ping.dump();
    ConfirmNewBooking();
    const json delivery = AwaitDelivery(webhook, "failed", 3);
    for (const json& attempt : delivery["attempts"]) {
      EXPECT_NE(attempt["error"].get<std::string>().find("certificate"), std::string::npos)
          << delivery.dump();
    }
    EXPECT_TRUE(Seen().empty());
  }

  std::mutex mu_;
  std::vector<std::string> seen_;
};

TEST_F(WebhooksOutboundTrust, ConfiguredCaReachesTheReceiverForPingAndDelivery) {
  TlsPeer receiver(Recorder());
  StartServer(kTestPlugins, "outbound:\n  ca_file: \"" + receiver.ca_file() + "\"\n");
  ExpectPingAndDeliveryArrive(receiver);
}

TEST_F(WebhooksOutboundTrust, CaNamedBySslCertFileReachesTheReceiverForPingAndDelivery) {
  TlsPeer receiver(Recorder());
  CaFileInEnvironment trust(receiver.ca_file());
  StartServer();
  ExpectPingAndDeliveryArrive(receiver);
}

TEST_F(WebhooksOutboundTrust, WithoutTheCaNeitherPingNorDeliveryReachesTheReceiver) {
  TlsPeer receiver(Recorder());
  StartServer();
  ExpectPingAndDeliveryRefused(receiver);
}

// The configured file replaces the environment's: another CA configured, SSL_CERT_FILE naming the
// receiver's is not consulted.
TEST_F(WebhooksOutboundTrust, ConfiguredCaReplacesTheEnvironments) {
  TlsPeer receiver(Recorder());
  TlsPeer stranger(
      [](const std::string&, const std::string&, const std::string&) { return TlsPeer::Answer(200, ""); });
  CaFileInEnvironment trust(receiver.ca_file());
  StartServer(kTestPlugins, "outbound:\n  ca_file: \"" + stranger.ca_file() + "\"\n");
  ExpectPingAndDeliveryRefused(receiver);
}

TEST_F(WebhooksOutboundTrust, AnUnreadableCaFileStopsTheStart) {
  StartServer();
  ASSERT_EQ(server_->Stop(), 0);
  std::stringstream config;
  config << std::ifstream(server_->config_path()).rdbuf();
  server_->WriteConfig(config.str() + "\noutbound:\n  ca_file: /nonexistent/ca.pem\n");
  std::string why;
  EXPECT_FALSE(server_->Start(&why));
  EXPECT_NE(why.find("outbound: cannot load the CA certificates from /nonexistent/ca.pem"), std::string::npos)
      << why;
}

}  // namespace
}  // namespace rendezvous::testing
