// The delivery log as a durable queue (DESIGN §6, §9). Tables `webhook_deliveries` (one row per
// event and webhook: no rendered body, but a reference to the event whose text the outbox keeps
// (a NULL body; OutboxPayloads, a claim reads it back; Retry and Recover copy it in), rendered by
// the sender when it sends (content type kRenderAtSend); a `webhook-id` chosen once, the state and
// when it is next due) and `webhook_delivery_attempts` (one row per attempt).
//
// - Enqueue runs inside the outbox consumer's transaction: one row per active webhook of the
//   booking's organizer, of the booking's event type and of the OAuth client managing the organizer
//   (WebhookStore::Active, one query for the three levels) subscribed to the trigger. No script runs there:
//   with a filter script, the rows await it (content type kFilterAtSend, left out of the delivery log) and
//   the sender's render thread runs it, owners in turns, before the first attempt; one it turns down is
//   deleted. Nothing is rendered there either: the rows of one event store at most `max_event_bytes` together
//   (kDeliveryRowBytes a row), so one user's large fan-out costs the consumer a few row inserts
//   and the database a bounded amount. (webhook, event) is unique, so an event handed over twice
//   creates nothing twice, and a committed event always has its rows.
// - Claim takes due rows with FOR UPDATE SKIP LOCKED (instances and senders share the table) and
//   pushes their due time past the send: a lease. It takes each webhook owner's rows up to that
//   owner's room (ClaimShares), so that one user's fan-out cannot fill the sender. A process that dies
//   mid-send leaves the row due again once the lease runs out, sent with the same webhook-id.
// - Record writes the outcomes of a batch of attempts and the rows' next states in one
//   transaction, with what they mean for their webhooks: a success clears the webhook's
//   `failing_since`, a failure sets it if unset, and a webhook whose deliveries have all failed
//   for `disable_after` seconds is set inactive (the caller mails its owner in that transaction).
// - RecordAndClaim does both in one transaction, the sender's round: the finished batch is
//   recorded and the next one leased together, or neither is (a crash or a failed commit leaves
//   the finished rows to their leases, sent again with the same webhook-id).
// - Purge drops finished deliveries older than the retention; Backlog measures what is due.
//
// Holds no mutable state: thread-safe. Calls may throw DatabaseUnavailable.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"
#include "rendezvous/outbox.hpp"
#include "rendezvous/status.hpp"
#include "script_hooks.hpp"
#include "webhook_store.hpp"

