// Delivery signatures (DESIGN §6), keyed with the webhook secret's bytes as given.
// Standard Webhooks: `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`.
// The original service's form: `X-Cal-Signature-256: <hex HMAC-SHA256 of the body>`.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rendezvous::webhooks {

std::string StandardWebhookSignature(std::string_view secret, std::string_view message_id, int64_t timestamp,
                                     std::string_view body);
std::string CalSignature(std::string_view secret, std::string_view body);

}  // namespace rendezvous::webhooks
