#include "webhook_migrations.hpp"

namespace rendezvous::webhooks {
namespace {

constexpr const char* kCreateTable = R"sql(CREATE TABLE webhooks (
  id BIGINT NOT NULL AUTO_INCREMENT,
  user_id BIGINT NOT NULL,
  subscriber_url VARCHAR(2048) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  url_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  active TINYINT(1) NOT NULL,
  triggers TEXT NOT NULL,
  payload_template MEDIUMTEXT NULL,
  secret_encrypted TEXT NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_webhooks_user_url (user_id, url_hash),
  KEY ix_webhooks_user_active (user_id, active)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci)sql";

constexpr const char* kCreateDeliveries = R"sql(CREATE TABLE webhook_deliveries (
  id BIGINT NOT NULL AUTO_INCREMENT,
  webhook_id BIGINT NOT NULL,
  event_id BIGINT NOT NULL,
  trigger_event VARCHAR(64) CHARACTER SET ascii NOT NULL,
  message_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  body MEDIUMTEXT NOT NULL,
  content_type VARCHAR(64) CHARACTER SET ascii NOT NULL,
  status VARCHAR(16) CHARACTER SET ascii NOT NULL,
  round_attempts INT NOT NULL DEFAULT 0,
  next_attempt_at DATETIME(3) NOT NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_webhook_deliveries_event (webhook_id, event_id),
  UNIQUE KEY uq_webhook_deliveries_message (message_id),
  KEY ix_webhook_deliveries_due (status, next_attempt_at),
  CONSTRAINT fk_webhook_deliveries_webhook FOREIGN KEY (webhook_id) REFERENCES webhooks (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci)sql";

constexpr const char* kCreateAttempts = R"sql(CREATE TABLE webhook_delivery_attempts (
  id BIGINT NOT NULL AUTO_INCREMENT,
  delivery_id BIGINT NOT NULL,
  at DATETIME(3) NOT NULL,
  status_code INT NULL,
  duration_ms BIGINT NOT NULL,
  error VARCHAR(512) NULL,
  response TEXT NULL,
  PRIMARY KEY (id),
  KEY ix_webhook_delivery_attempts_delivery (delivery_id, id),
  CONSTRAINT fk_webhook_delivery_attempts_delivery FOREIGN KEY (delivery_id)
    REFERENCES webhook_deliveries (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci)sql";

// What the sender needs to judge webhooks and measure latency; the purge's index.
constexpr const char* kDeliveryTracking =
    R"sql(ALTER TABLE webhooks ADD COLUMN failing_since DATETIME(3) NULL;
ALTER TABLE webhook_deliveries ADD COLUMN event_at DATETIME(3) NULL, ADD COLUMN delivered_at DATETIME(3) NULL,
  ADD KEY ix_webhook_deliveries_finished (status, updated_at))sql";

// A ping is logged without an event.
constexpr const char* kEventless = "ALTER TABLE webhook_deliveries MODIFY event_id BIGINT NULL";

// The secret a rotation replaced, and until when it still signs.
constexpr const char* kPreviousSecret =
    R"sql(ALTER TABLE webhooks ADD COLUMN previous_secret_encrypted TEXT NULL,
  ADD COLUMN previous_secret_expires_at DATETIME(3) NULL, ADD KEY ix_webhooks_previous_secret (previous_secret_expires_at))sql";

// Recover's walk through one webhook's deliveries by creation time. Both columns are written once,
// so the sender's updates never touch this index.
constexpr const char* kByWebhook =
    "ALTER TABLE webhook_deliveries ADD KEY ix_webhook_deliveries_webhook_created (webhook_id, created_at)";

// Event-type webhooks: the event type a webhook belongs to (NULL: the user's own), and the one
// URL per level rule over both levels (a unique key treats NULLs as distinct, hence the 0).
constexpr const char* kEventTypes =
    R"sql(ALTER TABLE webhooks ADD COLUMN IF NOT EXISTS event_type_id BIGINT NULL AFTER user_id,
  ADD COLUMN IF NOT EXISTS event_type_key BIGINT AS (COALESCE(event_type_id, 0)) STORED,
  ADD KEY IF NOT EXISTS ix_webhooks_event_type_active (event_type_id, active);
