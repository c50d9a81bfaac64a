// The delivery log of the queue (delivery_queue.hpp): its retention, the backlog's measure, the
// list and the retry a webhook's owner asks for, the recovery of a window's failed deliveries, and
// the ping's record.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "delivery_queue.hpp"
#include "rendezvous/outbox.hpp"
#include "rendezvous/text.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::webhooks {
namespace {

std::string IdList(const std::vector<int64_t>& ids) {
  std::string out;
  for (int64_t id : ids) out += (out.empty() ? "" : ",") + std::to_string(id);
  return out;
}

Json AttemptJson(const DbRow& row) {
  Json a = {{"at", time::FormatIso(time::ParseSql(row.String("at")).value_or(0))},
            {"statusCode", row.IsNull("status_code") ? Json() : Json(row.Int("status_code"))},
            {"durationMs", row.Int("duration_ms")},
            {"error", row.IsNull("error") ? Json() : Json(row.String("error"))}};
  a["response"] = row.IsNull("response") ? Json() : Json(row.String("response"));
  return a;
}

// Rows queued again may outlive their events in the outbox, which keeps an event for one life of
// its deliveries (WebhooksPlugin: KeepEvents): those of `ids` that refer to their event's text get
// a copy of it now. One whose event is gone keeps referring to it, and fails when claimed.
void CopyEventTexts(DbConnection& tx, const std::vector<int64_t>& ids) {
  if (ids.empty()) return;
  // The ids come from rows just read, never from outside.
  const std::vector<DbRow> rows = tx.QueryUnprepared(
      "SELECT id, event_id FROM webhook_deliveries WHERE body IS NULL AND event_id IS NOT NULL AND id IN (" +
      IdList(ids) + ")");
  if (rows.empty()) return;
  std::vector<int64_t> events;
  events.reserve(rows.size());
  for (const DbRow& row : rows) events.push_back(row.Int("event_id"));
  const std::unordered_map<int64_t, std::string> texts = OutboxPayloads(tx, events);
  for (const DbRow& row : rows) {
    auto text = texts.find(row.Int("event_id"));
    if (text != texts.end()) {
      tx.Exec("UPDATE webhook_deliveries SET body = ? WHERE id = ?", {text->second, row.Int("id")});
    }
  }
}

}  // namespace

size_t DeliveryQueue::Purge(Database& db, int64_t retention_seconds, size_t limit) {
  return db.Run([&](DbConnection& conn) {
    // Attempts go with their delivery (ON DELETE CASCADE).
    return static_cast<size_t>(
        conn.Exec("DELETE FROM webhook_deliveries WHERE status IN ('succeeded', 'failed')"
                  " AND next_attempt_at < UTC_TIMESTAMP(3) - INTERVAL ? SECOND LIMIT ?",
                  {retention_seconds, static_cast<int64_t>(limit)}));
  });
}

size_t DeliveryQueue::ForgetExpiredSecrets(Database& db) {
  return db.Run([&](DbConnection& conn) { return webhooks_.ForgetExpiredSecrets(conn); });
}

Backlog DeliveryQueue::MeasureBacklog(Database& db) {
  return db.Run([&](DbConnection& conn) {
    Backlog b;
    // From the due index alone: the rows being sent (leased) are counted too, so that no row is
    // read (a lease is not in the index), a few hundred at most beside a backlog worth measuring.
    std::optional<DbRow> row = conn.QueryOne(
        "SELECT COUNT(*) AS n, COALESCE(TIMESTAMPDIFF(MICROSECOND, MIN(next_attempt_at), UTC_TIMESTAMP(3)), "
        "0) AS age_us"
        " FROM webhook_deliveries FORCE INDEX (ix_webhook_deliveries_due)"
        " WHERE status = 'pending' AND next_attempt_at <= UTC_TIMESTAMP(3)");
    if (row) {
      b.due = row->Int("n");
      b.oldest_age_seconds = static_cast<double>(row->Int("age_us")) / 1e6;
    }
    return b;
  });
}

Result<std::pair<Json, int64_t>> DeliveryQueue::List(Database& db, int64_t user_id, int64_t webhook_id,
                                                     int64_t skip, int64_t take) {
  Result<Webhook> w = webhooks_.Get(user_id, webhook_id);
  if (!w.ok()) return w.status();
  return db.Run([&](DbConnection& conn) {
    Json data = Json::array();
    std::vector<int64_t> ids;
    std::map<int64_t, size_t> index;
    for (const DbRow& row : conn.Query(
             "SELECT id, trigger_event, status, message_id FROM webhook_deliveries WHERE webhook_id = ?"
             " AND content_type <> ? ORDER BY id DESC LIMIT ? OFFSET ?",
             {webhook_id, std::string(kFilterAtSend), take, skip})) {
      index[row.Int("id")] = data.size();
      ids.push_back(row.Int("id"));
      data.push_back({{"id", row.Int("id")},
                      {"triggerEvent", row.String("trigger_event")},
                      {"status", row.String("status")},
                      {"webhookId", row.String("message_id")},
                      {"attempts", Json::array()}});
    }
    if (!ids.empty()) {
      // The ids come from the rows just read, never from outside.
      for (const DbRow& row : conn.QueryUnprepared("SELECT delivery_id, at, status_code, duration_ms, error, "
                                                   "response FROM webhook_delivery_attempts"
                                                   " WHERE delivery_id IN (" +
                                                   IdList(ids) + ") ORDER BY id")) {
        data[index[row.Int("delivery_id")]]["attempts"].push_back(AttemptJson(row));
      }
    }
    std::optional<DbRow> count = conn.QueryOne(
        "SELECT COUNT(*) AS n FROM webhook_deliveries WHERE webhook_id = ? AND content_type <> ?",
        {webhook_id, std::string(kFilterAtSend)});
    return std::make_pair(std::move(data), count ? count->Int("n") : int64_t{0});
  });
}

