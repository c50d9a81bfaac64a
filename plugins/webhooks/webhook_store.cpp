#include "webhook_store.hpp"

#include <algorithm>

#include "rendezvous/crypto.hpp"

namespace rendezvous::webhooks {
namespace {

constexpr const char* kSelect =
    "SELECT id, user_id, event_type_id, client_id, subscriber_url, active, triggers, payload_template,"
    " secret_encrypted,"
    " IF(previous_secret_expires_at > UTC_TIMESTAMP(3), previous_secret_encrypted, NULL) AS previous_secret"
    " FROM webhooks ";

// What the enqueue reads: whom to deliver to and how to render, never a secret (the sender signs
// with the webhook the claim loads), so nothing is decrypted per event.
constexpr const char* kSelectWithoutSecrets =
    "SELECT id, user_id, event_type_id, client_id, subscriber_url, active, triggers, payload_template,"
    " NULL AS secret_encrypted,"
    " NULL AS previous_secret FROM webhooks ";

constexpr size_t kSecretBytes = 24;

Status NotFound() { return Status::NotFound("webhook not found"); }
Status EventTypeNotFound() {
  return Status::NotFound("event type not found");
}
Status Duplicate() { return Status::Conflict("you already have a webhook with this subscriberUrl"); }

std::vector<std::string> TriggerList(const std::string& text) {
  std::vector<std::string> out;
  const Json j = Json::parse(text, nullptr, false);
  if (!j.is_array()) return out;
  for (const Json& v : j) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace

bool Webhook::Subscribes(const std::string& trigger) const {
  return std::find(triggers.begin(), triggers.end(), trigger) != triggers.end();
}

Json WebhookJson(const Webhook& w) {
  Json j{{"payloadTemplate", w.payload_template ? Json(*w.payload_template) : Json()},
         {"triggers", w.triggers},
         {"userId", w.user_id},
         {"id", w.id},
         {"subscriberUrl", w.subscriber_url},
         {"active", w.active},
         {"secret", w.secret ? Json(*w.secret) : Json()}};
  if (w.event_type_id) j["eventTypeId"] = *w.event_type_id;
  if (w.client_id) j["oAuthClientId"] = *w.client_id;
  return j;
}

WebhookStore::WebhookStore(Database& db, std::string encryption_key) : db_(db), key_(std::move(encryption_key)) {}

Webhook WebhookStore::FromRow(const DbRow& row) const {
  Webhook w;
  w.id = row.Int("id");
  w.user_id = row.Int("user_id");
  if (!row.IsNull("event_type_id")) w.event_type_id = row.Int("event_type_id");
  w.client_id = row.OptString("client_id");
  w.subscriber_url = row.String("subscriber_url");
  w.active = row.Bool("active");
  w.triggers = TriggerList(row.String("triggers"));
  w.payload_template = row.OptString("payload_template");
  if (std::optional<std::string> encrypted = row.OptString("secret_encrypted")) {
    Result<std::string> plain = key_.empty() ? Result<std::string>(ErrorCode::kUnavailable, "no key")
                                             : crypto::Decrypt(key_, *encrypted);
    if (plain.ok()) {
      w.secret = std::move(plain.value());
    } else {
      w.secret_unreadable = true;
    }
  }
  if (std::optional<std::string> encrypted = row.OptString("previous_secret"); encrypted && !key_.empty()) {
    Result<std::string> plain = crypto::Decrypt(key_, *encrypted);
    if (plain.ok()) w.previous_secret = std::move(plain.value());  // unreadable: it just stops signing
  }
  return w;
}

Result<std::optional<std::string>> WebhookStore::Encrypt(const std::optional<std::string>& secret) const {
  if (!secret) return std::optional<std::string>();
  if (key_.empty()) {
    return Status(ErrorCode::kUnavailable,
                  "webhook secrets cannot be stored: the server has no encryption key configured");
  }
  Result<std::string> e = crypto::Encrypt(key_, *secret);
  if (!e.ok()) return e.status();
  return std::optional<std::string>(std::move(e.value()));
}

Status WebhookStore::CheckLevel(DbConnection& conn, int64_t user_id, Level level, bool lock) const {
  if (!level.event_type_id) return Status::Ok();
  if (!event_types_) return EventTypeNotFound();
  std::optional<int64_t> owner = event_types_->Owner(conn, *level.event_type_id, lock);
  if (!owner || *owner != user_id) return EventTypeNotFound();
  return Status::Ok();
}

std::optional<Webhook> WebhookStore::Load(DbConnection& conn, int64_t id, bool for_update) {
  std::optional<DbRow> row = for_update ? conn.QueryOne(std::string(kSelect) + "WHERE id = ? FOR UPDATE", {id})
                                        : conn.QueryOne(std::string(kSelect) + "WHERE id = ?", {id});
  if (!row) return std::nullopt;
  return FromRow(*row);
}

Result<Webhook> WebhookStore::Create(int64_t user_id, Level level, const WebhookFields& fields) {
  if (!fields.subscriber_url || !fields.triggers || !fields.active) {
    return Status::Invalid("body", "active, subscriberUrl and triggers are required");
  }
  const std::optional<std::string> secret = fields.secret ? *fields.secret : std::nullopt;
  Result<std::optional<std::string>> encrypted = Encrypt(secret);
  if (!encrypted.ok()) return encrypted.status();
  const std::optional<std::string> tmpl = fields.payload_template ? *fields.payload_template : std::nullopt;
  try {
    return db_.Transaction([&](DbConnection& tx) -> Result<Webhook> {
      if (Status s = CheckLevel(tx, user_id, level, true); !s.ok()) return s;
      // Counting under a lock on the user's rows keeps racing creates under the limit.
      std::optional<DbRow> count = tx.QueryOne("SELECT COUNT(*) AS n FROM webhooks WHERE user_id = ? FOR UPDATE", {user_id});
      if (count && count->Int("n") >= kMaxWebhooksPerUser) {
        return Status::Conflict("a user can have at most " + std::to_string(kMaxWebhooksPerUser) +
                                " webhooks, their own, their event types' and their OAuth clients' together");
      }
      tx.Exec(
          "INSERT INTO webhooks (user_id, event_type_id, client_id, subscriber_url, url_hash, active, "
          "triggers,"
          " payload_template, secret_encrypted, created_at, updated_at)"
          " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))",
          {user_id, level.event_type_id ? DbValue(*level.event_type_id) : DbValue(),
           level.client_id ? DbValue(*level.client_id) : DbValue(), *fields.subscriber_url,
           crypto::Sha256Hex(*fields.subscriber_url), *fields.active, Json(*fields.triggers).dump(), tmpl,
           *encrypted});
      return *Load(tx, tx.LastInsertId());
    });
  } catch (const DuplicateKey&) {
    return Duplicate();
  }
}

Result<Webhook> WebhookStore::Update(int64_t user_id, Level level, int64_t id, const WebhookFields& fields) {
  std::optional<std::string> encrypted;
  if (fields.secret && *fields.secret) {
    Result<std::optional<std::string>> e = Encrypt(*fields.secret);
    if (!e.ok()) return e.status();
    encrypted = std::move(*e.value());
  }
  try {
    return db_.Transaction([&](DbConnection& tx) -> Result<Webhook> {
      if (Status s = CheckLevel(tx, user_id, level, false); !s.ok()) return s;
      std::optional<Webhook> current = Load(tx, id, true);
      if (!current || current->user_id != user_id || !level.Holds(*current)) return NotFound();
      const Webhook& w = *current;
      const std::string url = fields.subscriber_url.value_or(w.subscriber_url);
      const std::optional<std::string> tmpl = fields.payload_template ? *fields.payload_template : w.payload_template;
      const bool clear_secret = fields.secret.has_value() && !fields.secret->has_value();
      const bool active = fields.active.value_or(w.active);
      // Reactivating starts the failure clock afresh (disable_after).
      tx.Exec(
          "UPDATE webhooks SET subscriber_url = ?, url_hash = ?, active = ?, triggers = ?, payload_template = ?,"
          " secret_encrypted = COALESCE(?, IF(?, NULL, secret_encrypted)),"
          " previous_secret_encrypted = IF(?, NULL, previous_secret_encrypted),"
          " previous_secret_expires_at = IF(?, NULL, previous_secret_expires_at), failing_since = IF(?, NULL, failing_since),"
          " updated_at = UTC_TIMESTAMP(3) WHERE id = ?",
          {url, crypto::Sha256Hex(url), active, Json(fields.triggers.value_or(w.triggers)).dump(), tmpl, encrypted,
           clear_secret, fields.secret.has_value(), fields.secret.has_value(), active && !w.active, id});
      return *Load(tx, id);
    });
  } catch (const DuplicateKey&) {
    return Duplicate();
  }
}

Result<Webhook> WebhookStore::Get(int64_t user_id, int64_t id) {
  std::optional<Webhook> w = db_.Run([&](DbConnection& conn) { return Load(conn, id); });
  if (!w || w->user_id != user_id) return NotFound();
  return std::move(*w);
}

Result<Webhook> WebhookStore::Get(int64_t user_id, Level level, int64_t id) {
  return db_.Run([&](DbConnection& conn) -> Result<Webhook> {
    if (Status s = CheckLevel(conn, user_id, level, false); !s.ok()) return s;
    std::optional<Webhook> w = Load(conn, id);
    if (!w || w->user_id != user_id || !level.Holds(*w)) return NotFound();
    return std::move(*w);
  });
}

Result<std::pair<std::vector<Webhook>, int64_t>> WebhookStore::List(int64_t user_id, Level level,
                                                                    int64_t skip, int64_t take) {
  return db_.Run([&](DbConnection& conn) -> Result<std::pair<std::vector<Webhook>, int64_t>> {
    if (Status s = CheckLevel(conn, user_id, level, false); !s.ok()) return s;
    // One level: user_id with no event type and no client (as in Active), the event type (which is
    // the user's), or the client (whose owner is the user).
    std::string where = "WHERE user_id = ? AND event_type_key = 0 AND client_key = ''";
    DbValue key = user_id;
    if (level.event_type_id) {
      where = "WHERE event_type_id = ?";
      key = *level.event_type_id;
    } else if (level.client_id) {
      where = "WHERE client_id = ? AND user_id = ?";
      key = *level.client_id;
    }
    std::vector<DbValue> values = {key};
    if (level.client_id) values.emplace_back(user_id);
    std::pair<std::vector<Webhook>, int64_t> out;
    std::vector<DbValue> page = values;
    page.emplace_back(take);
    page.emplace_back(skip);
    for (const DbRow& row :
         conn.Query(std::string(kSelect) + where + " ORDER BY id LIMIT ? OFFSET ?", page)) {
      out.first.push_back(FromRow(row));
    }
    std::optional<DbRow> count = conn.QueryOne("SELECT COUNT(*) AS n FROM webhooks " + where, values);
    out.second = count ? count->Int("n") : 0;
    return out;
  });
}

Result<Webhook> WebhookStore::Delete(int64_t user_id, Level level, int64_t id) {
  return db_.Transaction([&](DbConnection& tx) -> Result<Webhook> {
    if (Status s = CheckLevel(tx, user_id, level, false); !s.ok()) return s;
    std::optional<Webhook> current = Load(tx, id, true);
    if (!current || current->user_id != user_id || !level.Holds(*current)) return NotFound();
    tx.Exec("DELETE FROM webhooks WHERE id = ?", {id});  // the delivery log goes with it (ON DELETE CASCADE)
    return std::move(*current);
  });
}

Result<int64_t> WebhookStore::DeleteAll(int64_t user_id, Level level) {
  if (!level.event_type_id && !level.client_id) {
    return Status::Invalid("level",
                           "only an event type's or an OAuth client's webhooks are deleted all at once");
  }
  return db_.Transaction([&](DbConnection& tx) -> Result<int64_t> {
    // The event type is share-locked, so a create racing this delete waits for it.
    if (Status s = CheckLevel(tx, user_id, level, true); !s.ok()) return s;
    // The delivery logs go with them (ON DELETE CASCADE).
    if (level.event_type_id) {
      return static_cast<int64_t>(tx.Exec("DELETE FROM webhooks WHERE event_type_id = ? AND user_id = ?",
                                          {*level.event_type_id, user_id}));
    }
    return static_cast<int64_t>(
        tx.Exec("DELETE FROM webhooks WHERE client_id = ? AND user_id = ?", {*level.client_id, user_id}));
  });
}

Result<std::vector<Webhook>> WebhookStore::ListOfClients(int64_t user_id, int64_t take) {
  return db_.Run([&](DbConnection& conn) -> Result<std::vector<Webhook>> {
    std::vector<Webhook> out;
    for (const DbRow& row :
         conn.Query(std::string(kSelect) + "WHERE user_id = ? AND client_key <> '' ORDER BY id LIMIT ?",
                    {user_id, take})) {
      out.push_back(FromRow(row));
    }
    return out;
  });
}

Result<Webhook> WebhookStore::RotateSecret(int64_t user_id, int64_t id, int64_t grace_seconds) {
  const std::string secret = "whsec_" + crypto::RandomToken(kSecretBytes);
  Result<std::optional<std::string>> encrypted = Encrypt(secret);
  if (!encrypted.ok()) return encrypted.status();
  return db_.Transaction([&](DbConnection& tx) -> Result<Webhook> {
    std::optional<DbRow> row =
        tx.QueryOne("SELECT user_id, secret_encrypted FROM webhooks WHERE id = ? FOR UPDATE", {id});
    if (!row || row->Int("user_id") != user_id) return NotFound();
    // The old secret is kept as stored (still encrypted); without one, or without a grace, none is.
    const bool keep = grace_seconds > 0 && !row->IsNull("secret_encrypted");
    tx.Exec(
        "UPDATE webhooks SET previous_secret_encrypted = IF(?, secret_encrypted, NULL),"
        " previous_secret_expires_at = IF(?, UTC_TIMESTAMP(3) + INTERVAL ? SECOND, NULL),"
        " secret_encrypted = ?, updated_at = UTC_TIMESTAMP(3) WHERE id = ?",
        {keep, keep, grace_seconds, **encrypted, id});
    return *Load(tx, id);
  });
}

size_t WebhookStore::DeleteOfEventType(DbConnection& tx, int64_t event_type_id) {
  // The delivery logs go with them (ON DELETE CASCADE).
  return static_cast<size_t>(tx.Exec("DELETE FROM webhooks WHERE event_type_id = ?", {event_type_id}));
}

size_t WebhookStore::ForgetExpiredSecrets(DbConnection& conn) {
  return static_cast<size_t>(conn.Exec(
      "UPDATE webhooks SET previous_secret_encrypted = NULL, previous_secret_expires_at = NULL"
      " WHERE previous_secret_expires_at <= UTC_TIMESTAMP(3)"));
}

std::vector<Webhook> WebhookStore::Active(DbConnection& conn, int64_t user_id,
                                          std::optional<int64_t> event_type_id,
                                          const std::optional<std::string>& client_id) {
  // Each arm reads its own index: (user_id, active) and (event_type_id, active). The user's own
  // are `event_type_key = 0`, not `event_type_id IS NULL`, which the optimizer may answer by
  // intersecting with the NULL range of the event type index: every user's own webhooks. The union
  // is sorted here: MariaDB sorts a UNION in a temporary table, on disk for these TEXT columns (a
  // file per query), while a UNION ALL without ORDER BY streams its arms. A client's arm reads
  // (client_id, active); the user's own are `client_key = ''` likewise.
  const std::string own = std::string(kSelectWithoutSecrets) +
                          "WHERE user_id = ? AND event_type_key = 0 AND client_key = '' AND active = 1";
  std::string sql = own;
  std::vector<DbValue> values = {user_id};
  if (event_type_id || client_id) {
    sql = "(" + own + ")";
    if (event_type_id) {
      sql += std::string(" UNION ALL (") + kSelectWithoutSecrets + "WHERE event_type_id = ? AND active = 1)";
      values.emplace_back(*event_type_id);
    }
    if (client_id) {
      sql += std::string(" UNION ALL (") + kSelectWithoutSecrets + "WHERE client_id = ? AND active = 1)";
      values.emplace_back(*client_id);
    }
  } else {
    sql += " ORDER BY id";
  }
  std::vector<DbRow> rows = conn.Query(sql, values);
  std::vector<Webhook> out;
  out.reserve(rows.size());
  for (const DbRow& row : rows) out.push_back(FromRow(row));
  std::sort(out.begin(), out.end(), [](const Webhook& a, const Webhook& b) { return a.id < b.id; });
  return out;
}

void WebhookStore::Deactivate(DbConnection& conn, int64_t id) {
  conn.Exec("UPDATE webhooks SET active = 0, updated_at = UTC_TIMESTAMP(3) WHERE id = ?", {id});
}

}  // namespace rendezvous::webhooks