ALTER TABLE webhooks DROP KEY IF EXISTS uq_webhooks_user_url,
  ADD UNIQUE KEY IF NOT EXISTS uq_webhooks_user_level_url (user_id, event_type_key, url_hash))sql";

// The sender's lease in a column of its own, out of every index: a claim used to push the row's
// due time past the send, moving its entry in ix_webhook_deliveries_due, so every claim walked the
// deleted entries of the rows claimed before it until InnoDB purged them. Finished rows are purged
// through ix_webhook_deliveries_due too (a finished row's next_attempt_at is when it finished, as
// its updated_at), so the index on (status, updated_at), moved by every outcome, goes.
constexpr const char* kLeases =
    "ALTER TABLE webhook_deliveries ADD COLUMN leased_until DATETIME(3) NULL, DROP KEY "
    "ix_webhook_deliveries_finished";

// The sender's writes in place. InnoDB rewrites a row in place only when no field it changes
// changes size; otherwise it deletes and re-inserts the whole record (the body with it) and logs
// it whole. So the status is a fixed-size CHAR, and "no lease" and "never delivered" are a time
// long past (RDV_LONG_AGO in delivery_queue.hpp) rather than NULL. The webhook-id's unique key
// goes: it is never looked up, and an id is 144 random bits (its index was a random insert per
// row).
constexpr const char* kInPlace =
    R"sql(UPDATE webhook_deliveries SET leased_until = '1970-01-01 00:00:00' WHERE leased_until IS NULL;
UPDATE webhook_deliveries SET delivered_at = '1970-01-01 00:00:00' WHERE delivered_at IS NULL;
ALTER TABLE webhook_deliveries MODIFY status CHAR(9) CHARACTER SET ascii NOT NULL,
  MODIFY leased_until DATETIME(3) NOT NULL DEFAULT '1970-01-01 00:00:00',
  MODIFY delivered_at DATETIME(3) NOT NULL DEFAULT '1970-01-01 00:00:00',
  DROP KEY uq_webhook_deliveries_message)sql";

// A delivery whose body is its event's text as the outbox keeps it refers to the event instead of
// copying it: a NULL body (DeliveryQueue::Enqueue).
constexpr const char* kReferredBodies = "ALTER TABLE webhook_deliveries MODIFY body MEDIUMTEXT NULL";

// OAuth-client webhooks (DESIGN §10): the client a webhook belongs to (NULL: not a client's; its
// user_id is then the client's owner), and the one URL per level rule over the three levels (''
// in the unique key for the levels that are not a client's, as 0 for the event type).
constexpr const char* kClients =
    R"sql(ALTER TABLE webhooks ADD COLUMN IF NOT EXISTS client_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL
    AFTER event_type_id,
  ADD COLUMN IF NOT EXISTS client_key VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin AS (COALESCE(client_id, ''))
    STORED,
  ADD KEY IF NOT EXISTS ix_webhooks_client_active (client_id, active);
ALTER TABLE webhooks DROP KEY IF EXISTS uq_webhooks_user_level_url,
  ADD UNIQUE KEY IF NOT EXISTS uq_webhooks_level_url (user_id, event_type_key, client_key, url_hash))sql";

}  // namespace

std::vector<Migration> WebhookMigrations() {
  return {{1, "webhooks", kCreateTable},
          {2, "webhook_deliveries", kCreateDeliveries},
          {3, "webhook_delivery_attempts", kCreateAttempts},
          {4, "webhook_delivery_tracking", kDeliveryTracking},
          {5, "webhook_deliveries_eventless", kEventless},
          {6, "webhooks_previous_secret", kPreviousSecret},
          {7, "webhook_deliveries_by_webhook", kByWebhook},
          {8, "webhooks_event_types", kEventTypes},
          {9, "webhook_deliveries_leases", kLeases},
          {10, "webhook_deliveries_in_place", kInPlace},
          {11, "webhook_deliveries_referred_bodies", kReferredBodies},
          {12, "webhooks_oauth_clients", kClients}};
}

}  // namespace rendezvous::webhooks