namespace rendezvous::webhooks {

inline constexpr size_t kMaxResponseExcerpt = 1024;
// A delivery's content type while its body is still the event's text, rendered by the sender when
// it sends (the webhook's template or the render script, else the text as it is).
inline constexpr const char* kRenderAtSend = "event";
// The same, for a delivery that still awaits the filter script: it does not exist for its owner
// (the delivery log leaves it out) until the filter lets it through, and one the filter turns
// down is deleted. Its first recorded attempt makes it kRenderAtSend.
// "Not leased" and "never delivered" in the lease and delivery columns: a time long past rather than
// NULL, so that leasing a row and recording its outcome rewrite it in place (webhooks migration 10).
#define RDV_LONG_AGO "'1970-01-01 00:00:00'"

inline constexpr const char* kFilterAtSend = "event-filter";
// What one delivery row is charged against its event's max_event_bytes: the row (about 170 bytes)
// and its entries in the table's four indexes (about 30 each), rounded up for the pages' slack.
inline constexpr size_t kDeliveryRowBytes = 512;

struct QueueOptions {
  // What the deliveries of one event may store together (DESIGN §8 plugins.webhooks.max_event_bytes).
  size_t max_event_bytes = 4194304;
  // One delivery's body (DESIGN §8 plugins.webhooks.max_rendered_bytes): a longer rendering is cut
  // on a UTF-8 character boundary.
  size_t max_rendered_bytes = kMaxRenderedBytes;
  Logger* logger = nullptr;  // an event over its cap is logged here (Warn)
  // The OAuth client managing a user, whose webhooks get that user's bookings' events too (may be
  // empty: none is). Called once per organizer and batch, in the consumer's transaction: it must
  // answer from memory after the first call for a user (ClientLink).
  std::function<std::optional<std::string>(int64_t user_id)> managing_client;
};

struct ClaimedDelivery {
  int64_t id = 0;
  std::string message_id;  // the webhook-id header
  std::string trigger;
  std::string body;
  // A body that is its event's text as the outbox keeps it (the row refers to it): the event's id
  // (0 for a body of the row's own), and whether the outbox no longer has it (body empty).
  int64_t event_id = 0;
  bool body_gone = false;
  std::string content_type;
  // The body is the event's text, to be rendered for the webhook when sent (kRenderAtSend).
  bool render = false;
  // It awaits the filter script too (kFilterAtSend; `render` is set as well).
  bool filter = false;
  int round_attempts = 0;                  // attempts since creation or the last manual retry
  int64_t event_at_ms = 0;                 // when the booking event was written (its transaction's time)
  bool delivered_before = false;           // a 2xx was recorded already (a manual retry of a success)
  std::shared_ptr<const Webhook> webhook;  // null when it was deleted meanwhile; one per webhook a claim
};

struct Attempt {
  int64_t at_ms = 0;
  long status_code = 0;  // 0: no answer
  int64_t duration_ms = 0;
  std::string error;     // "" when the receiver answered 2xx
  std::string response;  // the first kMaxResponseExcerpt bytes of the answer
};

// A delivery's next state after an attempt.
struct Outcome {
  // kFilteredOut: the filter script turned it down before its first attempt; the row is deleted
  // (no attempt is written).
  enum Kind { kSucceeded, kRetryLater, kFailed, kFilteredOut } kind = kFailed;
  int64_t retry_in_ms = 0;       // kRetryLater
  bool disable_webhook = false;  // 410 Gone
};

struct RecordedAttempt {
  const ClaimedDelivery* delivery = nullptr;
  Attempt attempt;
  Outcome outcome;
};

// Called inside Record's transaction for each webhook it sets inactive because its deliveries
// kept failing for `disable_after` seconds.
using DisabledHandler = std::function<void(DbConnection& tx, const Webhook& webhook)>;

// A place in the due index's order (due time, then id): a claim may start after it.
struct ClaimCursor {
  int64_t due_ms = 0;  // Unix ms; {0, 0}: from the start
  int64_t id = 0;
};

// How a claim shares itself among webhook owners (users): an owner in `skip_owners` gets nothing
// (the walk passes over their rows: they hold their share already), any other gets at most
// `per_owner` less what `held` says it holds already.
struct ClaimShares {
  std::vector<int64_t> skip_owners;  // sorted
  std::map<int64_t, size_t> held;    // owner -> deliveries the sender holds
  size_t per_owner = SIZE_MAX;
  int64_t until_ms = 0;  // > 0: the walk ends at rows due then (Unix ms)
};

// What one RecordAndClaim did.
struct RecordAndClaimResult {
  std::vector<int64_t> disabled;         // webhooks set inactive for failing (as Record)
  std::vector<ClaimedDelivery> claimed;  // the next batch (as Claim)
  ClaimCursor last;                      // the last of `claimed` in the index's order ({0, 0}: none)
  // What the walk of the due index saw, for the sender's places (DeliverySender::Round):
  bool passed_over = false;                 // due rows were left for later (an owner's share was full)
  std::optional<ClaimCursor> first_passed;  // the first of them
  ClaimCursor walked_to;                    // the last row the walk returned, taken or not ({0, 0}: none)
  bool walk_full = false;                   // it returned `limit` rows (more may be due after walked_to)
  int64_t walk_time_ms = 0;                 // the database's time at the walk (only when owners were skipped)
};

struct Backlog {
  int64_t due = 0;                // pending deliveries whose time has come
  double oldest_age_seconds = 0;  // how long the longest-waiting of them has been due
};

class DeliveryQueue {
 public:
  explicit DeliveryQueue(WebhookStore& webhooks, ScriptHooks hooks = {}, QueueOptions options = {})
      : webhooks_(webhooks), hooks_(std::move(hooks)), options_(options) {}
  // Versions after WebhookStore's.

  // The outbox handler's work (topic "bookings"). Returns the number of deliveries created.
  size_t Enqueue(DbConnection& tx, const std::vector<OutboxEvent>& batch);

