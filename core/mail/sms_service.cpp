#include "mail/sms_service.hpp"
#include "rendezvous/text.hpp"

#include <curl/curl.h>
#include <fcntl.h>
#include <prometheus/counter.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "mail/mail_service.hpp"

namespace rendezvous::core {
namespace {

constexpr OutboxDelivery::Channel kChannel = {
    "sms",
    "SMS",
    "core.sms",
    "sms_sent_total",
    "Text messages accepted by the SMS gateway (sent), written to the SMS log (logged) or not delivered "
    "(failed: a refused message, or an attempt that is retried)",
    "sms log"};
constexpr size_t kMaxGatewayResponseBytes = 64 * 1024;

// Keeps at most kMaxGatewayResponseBytes of the answer; the rest is read and discarded so the
// exchange completes, and the total timeout bounds it.
size_t CollectResponse(char* data, size_t size, size_t count, void* user) {
  auto* out = static_cast<std::string*>(user);
  const size_t n = size * count;
  if (out->size() < kMaxGatewayResponseBytes)
    out->append(data, std::min(n, kMaxGatewayResponseBytes - out->size()));
  return n;
}

std::once_flag curl_once;

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
    : OutboxDelivery(kChannel, options.log_file, outbox, registry, logger), options_(std::move(options)) {
  if (!options_.gateway_url.empty()) {
    std::call_once(curl_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  }
}

void SmsService::Send(DbConnection& tx, const Sms& sms) {
  if (Status s = ValidateSms(sms); !s.ok()) throw std::invalid_argument(s.message());
  Publish(tx, SmsGatewayBody(sms));
}

void SmsService::HandleEvent(const OutboxEvent& event) {
  const nlohmann::json& p = event.payload;
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
  const std::string body = SmsGatewayBody(sms).dump();
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), &curl_easy_cleanup);
  if (!curl) throw std::runtime_error("curl_easy_init failed");
  CURL* c = curl.get();
  curl_slist* raw_headers = curl_slist_append(nullptr, "Content-Type: application/json");
  raw_headers = curl_slist_append(raw_headers, "Accept: application/json");
  const std::string auth = "Authorization: Bearer " + options_.gateway_token;
  if (!options_.gateway_token.empty()) raw_headers = curl_slist_append(raw_headers, auth.c_str());
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(raw_headers, &curl_slist_free_all);
  std::string response;
  char error[CURL_ERROR_SIZE] = {0};

  curl_easy_setopt(c, CURLOPT_URL, options_.gateway_url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &CollectResponse);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &response);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(c, CURLOPT_TIMEOUT, static_cast<long>(options_.total_timeout.count()));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);

  const CURLcode rc = curl_easy_perform(c);
  if (rc != CURLE_OK) {
    failed_.Increment();
    throw std::runtime_error(std::string("SMS gateway unreachable: ") +
                             (error[0] ? error : curl_easy_strerror(rc)));
  }
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
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
