// Webhook subscriptions (spec §2.4, §4.6, §4.7; DESIGN §6, §9): create, update, get, list and
// delete for their owner, and the look-ups the delivery engine makes. Holds no mutable state of
// its own: thread-safe. Each call is one transaction or statement and may throw
// DatabaseUnavailable.
//
// Table `webhooks` (owned by this plugin), one row per subscription. The secret is answered in
// responses (spec §6 rule 3), so it is kept encrypted (AES-256-GCM with the server's encryption
// key), not hashed. A rotation keeps the old secret, encrypted the same way, beside the new one
// until its grace ends; read after that it is absent, and the sender's housekeeping erases it
// (ForgetExpiredSecrets).
//
// A webhook belongs to a user and has a level: the user's own (it gets the events of all the
// user's bookings), one of the user's event types (`event_type_id`: it gets the events of that
// event type's bookings only), or one of the user's OAuth clients (`client_id`, DESIGN §10: it gets
// the events of the bookings of every user that client manages; its user is the client's owner).
// The levels are one model, one table and one delivery path. One level cannot hold two webhooks
// with the same subscriberUrl: a unique key on (user, event type or 0, client or '', SHA-256 of the
// URL) makes racing creates answer 409 too. The per-user limit counts every level of the user.
// Event types are the bookings plugin's (EventTypeDirectory): without it, no event type exists
// and every event-type call answers 404. Clients are authenticated by the caller (the routes);
// the store only keeps their webhooks apart.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rendezvous/contracts/event_types.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/status.hpp"
#include "webhook_fields.hpp"

namespace rendezvous::webhooks {

inline constexpr int64_t kMaxWebhooksPerUser = 100;

struct Webhook {
  int64_t id = 0;
  int64_t user_id = 0;
  std::optional<int64_t> event_type_id;  // set for an event type's webhook
  std::optional<std::string> client_id;  // set for an OAuth client's webhook
  std::string subscriber_url;
  bool active = true;
  std::vector<std::string> triggers;
  std::optional<std::string> payload_template;
  std::optional<std::string> secret;  // decrypted
  std::optional<std::string> previous_secret;  // decrypted; signs too until a rotation's grace ends
  bool secret_unreadable = false;     // stored, but the current key cannot decrypt it

  bool Subscribes(const std::string& trigger) const;
};

// The API's view: {payloadTemplate, triggers, userId, id, subscriberUrl, active, secret}, and
// eventTypeId for an event type's webhook, oAuthClientId for a client's.
Json WebhookJson(const Webhook& webhook);

// A level of one user's webhooks: the user's own (neither set), one of the user's event types, or
// one of the user's OAuth clients.
struct WebhookLevel {
  std::optional<int64_t> event_type_id;
  std::optional<std::string> client_id;

  static WebhookLevel Own() { return {}; }
  static WebhookLevel EventType(int64_t id) { return {id, std::nullopt}; }
  static WebhookLevel Client(std::string id) { return {std::nullopt, std::move(id)}; }
  // The level `webhook` is of.
  static WebhookLevel Of(const Webhook& webhook) { return {webhook.event_type_id, webhook.client_id}; }
  bool Holds(const Webhook& webhook) const {
    return webhook.event_type_id == event_type_id && webhook.client_id == client_id;
  }
};

class WebhookStore {
 public:
  // `encryption_key`: raw 32 bytes; empty means a secret cannot be stored (503 when one is given).
  WebhookStore(Database& db, std::string encryption_key);

  // Where the event types are; absent until set (no event type exists). Set it before requests
  // are served (the plugin's Start); not thread-safe against the calls below.
  void AttachEventTypes(std::shared_ptr<EventTypeDirectory> event_types) {
    event_types_ = std::move(event_types);
  }

  // The calls taking a level answer 404 for another user's event type, or none, and for a webhook
  // of another level or user. A client's level is taken as the user's (the caller authenticated
  // the client and passes its owner).
  using Level = WebhookLevel;

  // 409 for a second webhook of the level with the same subscriberUrl, or past kMaxWebhooksPerUser
  // (every level counted). The event type is share-locked until the webhook is written, so it is
  // not deleted in between.
  Result<Webhook> Create(int64_t user_id, Level level, const WebhookFields& fields);
  // Applies the fields given.
  Result<Webhook> Update(int64_t user_id, Level level, int64_t id, const WebhookFields& fields);
  Result<Webhook> Get(int64_t user_id, Level level, int64_t id);
  // Oldest first: the page and the total.
  Result<std::pair<std::vector<Webhook>, int64_t>> List(int64_t user_id, Level level, int64_t skip,
                                                        int64_t take);
  // Deletes the webhook and its delivery log; answers it as it was.
  Result<Webhook> Delete(int64_t user_id, Level level, int64_t id);
  // Deletes every webhook of an event type's or a client's level, with their delivery logs (the
  // user's own level: 400). Returns how many.
  Result<int64_t> DeleteAll(int64_t user_id, Level level);
  // The webhooks of all the user's OAuth clients, oldest first (at most `take`): the pages' view.
  Result<std::vector<Webhook>> ListOfClients(int64_t user_id, int64_t take);
  // One of the user's webhooks, whatever its level (the delivery log, retry, ping, rotation and
  // recovery serve both). Another user's webhook, or none: 404.
  Result<Webhook> Get(int64_t user_id, int64_t id);
  // An event type is being deleted (inside its transaction): its webhooks go, with their delivery
  // logs. Returns how many.
  size_t DeleteOfEventType(DbConnection& tx, int64_t event_type_id);
  // A new random secret; the current one keeps signing for `grace_seconds` more (0: not at all).
  // Another user's webhook, or none: 404.
  Result<Webhook> RotateSecret(int64_t user_id, int64_t id, int64_t grace_seconds);
  // Erases the old secrets whose grace has ended. Returns how many.
  size_t ForgetExpiredSecrets(DbConnection& conn);

  // For the delivery engine, on the caller's connection: the active webhooks a booking's event
  // goes to, in one query, without their secrets (the enqueue never signs): the organizer's own,
  // those of the booking's event type (when it has one) and those of the client managing the
  // organizer (when one does), ordered by id; one webhook by id whoever owns it, secrets
  // decrypted; and 410's effect.
  std::vector<Webhook> Active(DbConnection& conn, int64_t user_id,
                              std::optional<int64_t> event_type_id = std::nullopt,
                              const std::optional<std::string>& client_id = std::nullopt);
  std::optional<Webhook> Load(DbConnection& conn, int64_t id, bool for_update = false);
  void Deactivate(DbConnection& conn, int64_t id);

 private:
  Webhook FromRow(const DbRow& row) const;
  // Ok when the level is the user's own, one of the user's event types or a client's; else 404.
  Status CheckLevel(DbConnection& conn, int64_t user_id, Level level, bool lock) const;
  Result<std::optional<std::string>> Encrypt(const std::optional<std::string>& secret) const;

  Database& db_;
  std::string key_;
  std::shared_ptr<EventTypeDirectory> event_types_;
};

}  // namespace rendezvous::webhooks
