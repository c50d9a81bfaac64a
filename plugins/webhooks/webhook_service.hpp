// What a person or an API client can do with their webhooks (DESIGN §4, §6, §9): the one service
// layer behind the webhook API (webhook_routes) and the webhook pages (webhook_pages). It adds to
// the store and the delivery log what both callers need alike: the subscriber address check on
// create and update, waking the sender after a manual retry, and the ping.
//
// Holds no mutable state of its own: thread-safe. Calls may throw DatabaseUnavailable; Create,
// Update (with a new URL) and Ping wait on the network (DNS, the receiver).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "delivery_queue.hpp"
#include "delivery_sender.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/user.hpp"
#include "webhook_fields.hpp"
#include "webhook_store.hpp"

namespace rendezvous::webhooks {

struct ServiceOptions {
  bool allow_private_networks = false;  // subscriber URLs may resolve to private addresses
  SenderOptions send;                   // how a ping is sent: the deliveries' rules
  std::function<void()> wake_sender;    // a manual retry made a delivery due (may be empty)
};

// What a ping did (DESIGN §6's answer).
struct PingResult {
  bool ok = false;
  long status_code = 0;  // 0: no answer
  int64_t duration_ms = 0;
  std::string error;  // "" when the receiver answered 2xx
};

class WebhookService {
 public:
  // Every reference must outlive the service.
  WebhookService(Database& db, WebhookStore& webhooks, DeliveryQueue& deliveries, UserDirectory& users,
                 ServiceOptions options)
      : db_(db), webhooks_(webhooks), deliveries_(deliveries), users_(users), options_(std::move(options)) {}

  using Level = WebhookStore::Level;

  // WebhookStore's calls, with the subscriber URL's host checked against the address rules
  // (400 on subscriberUrl) before anything is written.
  Result<Webhook> Create(int64_t user_id, Level level, const WebhookFields& fields);
  Result<Webhook> Update(int64_t user_id, Level level, int64_t id, const WebhookFields& fields);
  Result<Webhook> Get(int64_t user_id, Level level, int64_t id) { return webhooks_.Get(user_id, level, id); }
  Result<Webhook> Get(int64_t user_id, int64_t id) { return webhooks_.Get(user_id, id); }
  Result<std::pair<std::vector<Webhook>, int64_t>> List(int64_t user_id, Level level, int64_t skip,
                                                        int64_t take) {
    return webhooks_.List(user_id, level, skip, take);
  }
  Result<Webhook> Delete(int64_t user_id, Level level, int64_t id) {
    return webhooks_.Delete(user_id, level, id);
  }
  Result<int64_t> DeleteAll(int64_t user_id, Level level) { return webhooks_.DeleteAll(user_id, level); }
  Result<std::vector<Webhook>> ListOfClients(int64_t user_id, int64_t take) {
    return webhooks_.ListOfClients(user_id, take);
  }

  // The delivery log of one of the user's webhooks, newest first, with the total (DESIGN §9's
  // shape); 404 for another user's webhook.
  Result<std::pair<Json, int64_t>> Deliveries(int64_t user_id, int64_t webhook_id, int64_t skip,
                                              int64_t take) {
    return deliveries_.List(db_, user_id, webhook_id, skip, take);
  }
  // A finished delivery due again now (DeliveryQueue::Retry), and the sender woken.
  Result<Json> Retry(int64_t user_id, int64_t webhook_id, int64_t delivery_id);
  // Sends the test event now, signed like a delivery (address rules included), and logs it with
  // trigger PING. 404 for another user's webhook; whatever the receiver answers is a PingResult.
  Result<PingResult> Ping(int64_t user_id, int64_t webhook_id);

 private:
  Status CheckAddress(const WebhookFields& fields) const;

  Database& db_;
  WebhookStore& webhooks_;
  DeliveryQueue& deliveries_;
  UserDirectory& users_;
  const ServiceOptions options_;
};

}  // namespace rendezvous::webhooks
