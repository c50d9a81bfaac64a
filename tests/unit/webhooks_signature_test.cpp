// Signature values against a vector computed independently (Python's hmac/base64 and
// `openssl dgst -sha256 -hmac`), not with the code under test.
#include <gtest/gtest.h>

#include "signature.hpp"

namespace rendezvous::webhooks {
namespace {

constexpr const char* kSecret = "whsec_test-secret";
constexpr const char* kId = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W";
constexpr const char* kBody = R"({"triggerEvent":"BOOKING_CONFIRMED"})";

TEST(WebhooksSignature, StandardWebhooksMatchesKnownVector) {
  EXPECT_EQ(StandardWebhookSignature(kSecret, kId, 1700000000, kBody),
            "v1,mTfanBZ6RcbwFyVQZxbhX/uCuhLs3K4gHqfCClAV+Z4=");
}

TEST(WebhooksSignature, CalSignatureMatchesKnownVector) {
  EXPECT_EQ(CalSignature(kSecret, kBody), "f5658c6fcdb2579fcdead643b5080b55ef562ff05855c993f3fbb6b0fca32cf8");
}

TEST(WebhooksSignature, EveryInputChangesTheSignature) {
  const std::string base = StandardWebhookSignature(kSecret, kId, 1700000000, kBody);
  EXPECT_NE(StandardWebhookSignature("other", kId, 1700000000, kBody), base);
  EXPECT_NE(StandardWebhookSignature(kSecret, "msg_other", 1700000000, kBody), base);
  EXPECT_NE(StandardWebhookSignature(kSecret, kId, 1700000001, kBody), base);
  EXPECT_NE(StandardWebhookSignature(kSecret, kId, 1700000000, "{}"), base);
}

}  // namespace
}  // namespace rendezvous::webhooks
