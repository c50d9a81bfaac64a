#include "delivery_queue.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "rendezvous/crypto.hpp"
#include "rendezvous/json_pick.hpp"
#include "rendezvous/text.hpp"
#include "rendezvous/time.hpp"
#include "template_renderer.hpp"

namespace rendezvous::webhooks {
namespace {

// What routes an event to webhooks: its trigger, the booking's organizer (payload.organizer.id,
// else payload.hosts[0].id) and its event type (payload.eventTypeId), read from the event's text
// without parsing the whole of it. nullopt for an event of no organizer or not well-formed.
struct EventRoute {
  std::string trigger;
  int64_t organizer = 0;
  std::optional<int64_t> event_type;
};

std::optional<EventRoute> RouteOf(std::string_view text, const std::string& type) {
  static const std::vector<json::JsonPath> kPaths = {{"triggerEvent"},
                                                     {"payload", "organizer", "id"},
                                                     {"payload", "hosts", "0", "id"},
                                                     {"payload", "eventTypeId"}};
  std::optional<std::vector<Json>> v = json::PickScalars(text, kPaths);
  if (!v) return std::nullopt;
  EventRoute r;
  if ((*v)[0].is_string()) {
    r.trigger = (*v)[0].get<std::string>();
  } else if ((*v)[0].is_discarded()) {
    r.trigger = type;
  } else {
    return std::nullopt;
  }
  if ((*v)[1].is_number_integer()) {
    r.organizer = (*v)[1].get<int64_t>();
  } else if ((*v)[2].is_number_integer()) {
    r.organizer = (*v)[2].get<int64_t>();
  } else {
    return std::nullopt;
  }
  if ((*v)[3].is_number_integer()) r.event_type = (*v)[3].get<int64_t>();
  return r;
}

// Id lists go to prepared statements of a few fixed lengths, each length one cached statement
// whatever the batch: a list is cut into chunks of the longest length, and what is left goes in one
// statement of the shortest length that holds it, padded by repeating its last id (an IN list is a
// set and a CASE takes its first match: the same rows match, with the same values).
constexpr size_t kLongestIdChunk = 256;
constexpr size_t kIdChunks[] = {1, 4, 16, 64, kLongestIdChunk};

// The length of the statement for `n` ids: the shortest of kIdChunks that holds them, else a
// multiple of the longest (a list that cannot be cut).
size_t IdListLength(size_t n) {
  for (size_t c : kIdChunks) {
    if (c >= n) return c;
  }
  return (n + kLongestIdChunk - 1) / kLongestIdChunk * kLongestIdChunk;
}

// Calls each(first, count, length) for the chunks of a list of `n`: `count` items from `first`,
// in a statement made for `length` (count <= length).
template <class F>
void ForEachIdChunk(size_t n, F&& each) {
  for (size_t at = 0; at < n;) {
    const size_t count = std::min(n - at, kLongestIdChunk);
    each(at, count, IdListLength(count));
    at += count;
  }
}

// Binds `count` ids from `at`, padded to `length` with the last of them.
void BindIds(std::vector<DbValue>& values, const std::vector<int64_t>& ids, size_t at, size_t count,
             size_t length) {
  for (size_t i = 0; i < length; ++i) values.emplace_back(ids[at + std::min(i, count - 1)]);
}

// `n` copies of `item` separated by `separator`: "?, ?, ?".
std::string Repeated(std::string_view item, size_t n, std::string_view separator = ", ") {
  std::string out;
  out.reserve(n * (item.size() + separator.size()));
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) out += separator;
    out += item;
  }
  return out;
}

// Runs `head` + " IN (?, …)" + `tail` over `ids`, in chunks (ForEachIdChunk), with `before` bound
// ahead of each chunk's ids. Appends the rows of a query to `rows` when given. Returns the
// affected rows.
uint64_t InIdChunks(DbConnection& tx, std::string_view head, const std::vector<int64_t>& ids,
                    std::string_view tail = {}, const std::vector<DbValue>& before = {},
                    std::vector<DbRow>* rows = nullptr) {
  uint64_t affected = 0;
  ForEachIdChunk(ids.size(), [&](size_t at, size_t count, size_t length) {
    std::string sql(head);
    sql += " IN (";
    sql += Repeated("?", length);
    sql += ")";
    sql += tail;
    std::vector<DbValue> values = before;
    values.reserve(before.size() + length);
    BindIds(values, ids, at, count, length);
    if (rows == nullptr) {
      affected += tx.Exec(sql, values);
    } else {
      for (DbRow& row : tx.Query(sql, values)) rows->push_back(std::move(row));
    }
  });
  return affected;
}

