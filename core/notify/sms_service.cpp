#include "notify/sms_service.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <memory>
#include <stdexcept>

#include <prometheus/counter.h>

#include "notify/mail_service.hpp"
#include "rendezvous/outbound.hpp"
#include "rendezvous/text.hpp"

namespace rendezvous::core {
namespace {

constexpr OutboxDelivery::Channel kSmsChannel = {
    "sms",
    "SMS",
    "core.sms",
    "sms_sent_total",
    "Text messages accepted by the SMS gateway (sent), written to the SMS log (logged) or not delivered "
    "(failed: a refused message, or an attempt that is retried)",
    "sms log"};
constexpr size_t kMaxGatewayResponseBytes = 64 * 1024;

}  // namespace

Status ValidateSms(const Sms& sms) {
  if (!IsE164PhoneNumber(sms.to)) {
    return Status(ErrorCode::kInvalid, "sms recipient must be an E.164 phone number, e.g. +15551234567");
  }
  if (sms.text.empty() || sms.text.size() > kMaxSmsTextBytes) {
    return Status(ErrorCode::kInvalid, "sms text must have 1 to 1600 bytes");
  }
  if (!text::IsValidUtf8(sms.text)) return Status(ErrorCode::kInvalid, "sms text is not valid UTF-8");
  return Status::Ok();
}

nlohmann::json SmsGatewayBody(const Sms& sms) {
  return {{"to", sms.to}, {"text", sms.text}};
}

GatewayOutcome ClassifyGatewayStatus(long http_status) {
  if (http_status >= 200 && http_status < 300) return GatewayOutcome::kSent;
  if (http_status == 429 || (http_status >= 500 && http_status < 600)) return GatewayOutcome::kRetry;
  // 0 (no answer) and anything unexpected (1xx, 3xx: redirects are not followed) may be transient.
  if (http_status < 400) return GatewayOutcome::kRetry;
  return GatewayOutcome::kDrop;
}

SmsService::SmsService(SmsOptions options, Outbox& outbox, prometheus::Registry& registry, Logger& logger)
    : OutboxDelivery(kSmsChannel, options.log_file, outbox, registry, logger), options_(std::move(options)) {}

void SmsService::Send(DbConnection& tx, const Sms& sms) {
  if (Status s = ValidateSms(sms); !s.ok()) throw std::invalid_argument(s.message());
  Publish(tx, SmsGatewayBody(sms));
}

void SmsService::HandleEvent(const OutboxEvent& event) {
  const nlohmann::json& p = *event.payload;
  Sms sms;
  bool readable =
      p.is_object() && p.contains("to") && p["to"].is_string() && p.contains("text") && p["text"].is_string();
  if (readable) {
    sms.to = p["to"].get<std::string>();
    sms.text = p["text"].get<std::string>();
  }
  Status valid = readable ? ValidateSms(sms) : Status(ErrorCode::kInvalid, "unreadable payload");
  if (!valid.ok()) {
    Drop(event, valid);
    return;
  }
  Deliver(sms);  // a refusal is logged and counted there; retrying cannot fix it
}

bool SmsService::Deliver(const Sms& sms) {
  if (options_.gateway_url.empty()) {
    AppendToLog({{"to", sms.to}, {"text", sms.text}});
    return true;
  }
  return DeliverGateway(sms);
}

bool SmsService::DeliverGateway(const Sms& sms) {
  net::HttpRequest request;
  request.method = "POST";
  request.url = options_.gateway_url;
  request.body = SmsGatewayBody(sms).dump();
  request.headers = {"Content-Type: application/json", "Accept: application/json"};
  if (!options_.gateway_token.empty())
    request.headers.push_back("Authorization: Bearer " + options_.gateway_token);
  request.connect_timeout = options_.connect_timeout;
  request.timeout = options_.total_timeout;
  // The answer is read whole (the total timeout bounds it); only its first 64 KiB are kept.
  request.max_response_bytes = std::numeric_limits<size_t>::max();
  request.keep_response_bytes = kMaxGatewayResponseBytes;
  request.detailed_error = true;
  const net::HttpResponse response = net::Perform(request);
  if (!response.ok()) {
    failed_.Increment();
    throw std::runtime_error("SMS gateway unreachable: " + response.error);
  }
  const long status = response.status;
  switch (ClassifyGatewayStatus(status)) {
    case GatewayOutcome::kSent:
      sent_.Increment();
      return true;
    case GatewayOutcome::kRetry:
      failed_.Increment();
      throw std::runtime_error("SMS gateway answered HTTP " + std::to_string(status) + "; will retry");
    case GatewayOutcome::kDrop:
      break;
  }
  failed_.Increment();
  logger_.Error("sms refused by the gateway; dropped", {{"http_status", status}});
  return false;
}

}  // namespace rendezvous::core
