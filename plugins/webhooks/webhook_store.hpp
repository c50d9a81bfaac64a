// Webhook subscriptions (spec §2.4, §4.6, §4.7; DESIGN §6, §9): create, update, get, list and
// delete for their owner, and the look-ups the delivery engine makes. Holds no mutable state of
// its own: thread-safe. Each call is one transaction or statement and may throw
// DatabaseUnavailable.
//
// Table `webhooks` (owned by this plugin), one row per subscription. The secret is answered in
// responses (spec §6 rule 3), so it is kept encrypted (AES-256-GCM with the server's encryption
// key), not hashed. One user cannot hold two webhooks with the same subscriberUrl: a unique key
// on (user, SHA-256 of the URL) makes racing creates answer 409 too. A rotation keeps the old
// secret, encrypted the same way, beside the new one until its grace ends; read after that it is
// absent, and the sender's housekeeping erases it (ForgetExpiredSecrets).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rendezvous/database.hpp"
#include "rendezvous/status.hpp"
#include "webhook_fields.hpp"

namespace rendezvous::webhooks {

inline constexpr int64_t kMaxWebhooksPerUser = 100;

struct Webhook {
  int64_t id = 0;
  int64_t user_id = 0;
  std::string subscriber_url;
  bool active = true;
  std::vector<std::string> triggers;
  std::optional<std::string> payload_template;
  std::optional<std::string> secret;  // decrypted
  std::optional<std::string> previous_secret;  // decrypted; signs too until a rotation's grace ends
  bool secret_unreadable = false;     // stored, but the current key cannot decrypt it

  bool Subscribes(const std::string& trigger) const;
};

// The API's view: {payloadTemplate, triggers, userId, id, subscriberUrl, active, secret}.
Json WebhookJson(const Webhook& webhook);

class WebhookStore {
 public:
  // `encryption_key`: raw 32 bytes; empty means a secret cannot be stored (503 when one is given).
  WebhookStore(Database& db, std::string encryption_key);

  // 409 for a second webhook of the user with the same subscriberUrl, or past kMaxWebhooksPerUser.
  Result<Webhook> Create(int64_t user_id, const WebhookFields& fields);
  // Applies the fields given. Another user's webhook, or none: 404.
  Result<Webhook> Update(int64_t user_id, int64_t id, const WebhookFields& fields);
  Result<Webhook> Get(int64_t user_id, int64_t id);
  // Oldest first: the page and the total.
  std::pair<std::vector<Webhook>, int64_t> List(int64_t user_id, int64_t skip, int64_t take);
  // Deletes the webhook and its delivery log; answers it as it was.
  Result<Webhook> Delete(int64_t user_id, int64_t id);
  // A new random secret; the current one keeps signing for `grace_seconds` more (0: not at all).
  // Another user's webhook, or none: 404.
  Result<Webhook> RotateSecret(int64_t user_id, int64_t id, int64_t grace_seconds);
  // Erases the old secrets whose grace has ended. Returns how many.
  size_t ForgetExpiredSecrets(DbConnection& conn);

  // For the delivery engine, on the caller's connection: the active webhooks of `user_id`, without
  // their secrets (the enqueue never signs); one webhook by id whoever owns it, secrets decrypted;
  // and 410's effect.
  std::vector<Webhook> Active(DbConnection& conn, int64_t user_id);
  std::optional<Webhook> Load(DbConnection& conn, int64_t id, bool for_update = false);
  void Deactivate(DbConnection& conn, int64_t id);

 private:
  Webhook FromRow(const DbRow& row) const;
  Result<std::optional<std::string>> Encrypt(const std::optional<std::string>& secret) const;

  Database& db_;
  std::string key_;
};

}  // namespace rendezvous::webhooks