  // The hooks the sender renders with.
  const ScriptHooks& hooks() const { return hooks_; }
  // A delivery's body for `webhook` from its event's text (`event`: the text parsed): the render
  // script's answer, else the template rendered, else the text as it is; cut at
  // max_rendered_bytes on a character boundary.
  RenderedBody RenderForSend(const Webhook& webhook, const std::string& text, const Json* event) const;
  // Whether the filter script lets a delivery of `event` (parsed) to `webhook` through: true
  // without one, or when it fails (the built-in behaviour).
  bool FilterForSend(const Webhook& webhook, const Json& event) const;

  // Up to `limit` due deliveries, each leased for `lease_seconds`, none of the webhooks in
  // `skip_webhooks` (their receivers are busy), earliest due first (by due time, then id).
  // `after` starts the walk of the due index just after that place: the rows a sender leased
  // before stay in the index (the lease is a column of its own) and every outcome leaves a deleted
  // entry behind until InnoDB purges it, so a sender that knows nothing is due before a place
  // walks none of the entries of the rows it claimed before (see DeliverySender).
  std::vector<ClaimedDelivery> Claim(Database& db, size_t limit, int64_t lease_seconds,
                                     const std::vector<int64_t>& skip_webhooks = {}, ClaimCursor after = {});
  // Records a batch of attempts (one transaction). Webhooks failing for `disable_after_seconds`
  // are set inactive and handed to `on_disabled`; their ids are returned.
  std::vector<int64_t> Record(Database& db, const std::vector<RecordedAttempt>& attempts,
                              int64_t disable_after_seconds, const DisabledHandler& on_disabled);
  // Record, then Claim, in one transaction. Either part may be empty (no attempts, `limit` 0);
  // with both empty nothing is run.
  RecordAndClaimResult RecordAndClaim(Database& db, const std::vector<RecordedAttempt>& attempts,
                                      int64_t disable_after_seconds, const DisabledHandler& on_disabled,
                                      size_t limit, int64_t lease_seconds,
                                      const std::vector<int64_t>& skip_webhooks = {}, ClaimCursor after = {},
                                      const ClaimShares* shares = nullptr);
  // Deletes up to `limit` succeeded or failed deliveries (with their attempts) last changed more
  // than `retention_seconds` ago. Returns how many.
  size_t Purge(Database& db, int64_t retention_seconds, size_t limit);
  Backlog MeasureBacklog(Database& db);
  // Old secrets past their rotation's grace are erased (WebhookStore::ForgetExpiredSecrets).
  size_t ForgetExpiredSecrets(Database& db);

  // GET /v2/webhooks/:id/deliveries: newest first, with the total; 404 for another user's webhook.
  Result<std::pair<Json, int64_t>> List(Database& db, int64_t user_id, int64_t webhook_id, int64_t skip,
                                        int64_t take);
  // POST .../deliveries/:deliveryId/retry: a finished delivery is due again now, same webhook-id,
  // a fresh schedule. 404 unknown; 409 while pending or when the webhook is inactive.
  Result<Json> Retry(Database& db, int64_t user_id, int64_t webhook_id, int64_t delivery_id);
  // POST .../recover: every failed delivery of the webhook created in [since_ms, until_ms) due
  // again now, same webhook-id, a fresh schedule; in transactions of at most `batch` rows, so the
  // table is never held long. Returns how many. 404 for another user's webhook; 409 when inactive.
  Result<int64_t> Recover(Database& db, int64_t user_id, int64_t webhook_id, int64_t since_ms,
                          int64_t until_ms, int64_t batch = 500);
  // A ping sent already (SendNow): logged as a finished delivery of trigger PING with its attempt.
  void RecordPing(Database& db, int64_t webhook_id, const std::string& message_id, const std::string& body,
                  const Attempt& attempt);

 private:
  std::vector<ClaimedDelivery> ClaimIn(DbConnection& tx, size_t limit, int64_t lease_seconds,
                                       const std::vector<int64_t>& skip_webhooks, ClaimCursor after,
                                       RecordAndClaimResult* walk, const ClaimShares* shares = nullptr);
  std::vector<int64_t> RecordIn(DbConnection& tx, const std::vector<RecordedAttempt>& attempts,
                                int64_t disable_after_seconds, const DisabledHandler& on_disabled);

  WebhookStore& webhooks_;
  const ScriptHooks hooks_;
  const QueueOptions options_;
};

}  // namespace rendezvous::webhooks
