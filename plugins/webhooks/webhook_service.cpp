#include "webhook_service.hpp"

#include "address_guard.hpp"
#include "rendezvous/crypto.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::webhooks {
namespace {

// The ping's body (DESIGN §6): a test booking an hour from now, organized by the webhook's owner.
std::string PingBody(const std::optional<User>& owner) {
  const int64_t now = time::Now();
  const int64_t start = (now / 60000 + 60) * 60000;
  Json organizer = owner
                       ? Json{{"name", owner->name}, {"email", owner->email}, {"timeZone", owner->time_zone}}
                       : Json::object();
  return Json{{"triggerEvent", "PING"},
              {"createdAt", time::FormatIso(now)},
              {"payload",
               {{"type", "Test"},
                {"title", "Test trigger event"},
                {"startTime", time::FormatIso(start)},
                {"endTime", time::FormatIso(start + 30 * 60000)},
                {"organizer", std::move(organizer)},
                {"attendees", Json::array()}}}}
      .dump();
}

}  // namespace

Status WebhookService::CheckAddress(const WebhookFields& fields) const {
  if (!fields.subscriber || options_.allow_private_networks) return Status::Ok();
  Result<std::string> address = CheckedAddress(*fields.subscriber, false);
  return address.ok() ? Status::Ok() : address.status();
}

Result<Webhook> WebhookService::Create(int64_t user_id, Level level, const WebhookFields& fields) {
  if (Status s = CheckAddress(fields); !s.ok()) return s;
  return webhooks_.Create(user_id, level, fields);
}

Result<Webhook> WebhookService::Update(int64_t user_id, Level level, int64_t id,
                                       const WebhookFields& fields) {
  if (Status s = CheckAddress(fields); !s.ok()) return s;
  return webhooks_.Update(user_id, level, id, fields);
}

Result<Json> WebhookService::Retry(int64_t user_id, int64_t webhook_id, int64_t delivery_id) {
  Result<Json> out = deliveries_.Retry(db_, user_id, webhook_id, delivery_id);
  if (out.ok() && options_.wake_sender) options_.wake_sender();
  return out;
}

Result<PingResult> WebhookService::Ping(int64_t user_id, int64_t webhook_id) {
  Result<Webhook> w = webhooks_.Get(user_id, webhook_id);
  if (!w.ok()) return w.status();
  const std::string body = PingBody(users_.FindUser(w->user_id));
  const std::string message_id = "msg_" + crypto::RandomToken(18);
  const Attempt a = SendNow(*w, message_id, body, "application/json", options_.send);
  deliveries_.RecordPing(db_, w->id, message_id, body, a);
  return PingResult{a.error.empty(), a.status_code, a.duration_ms, a.error};
}

}  // namespace rendezvous::webhooks