// Inserts `rows` with multi-row statements of a few fixed sizes (each size is one cached
// statement, whatever the batch). Returns the affected rows.
uint64_t InsertInChunks(DbConnection& tx, std::string_view head, std::vector<std::vector<DbValue>>& rows,
                        std::string_view tail = {}, std::string_view row = {}) {
  constexpr size_t kChunks[] = {64, 32, 16, 8, 4, 2, 1};
  uint64_t affected = 0;
  size_t at = 0;
  while (at < rows.size()) {
    size_t n = 1;
    for (size_t chunk : kChunks) {
      if (rows.size() - at >= chunk) {
        n = chunk;
        break;
      }
    }
    std::vector<std::vector<DbValue>> part(
        std::make_move_iterator(rows.begin() + static_cast<std::ptrdiff_t>(at)),
        std::make_move_iterator(rows.begin() + static_cast<std::ptrdiff_t>(at + n)));
    affected += tx.InsertRows(head, part, tail, row);
    at += n;
  }
  rows.clear();
  return affected;
}

}  // namespace

size_t DeliveryQueue::Enqueue(DbConnection& tx, const std::vector<OutboxEvent>& batch) {
  // The webhooks of each organizer and event type (the three levels, one query) are read once per
  // batch; the deliveries are written by multi-row inserts. Nothing is rendered here: a row refers
  // to its event (the sender renders when it sends), so an event costs its rows, however large its
  // webhooks' templates or slow the render script, and one user's fan-out never holds up the
  // events behind it.
  constexpr size_t kMaxInsertBytes = 4 << 20;
  std::map<std::pair<int64_t, std::optional<int64_t>>, std::vector<Webhook>> active;
  std::vector<std::vector<DbValue>> rows;
  size_t row_bytes = 0;
  size_t created = 0;
  auto flush = [&] {
    created += InsertInChunks(
        tx,
        "INSERT INTO webhook_deliveries (webhook_id, event_id, trigger_event, message_id, body, content_type,"
        " event_at, status, round_attempts, next_attempt_at, created_at, updated_at)",
        rows, " ON DUPLICATE KEY UPDATE id = id",
        "(?, ?, ?, ?, ?, ?, ?, 'pending', 0, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))");
    row_bytes = 0;
  };
  // With a filter script, the rows await it (kFilterAtSend): the sender runs it before the first
  // attempt, owners in turns, so a slow filter on one user's events holds up no one here.
  const std::string content_type = hooks_.has_filter() ? kFilterAtSend : kRenderAtSend;
  for (const OutboxEvent& e : batch) {
    // The event's text: as the outbox stores it (the consumer takes texts), else the handed
    // event serialized.
    std::string serialized;
    if (e.payload_text.empty()) {
      if (!e.payload || !e.payload->is_object()) continue;
      serialized = RenderBody(std::nullopt, *e.payload).body;
    }
    const std::string& text = e.payload_text.empty() ? serialized : e.payload_text;
    std::optional<EventRoute> route = RouteOf(text, e.type);
    if (!route || !IsTrigger(route->trigger)) continue;
    const std::string& trigger = route->trigger;
    const auto level = std::make_pair(route->organizer, route->event_type);
    auto webhooks = active.find(level);
    if (webhooks == active.end())
      webhooks = active
                     .emplace(level, webhooks_.Active(tx, level.first, level.second,
                                                      options_.managing_client
                                                          ? options_.managing_client(level.first)
                                                          : std::nullopt))
                     .first;
    const std::string event_at = time::FormatSql(
        std::chrono::duration_cast<std::chrono::milliseconds>(e.created_at.time_since_epoch()).count());
    // An event read from the outbox is kept there and its rows refer to it (a NULL body); a handed
    // event's text is copied into each row.
    const bool refers = !e.payload_text.empty();
    const size_t stored = kDeliveryRowBytes + (refers ? 0 : text.size());
    size_t event_bytes = 0;
    size_t over_cap = 0;
    for (const Webhook& w : webhooks->second) {
      if (!w.Subscribes(trigger)) continue;
      if (event_bytes + stored > options_.max_event_bytes) {
        ++over_cap;
        continue;
      }
      event_bytes += stored;
      row_bytes += refers ? 0 : text.size();
      rows.push_back({w.id, e.id, trigger, "msg_" + crypto::RandomToken(18),
                      refers ? DbValue() : DbValue(text), content_type, event_at});
      if (row_bytes >= kMaxInsertBytes) flush();
    }
    if (over_cap > 0 && options_.logger != nullptr) {
      options_.logger->Warn("webhook deliveries over the event's max_event_bytes were not created",
                            {{"event_id", e.id},
                             {"organizer", route->organizer},
                             {"left_out", static_cast<int64_t>(over_cap)},
                             {"max_event_bytes", static_cast<int64_t>(options_.max_event_bytes)}});
    }
  }
  flush();
  return created;
}

