// The core's outgoing SMS (interface: notify/sms_sender.hpp), modelled on MailService.
//
// Send() checks the message and publishes it as an outbox event (topic "sms", type "SMS") with the
// caller's transaction. The outbox consumer "core.sms" delivers the events:
//   - with `sms.gateway_url` set: `POST gateway_url`, Content-Type application/json, body
//     {"to":"+15551234567","text":"..."}, `Authorization: Bearer <gateway_token>` when a token is
//     configured. libcurl, http/https only, redirects not followed, connect timeout 10 s, whole
//     exchange 15 s, response body read up to 64 KiB. 2xx: sent. A timeout, a connection error,
//     429 or 5xx throws, so the outbox rolls the batch back and retries it later with its backoff;
//     any other answer (4xx: the gateway refuses this message) is logged, counted and dropped, so
//     one bad message cannot block those behind it.
//   - otherwise one JSON line per message, {"at","to","text"}, appended to `log_file`
//     (development and tests; the folder is created when missing).
// The text is never logged elsewhere (it carries verification codes); log lines name the event id
// and the HTTP status only. Delivery is at least once.
//
// Metric: sms_sent_total{result="sent"|"logged"|"failed"}.
//
// Thread-safety: Send() and Deliver() may be called from any thread. Register() once, before the
// outbox starts. The service must outlive the outbox loops (stop the outbox first).
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "notify/outbox_delivery.hpp"
#include "notify/sms_sender.hpp"
#include "rendezvous/log.hpp"
#include "rendezvous/outbox.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::core {

struct SmsOptions {
  std::string gateway_url;    // "" = write the SMS log instead
  std::string gateway_token;  // "" = no Authorization header; never logged
  std::string log_file;       // absolute path
  std::chrono::seconds connect_timeout{10};
  std::chrono::seconds total_timeout{15};
};

// kInvalid unless `to` is E.164 and `text` is 1..1600 bytes of valid UTF-8.
Status ValidateSms(const Sms& sms);

// The gateway request body: {"to":..,"text":..}.
nlohmann::json SmsGatewayBody(const Sms& sms);

// How a gateway's HTTP answer is handled: 2xx kSent, 429 and 5xx kRetry, anything else kDrop.
enum class GatewayOutcome { kSent, kRetry, kDrop };
GatewayOutcome ClassifyGatewayStatus(long http_status);

// Register() (from OutboxDelivery) subscribes the consumer "core.sms".
class SmsService final : public SmsSender, public OutboxDelivery {
 public:
  // `outbox`, `registry` and `logger` must outlive the service.
  SmsService(SmsOptions options, Outbox& outbox, prometheus::Registry& registry, Logger& logger);

  // Publishes the message with `tx`. Throws std::invalid_argument when ValidateSms refuses it.
  void Send(DbConnection& tx, const Sms& sms) override;

  // Delivers one message now (gateway or log file). Returns false when the gateway refused it for
  // good (logged, counted); throws std::runtime_error for a failure worth retrying.
  bool Deliver(const Sms& sms);

 private:
  void HandleEvent(const OutboxEvent& event) override;
  bool DeliverGateway(const Sms& sms);

  const SmsOptions options_;
};

}  // namespace rendezvous::core
