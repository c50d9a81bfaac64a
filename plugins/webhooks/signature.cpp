#include "signature.hpp"

#include "rendezvous/crypto.hpp"

namespace rendezvous::webhooks {

std::string StandardWebhookSignature(std::string_view secret, std::string_view message_id, int64_t timestamp,
                                     std::string_view body) {
  std::string content;
  content.reserve(message_id.size() + body.size() + 24);
  content.append(message_id).append(".").append(std::to_string(timestamp)).append(".").append(body);
  return "v1," + crypto::Base64Encode(crypto::HmacSha256(secret, content));
}

std::string CalSignature(std::string_view secret, std::string_view body) {
  return crypto::ToHex(crypto::HmacSha256(secret, body));
}

}  // namespace rendezvous::webhooks