RenderedBody DeliveryQueue::RenderForSend(const Webhook& w, const std::string& text,
                                          const Json* event) const {
  if (event == nullptr || (!hooks_.has_render() && !w.payload_template)) {
    return RenderedBody{text, "application/json"};
  }
  if (hooks_.has_render()) {
    ScriptHooks::Args args(*event, ScriptHooks::WebhookValue(w));
    return hooks_.Body(w, *event, args, options_.max_rendered_bytes);
  }
  return RenderBody(w.payload_template, *event, options_.max_rendered_bytes);
}

bool DeliveryQueue::FilterForSend(const Webhook& w, const Json& event) const {
  if (!hooks_.has_filter()) return true;
  ScriptHooks::Args args(event, ScriptHooks::WebhookValue(w));
  return hooks_.ShouldDeliver(args);
}

std::vector<ClaimedDelivery> DeliveryQueue::Claim(Database& db, size_t limit, int64_t lease_seconds,
                                                  const std::vector<int64_t>& skip_webhooks,
                                                  ClaimCursor after) {
  return db.Transaction(
      [&](DbConnection& tx) { return ClaimIn(tx, limit, lease_seconds, skip_webhooks, after, nullptr); });
}

std::vector<int64_t> DeliveryQueue::Record(Database& db, const std::vector<RecordedAttempt>& batch,
                                           int64_t disable_after_seconds,
                                           const DisabledHandler& on_disabled) {
  if (batch.empty()) return {};
  return db.Transaction(
      [&](DbConnection& tx) { return RecordIn(tx, batch, disable_after_seconds, on_disabled); });
}

RecordAndClaimResult DeliveryQueue::RecordAndClaim(Database& db, const std::vector<RecordedAttempt>& attempts,
                                                   int64_t disable_after_seconds,
                                                   const DisabledHandler& on_disabled, size_t limit,
                                                   int64_t lease_seconds,
                                                   const std::vector<int64_t>& skip_webhooks,
                                                   ClaimCursor after, const ClaimShares* shares) {
  if (attempts.empty() && limit == 0) return {};
  return db.Transaction([&](DbConnection& tx) {
    RecordAndClaimResult round;  // built afresh on every try: a deadlock retries the whole transaction
    if (!attempts.empty()) round.disabled = RecordIn(tx, attempts, disable_after_seconds, on_disabled);
    if (limit > 0) {
      round.claimed = ClaimIn(tx, limit, lease_seconds, skip_webhooks, after, &round, shares);
    }
    return round;
  });
}

