// What MailService and SmsService share: publishing a message as an event of its own outbox topic,
// the consumer of that topic that hands each event to the service, the JSON-line log that takes
// the messages when no SMTP server or SMS gateway is configured, and the counters
// <metric>{result="sent"|"logged"|"failed"}.
//
// Thread-safety: Publish(), AppendToLog(), Drop() and the counters may be used from any thread.
// Register() once, before the outbox starts. The service must outlive the outbox loops.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "notify/json_line_log.hpp"
#include "rendezvous/log.hpp"
#include "rendezvous/outbox.hpp"
#include "rendezvous/status.hpp"

namespace prometheus {
class Registry;
class Counter;
}  // namespace prometheus

namespace rendezvous::core {

class OutboxDelivery {
 public:
  // The names that set one kind of message apart.
  struct Channel {
    const char* topic;     // the outbox topic, e.g. "mail"
    const char* type;      // the event type, e.g. "MAIL"
    const char* consumer;  // the outbox consumer, e.g. "core.mail"
    const char* metric;    // the counter family, e.g. "mail_sent_total"
    const char* help;      // its help text
    const char* log_name;  // the log file as error messages name it, e.g. "mail log"
  };

  OutboxDelivery(const OutboxDelivery&) = delete;
  OutboxDelivery& operator=(const OutboxDelivery&) = delete;
  virtual ~OutboxDelivery() = default;

  // Subscribes the consumer. Call once, before the outbox starts. Each event's payload is replaced
  // by Blanked() in the transaction that records it handled, so no message text (a verification
  // code) stays at rest after delivery.
  void Register();
  // What stays of a handled message in the outbox: {"to", "delivered": true}.
  static nlohmann::json Blanked(const nlohmann::json& payload);

 protected:
  // `outbox`, `registry` and `logger` must outlive the service; `log_file` is an absolute path.
  OutboxDelivery(const Channel& channel, std::string log_file, Outbox& outbox, prometheus::Registry& registry,
                 Logger& logger);

  // Publishes `payload` as an event of the channel with `tx` and wakes the consumer.
  void Publish(DbConnection& tx, const nlohmann::json& payload);

  // Delivers the message of one event; called for each event of a batch, in order.
  virtual void HandleEvent(const OutboxEvent& event) = 0;

  // Counts and logs an event whose message cannot be sent: retrying cannot fix it, and skipping
  // keeps the messages behind it moving.
  void Drop(const OutboxEvent& event, const Status& why);

  // Appends `fields` to the log file and counts the message as logged. Throws std::runtime_error
  // when the file cannot be written.
  void AppendToLog(const nlohmann::json& fields);

  Logger& logger_;
  prometheus::Counter& sent_;
  prometheus::Counter& logged_;
  prometheus::Counter& failed_;

 private:
  const Channel channel_;
  Outbox& outbox_;
  JsonLineLog log_;
};

}  // namespace rendezvous::core
