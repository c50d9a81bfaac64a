#include "notify/outbox_delivery.hpp"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/registry.h>

namespace rendezvous::core {
namespace {

prometheus::Family<prometheus::Counter>& SentFamily(const OutboxDelivery::Channel& channel,
                                                    prometheus::Registry& registry) {
  return prometheus::BuildCounter().Name(channel.metric).Help(channel.help).Register(registry);
}

}  // namespace

OutboxDelivery::OutboxDelivery(const Channel& channel, std::string log_file, Outbox& outbox,
                               prometheus::Registry& registry, Logger& logger)
    : logger_(logger),
      sent_(SentFamily(channel, registry).Add({{"result", "sent"}})),
      logged_(SentFamily(channel, registry).Add({{"result", "logged"}})),
      failed_(SentFamily(channel, registry).Add({{"result", "failed"}})),
      channel_(channel),
      outbox_(outbox),
      log_(std::move(log_file), channel.log_name) {}

void OutboxDelivery::Register() {
  outbox_.Subscribe(channel_.consumer, {channel_.topic},
                    [this](DbConnection& tx, const std::vector<OutboxEvent>& batch) {
                      for (const OutboxEvent& event : batch) {
                        HandleEvent(event);
                        // Messages carry verification codes: once handled, the outbox keeps no
                        // readable copy (this commits with the consumer's progress).
                        tx.Exec("UPDATE outbox_events SET payload = ? WHERE id = ?",
                                {Blanked(*event.payload).dump(), event.id});
                      }
                    });
}

nlohmann::json OutboxDelivery::Blanked(const nlohmann::json& payload) {
  nlohmann::json out = nlohmann::json::object();
  if (payload.is_object() && payload.contains("to")) out["to"] = payload["to"];
  out["delivered"] = true;
  return out;
}

void OutboxDelivery::Publish(DbConnection& tx, const nlohmann::json& payload) {
  outbox_.Publish(tx, channel_.topic, channel_.type, payload);
  outbox_.Notify();
}

void OutboxDelivery::Drop(const OutboxEvent& event, const Status& why) {
  failed_.Increment();
  logger_.Error(std::string(channel_.topic) + " dropped", {{"event_id", event.id}, {"error", why.message()}});
}

void OutboxDelivery::AppendToLog(const nlohmann::json& fields) {
  log_.Append(fields);
  logged_.Increment();
}

}  // namespace rendezvous::core