std::vector<ClaimedDelivery> DeliveryQueue::ClaimIn(DbConnection& tx, size_t limit, int64_t lease_seconds,
                                                    const std::vector<int64_t>& skip_webhooks,
                                                    ClaimCursor after, RecordAndClaimResult* walk,
                                                    const ClaimShares* shares) {
  std::vector<ClaimedDelivery> out;
  // `from` is the sender's own time (a formatted number), never from outside. After the cursor in
  // the index's order (due time, then the primary key InnoDB appends to every secondary index): a
  // range from its due time, the rows of that due time up to its id passed over by the index
  // condition alone. (A row comparison, (next_attempt_at, id) > (…), would read each of those rows.)
  // FORCE INDEX: when every pending row is due, the range on (status, next_attempt_at) is
  // estimated at all of them, costlier than a table scan, and the optimizer drops it for a ref on
  // `status` alone, which starts at the first pending entry: each claim then walks the entries the
  // rows finished before the cursor left behind until InnoDB purges them. With the index forced
  // the range is kept, and it starts at the cursor.
  const std::string from = time::FormatSql(after.due_ms);
  std::string sql =
      "SELECT id, webhook_id, event_id, message_id, trigger_event, body, content_type, round_attempts,"
      " COALESCE(event_at, created_at) AS event_at,"
      " delivered_at > " RDV_LONG_AGO
      " AS delivered,"
      " next_attempt_at AS due_at"
      " FROM webhook_deliveries FORCE INDEX (ix_webhook_deliveries_due)"
      " WHERE status = 'pending' AND next_attempt_at <= UTC_TIMESTAMP(3)"
      " AND leased_until <= UTC_TIMESTAMP(3)";
  std::vector<DbRow> rows;
  // The owners whose share is full: the walk passes over their webhooks' rows (one statement,
  // whatever the list: it cannot be cut).
  const std::vector<int64_t> no_owners;
  const std::vector<int64_t>& skip_owners = shares != nullptr ? shares->skip_owners : no_owners;
  if (!skip_owners.empty() && walk != nullptr) {
    // Where the walk ends when it reaches the end of what is due: the owners' rows it passes over
    // need not be walked again by the next claim that passes over them (DeliverySender).
    std::optional<DbRow> now = tx.QueryOne("SELECT UTC_TIMESTAMP(3) AS now");
    if (now) walk->walk_time_ms = time::ParseSql(now->String("now")).value_or(0);
  }
  if (skip_webhooks.empty() && skip_owners.empty()) {
    rows = tx.Query(sql +
                        " AND next_attempt_at >= ? AND (next_attempt_at > ? OR id > ?)"
                        " ORDER BY next_attempt_at, id LIMIT ? FOR UPDATE SKIP LOCKED",
                    {from, from, after.id, static_cast<int64_t>(limit)});
  } else {
    std::vector<DbValue> values = {from, from, after.id};
    std::string where = " AND next_attempt_at >= ? AND (next_attempt_at > ? OR id > ?)";
    if (shares != nullptr && shares->until_ms > 0) {
      where += " AND next_attempt_at <= ?";
      values.emplace_back(time::FormatSql(shares->until_ms));
    }
    if (!skip_webhooks.empty()) {
      const size_t length = IdListLength(skip_webhooks.size());
      BindIds(values, skip_webhooks, 0, skip_webhooks.size(), length);
      where += " AND webhook_id NOT IN (" + Repeated("?", length) + ")";
    }
    if (!skip_owners.empty()) {
      const size_t length = IdListLength(skip_owners.size());
      BindIds(values, skip_owners, 0, skip_owners.size(), length);
      where +=
          " AND webhook_id NOT IN (SELECT id FROM webhooks WHERE user_id IN (" + Repeated("?", length) + "))";
    }
    values.emplace_back(static_cast<int64_t>(limit));
    rows = tx.Query(sql + where + " ORDER BY next_attempt_at, id LIMIT ? FOR UPDATE SKIP LOCKED", values);
  }
  if (rows.empty()) return out;
  if (walk != nullptr) {
    walk->walk_full = rows.size() >= limit;
    walk->walked_to =
        ClaimCursor{time::ParseSql(rows.back().String("due_at")).value_or(0), rows.back().Int("id")};
  }
  std::vector<int64_t> ids;
  std::map<int64_t, std::shared_ptr<const Webhook>> webhooks;  // one each, shared by its deliveries
  std::vector<int64_t> referred_events;                        // of the rows whose body is their event's text
  std::map<int64_t, size_t> taken;                             // owner -> rows of this claim
  for (const DbRow& row : rows) {
    const int64_t webhook_id = row.Int("webhook_id");
    auto it = webhooks.find(webhook_id);
    if (it == webhooks.end()) {
      std::optional<Webhook> loaded = webhooks_.Load(tx, webhook_id);
      it =
          webhooks.emplace(webhook_id, loaded ? std::make_shared<const Webhook>(std::move(*loaded)) : nullptr)
              .first;
    }
    if (shares != nullptr && it->second) {
      // The owner's share: what it holds and what this claim gave it already.
      const int64_t owner = it->second->user_id;
      auto held = shares->held.find(owner);
      size_t& mine = taken[owner];
      if ((held != shares->held.end() ? held->second : 0) + mine >= shares->per_owner) {
        if (walk != nullptr) {  // left in the table for a later claim
          if (!walk->passed_over) {
            walk->first_passed = ClaimCursor{time::ParseSql(row.String("due_at")).value_or(0), row.Int("id")};
          }
          walk->passed_over = true;
        }
        continue;
      }
      ++mine;
    }
    ClaimedDelivery d;
    d.id = row.Int("id");
    d.message_id = row.String("message_id");
    d.trigger = row.String("trigger_event");
    if (row.IsNull("body")) {
      d.event_id = row.Int("event_id");
      referred_events.push_back(d.event_id);
    } else {
      d.body = row.String("body");
    }
    d.content_type = row.String("content_type");
    d.filter = d.content_type == kFilterAtSend;
    d.render = d.filter || d.content_type == kRenderAtSend;
    d.round_attempts = static_cast<int>(row.Int("round_attempts"));
    // The times as DATETIME(3) texts (UTC), read here rather than by decimal arithmetic in MariaDB.
    d.event_at_ms = time::ParseSql(row.String("event_at")).value_or(0);
    d.delivered_before = row.Int("delivered") != 0;
    if (walk != nullptr) {
      const ClaimCursor here{time::ParseSql(row.String("due_at")).value_or(0), d.id};
      if (std::tie(here.due_ms, here.id) > std::tie(walk->last.due_ms, walk->last.id)) walk->last = here;
    }
    d.webhook = it->second;
    ids.push_back(d.id);
    out.push_back(std::move(d));
  }
  if (out.empty()) return out;
  if (!referred_events.empty()) {
    // A fanned-out event is read once for all its deliveries.
    std::sort(referred_events.begin(), referred_events.end());
    referred_events.erase(std::unique(referred_events.begin(), referred_events.end()), referred_events.end());
    std::unordered_map<int64_t, std::string> texts = OutboxPayloads(tx, referred_events);
    for (ClaimedDelivery& d : out) {
      if (d.event_id == 0) continue;
      auto text = texts.find(d.event_id);
      if (text == texts.end()) {
        d.body_gone = true;
      } else {
        d.body = text->second;  // a copy: two webhooks' deliveries may carry one event
      }
    }
  }
  InIdChunks(tx, "UPDATE webhook_deliveries SET leased_until = UTC_TIMESTAMP(3) + INTERVAL ? SECOND WHERE id",
             ids, {}, {lease_seconds});
  return out;
}