Result<Json> DeliveryQueue::Retry(Database& db, int64_t user_id, int64_t webhook_id, int64_t delivery_id) {
  return db.Transaction([&](DbConnection& tx) -> Result<Json> {
    std::optional<Webhook> w = webhooks_.Load(tx, webhook_id);
    if (!w || w->user_id != user_id) return Status::NotFound("webhook not found");
    std::optional<DbRow> row = tx.QueryOne(
        "SELECT trigger_event, status, message_id, content_type FROM webhook_deliveries"
        " WHERE id = ? AND webhook_id = ? FOR UPDATE",
        {delivery_id, webhook_id});
    // One that awaits the filter script does not exist for its owner yet.
    if (!row || row->String("content_type") == kFilterAtSend) return Status::NotFound("delivery not found");
    if (row->String("status") == "pending") return Status::Conflict("the delivery is still pending");
    if (!w->active) return Status::Conflict("the webhook is inactive: activate it first");
    tx.Exec(
        "UPDATE webhook_deliveries SET status = 'pending', round_attempts = 0, next_attempt_at = "
        "UTC_TIMESTAMP(3),"
        " updated_at = UTC_TIMESTAMP(3), leased_until = " RDV_LONG_AGO " WHERE id = ?",
        {delivery_id});
    CopyEventTexts(tx, {delivery_id});
    return Json{{"id", delivery_id},
                {"triggerEvent", row->String("trigger_event")},
                {"status", "pending"},
                {"webhookId", row->String("message_id")}};
  });
}

Result<int64_t> DeliveryQueue::Recover(Database& db, int64_t user_id, int64_t webhook_id, int64_t since_ms,
                                       int64_t until_ms, int64_t batch) {
  Result<Webhook> w = webhooks_.Get(user_id, webhook_id);
  if (!w.ok()) return w.status();
  if (!w->active) return Status::Conflict("the webhook is inactive: activate it first");
  // A walk through the webhook's deliveries of the window in (created_at, id) order on
  // ix_webhook_deliveries_webhook_created, each batch one short transaction that locks only the
  // rows it queues: the work is the window's rows once, however many batches. kMaxBatches bounds
  // the walk should rows keep arriving in it.
  constexpr int kMaxBatches = 100000;
  const std::string until = time::FormatSql(until_ms);
  std::string after_at = time::FormatSql(since_ms);
  int64_t after_id = -1;  // with after_at: the position reached (-1: from after_at on, inclusive)
  int64_t queued = 0;
  struct Batch {
    size_t n = 0;
    std::string last_at;
    int64_t last_id = 0;
  };
  for (int i = 0; i < kMaxBatches; ++i) {
    // The position moves only once a batch has committed (a retried transaction starts again).
    const Batch done = db.Transaction([&](DbConnection& tx) {
      std::vector<DbRow> rows = tx.Query(
          "SELECT id, created_at FROM webhook_deliveries WHERE webhook_id = ? AND status = 'failed'"
          " AND (created_at > ? OR (created_at = ? AND id > ?)) AND created_at < ?"
          " ORDER BY created_at, id LIMIT ? FOR UPDATE",
          {webhook_id, after_at, after_at, after_id, until, batch});
      if (rows.empty()) return Batch{};
      std::vector<int64_t> ids;
      ids.reserve(rows.size());
      for (const DbRow& row : rows) ids.emplace_back(row.Int("id"));
      // The ids come from the rows just read, never from outside.
      tx.ExecUnprepared(
          "UPDATE webhook_deliveries SET status = 'pending', round_attempts = 0, next_attempt_at = "
          "UTC_TIMESTAMP(3),"
          " updated_at = UTC_TIMESTAMP(3), leased_until = " RDV_LONG_AGO " WHERE id IN (" +
          IdList(ids) + ")");
      CopyEventTexts(tx, ids);
      return Batch{rows.size(), rows.back().String("created_at"), rows.back().Int("id")};
    });
    queued += static_cast<int64_t>(done.n);
    if (done.n < static_cast<size_t>(batch)) break;
    after_at = done.last_at;
    after_id = done.last_id;
  }
  return queued;
}

void DeliveryQueue::RecordPing(Database& db, int64_t webhook_id, const std::string& message_id,
                               const std::string& body, const Attempt& a) {
  const bool ok = a.error.empty();
  db.Transaction([&](DbConnection& tx) {
    tx.Exec(
        "INSERT INTO webhook_deliveries (webhook_id, event_id, trigger_event, message_id, body, content_type,"
        " status, round_attempts, next_attempt_at, created_at, updated_at, delivered_at)"
        " VALUES (?, NULL, 'PING', ?, ?, 'application/json', ?, 1, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3),"
        " UTC_TIMESTAMP(3), IF(?, UTC_TIMESTAMP(3), " RDV_LONG_AGO "))",
        {webhook_id, message_id, body, std::string(ok ? "succeeded" : "failed"), ok});
    const int64_t id = tx.LastInsertId();
    tx.Exec(
        "INSERT INTO webhook_delivery_attempts (delivery_id, at, status_code, duration_ms, error, response)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        {id, time::FormatSql(a.at_ms),
         a.status_code > 0 ? DbValue(static_cast<int64_t>(a.status_code)) : DbValue(), a.duration_ms,
         a.error.empty() ? DbValue() : DbValue(text::TruncateUtf8(text::SanitizeUtf8(a.error), 512)),
         a.status_code > 0 ? DbValue(a.response) : DbValue()});
  });
}

}  // namespace rendezvous::webhooks