std::vector<int64_t> DeliveryQueue::RecordIn(DbConnection& tx, const std::vector<RecordedAttempt>& batch,
                                             int64_t disable_after_seconds,
                                             const DisabledHandler& on_disabled) {
  std::vector<std::vector<DbValue>> attempt_rows;
  std::vector<int64_t> succeeded;
  std::vector<int64_t> failed;
  std::vector<int64_t> retried;
  std::vector<int64_t> retry_delays_us;  // for each of `retried`
  std::vector<int64_t> succeeded_webhooks;
  std::vector<int64_t> failing_webhooks;
  std::vector<int64_t> gone_webhooks;
  std::vector<int64_t> filtered_out;  // turned down by the filter: deleted, never in the log
  std::vector<int64_t> let_through;   // let through by the filter: in the log from now on
  for (const RecordedAttempt& r : batch) {
    const ClaimedDelivery& d = *r.delivery;
    const Attempt& a = r.attempt;
    const Outcome& outcome = r.outcome;
    if (outcome.kind == Outcome::kFilteredOut) {
      filtered_out.push_back(d.id);
      continue;
    }
    if (d.filter) let_through.push_back(d.id);
    attempt_rows.push_back(
        {d.id, time::FormatSql(a.at_ms),
         a.status_code > 0 ? DbValue(static_cast<int64_t>(a.status_code)) : DbValue(), a.duration_ms,
         a.error.empty() ? DbValue() : DbValue(text::TruncateUtf8(text::SanitizeUtf8(a.error), 512)),
         a.status_code > 0 ? DbValue(a.response) : DbValue()});
    switch (outcome.kind) {
      case Outcome::kSucceeded:
        succeeded.push_back(d.id);
        break;
      case Outcome::kFailed:
        failed.push_back(d.id);
        break;
      case Outcome::kRetryLater:
        retried.push_back(d.id);
        retry_delays_us.push_back(outcome.retry_in_ms * 1000);
        break;
      case Outcome::kFilteredOut:
        break;  // above
    }
    if (!d.webhook) continue;
    if (outcome.disable_webhook) gone_webhooks.push_back(d.webhook->id);
    (outcome.kind == Outcome::kSucceeded ? succeeded_webhooks : failing_webhooks).push_back(d.webhook->id);
  }
  InsertInChunks(
      tx,
      "INSERT INTO webhook_delivery_attempts (delivery_id, at, status_code, duration_ms, error, response)",
      attempt_rows);
  // Only while a filter script is configured: the rows it decided on.
  InIdChunks(
      tx, "DELETE FROM webhook_deliveries WHERE content_type = '" + std::string(kFilterAtSend) + "' AND id",
      filtered_out);
  InIdChunks(tx,
             "UPDATE webhook_deliveries SET content_type = '" + std::string(kRenderAtSend) +
                 "' WHERE content_type = '" + std::string(kFilterAtSend) + "' AND id",
             let_through);
  // One statement per kind of outcome (per chunk of ids).
  InIdChunks(tx,
             "UPDATE webhook_deliveries SET status = 'succeeded', round_attempts = round_attempts + 1,"
             " next_attempt_at = UTC_TIMESTAMP(3), updated_at = UTC_TIMESTAMP(3),"
             " leased_until = " RDV_LONG_AGO ", delivered_at = IF(delivered_at > " RDV_LONG_AGO
             ", delivered_at, UTC_TIMESTAMP(3)) WHERE id",
             succeeded);
  InIdChunks(
      tx,
      "UPDATE webhook_deliveries SET status = 'failed', round_attempts = round_attempts + 1,"
      " next_attempt_at = UTC_TIMESTAMP(3), updated_at = UTC_TIMESTAMP(3), leased_until = " RDV_LONG_AGO
      " WHERE id",
      failed);
  // Each retry after its own delay: "CASE id WHEN ? THEN ? … END", then the same ids' IN list.
  ForEachIdChunk(retried.size(), [&](size_t at, size_t count, size_t length) {
    std::vector<DbValue> values;
    values.reserve(3 * length);
    for (size_t i = 0; i < length; ++i) {
      const size_t k = at + std::min(i, count - 1);
      values.emplace_back(retried[k]);
      values.emplace_back(retry_delays_us[k]);
    }
    BindIds(values, retried, at, count, length);
    tx.Exec(
        "UPDATE webhook_deliveries SET status = 'pending', round_attempts = round_attempts + 1,"
        " next_attempt_at = UTC_TIMESTAMP(3) + INTERVAL (CASE id " +
            Repeated("WHEN ? THEN ?", length, " ") +
            " END) MICROSECOND, updated_at = UTC_TIMESTAMP(3), leased_until = " RDV_LONG_AGO
            " WHERE id IN (" +
            Repeated("?", length) + ")",
        values);
  });
  for (int64_t id : gone_webhooks) webhooks_.Deactivate(tx, id);
  if (!succeeded_webhooks.empty()) {
    // Most rounds clear nothing: a plain read (no lock) finds the webhooks that were failing, and
    // only those are written. An UPDATE of them all would wait on the webhook rows that the outbox
    // consumer's foreign-key checks hold while it writes their next deliveries.
    std::sort(succeeded_webhooks.begin(), succeeded_webhooks.end());
    succeeded_webhooks.erase(std::unique(succeeded_webhooks.begin(), succeeded_webhooks.end()),
                             succeeded_webhooks.end());
    std::vector<DbRow> rows;
    InIdChunks(tx, "SELECT id FROM webhooks WHERE failing_since IS NOT NULL AND id", succeeded_webhooks, {},
               {}, &rows);
    std::vector<int64_t> recovered;
    recovered.reserve(rows.size());
    for (const DbRow& row : rows) recovered.push_back(row.Int("id"));
    InIdChunks(tx, "UPDATE webhooks SET failing_since = NULL WHERE failing_since IS NOT NULL AND id",
               recovered);
  }
  std::vector<int64_t> disabled;
  if (failing_webhooks.empty()) return disabled;
  std::sort(failing_webhooks.begin(), failing_webhooks.end());
  failing_webhooks.erase(std::unique(failing_webhooks.begin(), failing_webhooks.end()),
                         failing_webhooks.end());
  InIdChunks(tx, "UPDATE webhooks SET failing_since = UTC_TIMESTAMP(3) WHERE failing_since IS NULL AND id",
             failing_webhooks);
  std::vector<DbRow> overdue;
  InIdChunks(tx,
             "SELECT id FROM webhooks WHERE active = 1 AND failing_since <= UTC_TIMESTAMP(3) - INTERVAL ? "
             "SECOND AND id",
             failing_webhooks, " FOR UPDATE", {disable_after_seconds}, &overdue);
  for (const DbRow& row : overdue) {
    std::optional<Webhook> w = webhooks_.Load(tx, row.Int("id"));
    if (!w) continue;
    webhooks_.Deactivate(tx, w->id);
    if (on_disabled) on_disabled(tx, *w);
    disabled.push_back(w->id);
  }
  return disabled;
}

}  // namespace rendezvous::webhooks
