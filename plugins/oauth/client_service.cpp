#include "client_service.hpp"

#include <algorithm>
#include <map>
#include <memory>

#include "client_cache.hpp"
#include "json_list.hpp"
#include "rendezvous/crypto.hpp"
#include "rendezvous/text.hpp"
#include "revocation_log.hpp"
#include "scopes.hpp"
#include "token_cache.hpp"

namespace rendezvous::oauth {
namespace {

constexpr size_t kClientIdBytes = 16;  // 32 hex characters
constexpr size_t kSecretBytes = 32;    // 256 bits
constexpr const char* kSecretPrefix = "rdvcs_";
constexpr size_t kMaxActiveSecrets = 2;
constexpr int kMaxListed = 1000;

constexpr const char* kClientColumns =
    "client_id, owner_id, kind, state, review_reason, name, logo, website, purpose, "
    "redirect_uris, scopes, created_at, updated_at, require_par";

// "YYYY-MM-DD HH:MM:SS[.fff]" (DATETIME(3), UTC) -> "YYYY-MM-DDTHH:MM:SS.fffZ".
std::string SqlTimeToIso(const std::string& t) {
  if (t.size() < 19) return t;
  std::string fraction = t.size() > 20 ? t.substr(20) : "";
  fraction.resize(3, '0');
  return t.substr(0, 10) + "T" + t.substr(11, 8) + "." + fraction + "Z";
}

std::string ListJson(const std::vector<std::string>& v) {
  return Json(v).dump();
}

OAuthClient ClientFromRow(const DbRow& rs) {
  OAuthClient c;
  c.client_id = rs.String(1);
  c.owner_id = rs.Int(2);
  c.kind = ParseClientKind(rs.String(3)).value_or(ClientKind::kConfidential);
  c.state = ParseClientState(rs.String(4)).value_or(ClientState::kPending);
  c.review_reason = rs.String(5);
  c.settings.name = rs.String(6);
  c.settings.logo = rs.String(7);
  c.settings.website = rs.String(8);
  c.settings.purpose = rs.String(9);
  c.settings.redirect_uris = JsonList(rs.String(10));
  c.settings.scopes = JsonList(rs.String(11));
  c.created_at = SqlTimeToIso(rs.String(12));
  c.updated_at = SqlTimeToIso(rs.String(13));
  c.legacy = IsLegacyClient(c.settings.scopes);
  c.require_par = rs.Bool(14);
  return c;
}

std::vector<ClientSecretInfo> LoadSecrets(DbConnection& conn, const std::string& client_id) {
  std::vector<ClientSecretInfo> out;
  for (const DbRow& row : conn.Query("SELECT id, hint, created_at FROM oauth_client_secrets"
                                     " WHERE client_id = ? AND revoked_at IS NULL ORDER BY id",
                                     {client_id})) {
    out.push_back({row.Int(1), row.String(2), SqlTimeToIso(row.String(3))});
  }
  return out;
}

// Stores a new active secret (its hash and last four characters) of the client.
void InsertSecret(DbConnection& tx, const std::string& client_id, const std::string& secret) {
  tx.Exec(
      "INSERT INTO oauth_client_secrets (client_id, secret_hash, hint, created_at)"
      " VALUES (?, ?, ?, UTC_TIMESTAMP(3))",
      {client_id, crypto::Sha256Hex(secret), secret.substr(secret.size() - 4)});
}

// The client with its active secrets; `lock` takes the row lock for the rest of the transaction.
std::optional<OAuthClient> LoadClient(DbConnection& conn, const std::string& client_id, bool lock) {
  if (!CanBeClientId(client_id)) return std::nullopt;
  std::optional<DbRow> row =
      conn.QueryOne(std::string("SELECT ") + kClientColumns + " FROM oauth_clients WHERE client_id = ?" +
                        (lock ? " FOR UPDATE" : ""),
                    {client_id});
  if (!row) return std::nullopt;
  OAuthClient c = ClientFromRow(*row);
  c.secrets = LoadSecrets(conn, c.client_id);
  return c;
}

// Not found, also when the client belongs to someone else (existence is not leaked).
Status NotFound() {
  return Status(ErrorCode::kNotFound, "OAuth client not found");
}

bool OwnedBy(const OAuthClient& c, std::optional<int64_t> acting_owner) {
  return !acting_owner || *acting_owner == c.owner_id;
}

// A review reason: at most kMaxReviewReasonChars code points of valid UTF-8, no control characters but
// tab and line breaks. "" when fine, else the problem.
std::string CheckReason(const std::string& reason) {
  size_t chars = 0;
  for (size_t i = 0; i < reason.size();) {
    const auto c = static_cast<unsigned char>(reason[i]);
    size_t len = c < 0x80                 ? 1
                 : c >= 0xc2 && c <= 0xdf ? 2
                 : c >= 0xe0 && c <= 0xef ? 3
                 : c >= 0xf0 && c <= 0xf4 ? 4
                                          : 0;
    if (len == 0 || i + len > reason.size()) return "reason is not valid UTF-8";
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(reason[i + k]);
      if ((cc & 0xc0) != 0x80) return "reason is not valid UTF-8";
      cp = (cp << 6) | (cc & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
      return "reason is not valid UTF-8";
    }
    if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || (cp >= 0x7f && cp <= 0x9f)) {
      return "reason must not contain control characters";
    }
    ++chars;
    i += len;
  }
  if (chars > kMaxReviewReasonChars)
    return "reason must be at most " + std::to_string(kMaxReviewReasonChars) + " characters";
  return "";
}

}  // namespace

Json ClientJson(const OAuthClient& client, const std::optional<std::string>& client_secret) {
  Json secrets = Json::array();
  for (const ClientSecretInfo& s : client.secrets) {
    secrets.push_back({{"secret_id", s.secret_id}, {"hint", s.hint}, {"created_at", s.created_at}});
  }
  Json j = {{"client_id", client.client_id}};
  if (client_secret) j["client_secret"] = *client_secret;
  j["name"] = client.settings.name;
  j["kind"] = std::string(ClientKindName(client.kind));
  j["state"] = std::string(ClientStateName(client.state));
  j["legacy"] = client.legacy;
  j["scopes"] = client.settings.scopes;
  j["redirect_uris"] = client.settings.redirect_uris;
  j["secrets"] = std::move(secrets);
  j["owner_id"] = client.owner_id;
  j["require_par"] = client.require_par;
  j["logo"] = client.settings.logo;
  j["website"] = client.settings.website;
  j["purpose"] = client.settings.purpose;
  j["review_reason"] = client.review_reason;
  j["created_at"] = client.created_at;
  j["updated_at"] = client.updated_at;
  return j;
}

ClientService::ClientService(Database& db, UserDirectory& users, Mailer& mailer, Logger& logger,
                             TokenCache* cache, ClientCache* clients)
    : db_(db), users_(users), mailer_(mailer), logger_(logger), cache_(cache), clients_(clients) {}

void ClientService::Forget(const std::string& client_id) {
  if (cache_) cache_->Evict(Revocation{RevocationKind::kClient, client_id});
  if (clients_) clients_->Evict(client_id);
}

Result<std::pair<OAuthClient, std::optional<std::string>>> ClientService::Create(const NewClient& request) {
  const ClientSettings settings = NormalizeClientSettings(request.settings);
  ClientValidationOptions options;
  options.require_scopes = !request.allow_no_scopes;
  if (Status s = ValidateClientSettings(settings, options); !s.ok()) return s;
  if (request.owner_id <= 0 || !users_.FindUser(request.owner_id)) {
    return Status(ErrorCode::kInvalid, "owner " + std::to_string(request.owner_id) + " not found");
  }

  const std::string client_id = crypto::RandomHex(kClientIdBytes);
  std::optional<std::string> secret;
  if (request.kind == ClientKind::kConfidential) secret = kSecretPrefix + crypto::RandomToken(kSecretBytes);

  OAuthClient created = db_.Transaction([&](DbConnection& tx) {
    tx.Exec(
        "INSERT INTO oauth_clients (client_id, owner_id, kind, state, review_reason, name, logo,"
        " website, purpose, redirect_uris, scopes, created_at, updated_at, require_par)"
        " VALUES (?, ?, ?, 'pending', '', ?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), ?)",
        {client_id, request.owner_id, ClientKindName(request.kind), settings.name, settings.logo,
         settings.website, settings.purpose, ListJson(settings.redirect_uris), ListJson(settings.scopes),
         request.require_par});
    if (secret) InsertSecret(tx, client_id, *secret);
    return *LoadClient(tx, client_id, false);
  });
  logger_.Info("oauth client created", {{"client_id", client_id},
                                        {"owner_id", request.owner_id},
                                        {"kind", std::string(ClientKindName(request.kind))},
                                        {"legacy", created.legacy},
                                        {"require_par", created.require_par}});
  return std::make_pair(std::move(created), std::move(secret));
}

Result<OAuthClient> ClientService::Get(const std::string& client_id, std::optional<int64_t> acting_owner) {
  auto client = db_.Run([&](DbConnection& conn) { return LoadClient(conn, client_id, false); });
  if (!client || !OwnedBy(*client, acting_owner)) return NotFound();
  return std::move(*client);
}

std::vector<OAuthClient> ClientService::ListWhere(const std::string& column, const std::string& value) {
  return db_.Run([&](DbConnection& conn) {
    std::vector<OAuthClient> clients;
    for (const DbRow& row :
         conn.Query(std::string("SELECT ") + kClientColumns + " FROM oauth_clients WHERE " + column +
                        " = ? ORDER BY id LIMIT " + std::to_string(kMaxListed),
                    {value})) {
      clients.push_back(ClientFromRow(row));
    }
    if (clients.empty()) return clients;
    std::map<std::string, OAuthClient*> by_id;
    for (OAuthClient& c : clients) by_id[c.client_id] = &c;
    for (const DbRow& row :
         conn.Query("SELECT s.client_id, s.id, s.hint, s.created_at FROM oauth_client_secrets s"
                    " JOIN oauth_clients c ON c.client_id = s.client_id"
                    " WHERE c." +
                        column + " = ? AND s.revoked_at IS NULL ORDER BY s.id",
                    {value})) {
      auto it = by_id.find(row.String(1));
      if (it == by_id.end()) continue;  // beyond the listing limit
      it->second->secrets.push_back({row.Int(2), row.String(3), SqlTimeToIso(row.String(4))});
    }
    return clients;
  });
}

std::vector<OAuthClient> ClientService::ListByOwner(int64_t owner_id) {
  return ListWhere("owner_id", std::to_string(owner_id));
}

std::vector<OAuthClient> ClientService::ListByState(ClientState state) {
  return ListWhere("state", std::string(ClientStateName(state)));
}

Result<OAuthClient> ClientService::Update(const std::string& client_id, std::optional<int64_t> acting_owner,
                                          const ClientUpdate& update) {
  ReviewDecision decision;
  ClientState before_state = ClientState::kPending;
  bool changed = false;
  Result<OAuthClient> result = db_.Transaction([&](DbConnection& tx) -> Result<OAuthClient> {
    std::optional<OAuthClient> client = LoadClient(tx, client_id, true);
    if (!client || !OwnedBy(*client, acting_owner)) return NotFound();
    const ClientSettings& before = client->settings;
    ClientSettings after = before;
    if (update.name) after.name = *update.name;
    if (update.logo) after.logo = *update.logo;
    if (update.website) after.website = *update.website;
    if (update.purpose) after.purpose = *update.purpose;
    if (update.redirect_uris) after.redirect_uris = *update.redirect_uris;
    if (update.scopes) after.scopes = *update.scopes;
    for (const std::string& raw : update.add_scopes) {
      const std::string s(text::Trim(raw));
      if (std::find(after.scopes.begin(), after.scopes.end(), s) == after.scopes.end())
        after.scopes.push_back(s);
    }
    for (const std::string& raw : update.remove_scopes) {
      const std::string s(text::Trim(raw));
      auto it = std::find(after.scopes.begin(), after.scopes.end(), s);
      if (it == after.scopes.end()) {
        const bool printable = !s.empty() && s.size() <= kMaxScopeLength &&
                               std::all_of(s.begin(), s.end(), [](char c) { return c > 0x20 && c < 0x7f; });
        return Status(ErrorCode::kInvalid, printable
                                               ? "cannot remove scope " + s + ": the client does not have it"
                                               : "cannot remove a scope the client does not have");
      }
      after.scopes.erase(it);
    }
    after = NormalizeClientSettings(std::move(after));
    ClientValidationOptions options;
    // A client created without scopes (legacy) may keep having none; others keep at least one.
    options.require_scopes = !before.scopes.empty();
    if (Status s = ValidateClientSettings(after, options); !s.ok()) return s;

    before_state = client->state;
    decision = DecideAfterUpdate(client->state, before, after);
    const bool settings_unchanged = before.name == after.name && before.logo == after.logo &&
                                    before.website == after.website && before.purpose == after.purpose &&
                                    before.redirect_uris == after.redirect_uris &&
                                    before.scopes == after.scopes;
    const bool require_par = update.require_par.value_or(client->require_par);
    if (settings_unchanged && require_par == client->require_par) return std::move(*client);
    // require_par only narrows what the client may do: alone it keeps the state (and a
    // rejected client's reason) as they are.
    const ClientState next_state = settings_unchanged ? client->state : decision.next_state;

    tx.Exec(
        "UPDATE oauth_clients SET name = ?, logo = ?, website = ?, purpose = ?, redirect_uris = ?,"
        " scopes = ?, state = ?, review_reason = ?, require_par = ?, updated_at = UTC_TIMESTAMP(3)"
        " WHERE client_id = ?",
        {after.name, after.logo, after.website, after.purpose, ListJson(after.redirect_uris),
         ListJson(after.scopes), ClientStateName(next_state),
         next_state == ClientState::kRejected ? client->review_reason : std::string(), require_par,
         client->client_id});
    // Its state, scopes or redirect URIs may answer differently now: the caches read it again.
    changed = true;
    RecordRevocation(tx, Revocation{RevocationKind::kClient, client->client_id});
    return *LoadClient(tx, client->client_id, false);
  });
  if (changed && result.ok()) Forget(result->client_id);
  if (result.ok()) {
    logger_.Info("oauth client updated", {{"client_id", result->client_id},
                                          {"state_before", std::string(ClientStateName(before_state))},
                                          {"state", std::string(ClientStateName(result->state))},
                                          {"legacy", result->legacy},
                                          {"decision", decision.reason}});
  }
  return result;
}

Result<OAuthClient> ClientService::Review(const std::string& client_id, bool accept,
                                          const std::string& reason_in) {
  const std::string reason(text::Trim(reason_in));
  if (std::string problem = CheckReason(reason); !problem.empty())
    return Status(ErrorCode::kInvalid, problem);

  // The owner's address, looked up before the transaction (the owner of a client never changes).
  auto peek = db_.Run([&](DbConnection& conn) { return LoadClient(conn, client_id, false); });
  if (!peek) return NotFound();
  std::optional<User> owner = users_.FindUser(peek->owner_id);

  Result<OAuthClient> result = db_.Transaction([&](DbConnection& tx) -> Result<OAuthClient> {
    std::optional<OAuthClient> client = LoadClient(tx, client_id, true);
    if (!client) return NotFound();
    if (client->state != ClientState::kPending) {
      return Status(ErrorCode::kConflict, "OAuth client is " + std::string(ClientStateName(client->state)) +
                                              "; only pending clients can be reviewed");
    }
    const ClientState next = accept ? ClientState::kApproved : ClientState::kRejected;
    tx.Exec(
        "UPDATE oauth_clients SET state = ?, review_reason = ?, updated_at = UTC_TIMESTAMP(3) WHERE "
        "client_id = ?",
        {ClientStateName(next), accept ? std::string() : reason, client->client_id});
    RecordRevocation(tx, Revocation{RevocationKind::kClient, client->client_id});

    if (owner) {
      const std::string name = "\"" + client->settings.name + "\"";
      Mail mail;
      mail.to = owner->email;
      if (accept) {
        mail.subject = "Your OAuth client " + name + " was approved";
        mail.text = "Your OAuth client " + name + " (client_id " + client->client_id + ") was approved" +
                    (reason.empty() ? "" : ": " + reason) +
                    ".\n\nIt is ready for use: other users can now authorize it.\n";
      } else {
        mail.subject = "Your OAuth client " + name + " was rejected";
        mail.text = "Your OAuth client " + name + " (client_id " + client->client_id + ") was rejected" +
                    (reason.empty() ? "" : ": " + reason) +
                    ".\n\nYou can change its settings; saving them submits the client for a new review.\n";
      }
      mailer_.Send(tx, mail);
    }
    return *LoadClient(tx, client->client_id, false);
  });
  if (result.ok()) Forget(result->client_id);
  if (result.ok()) {
    if (!owner) logger_.Warn("oauth client owner not found; no review mail", {{"client_id", client_id}});
    logger_.Info("oauth client reviewed",
                 {{"client_id", result->client_id}, {"state", std::string(ClientStateName(result->state))}});
  }
  return result;
}

Result<CreatedSecret> ClientService::GenerateSecret(const std::string& client_id,
                                                    std::optional<int64_t> acting_owner) {
  const std::string secret = kSecretPrefix + crypto::RandomToken(kSecretBytes);
  Result<CreatedSecret> result = db_.Transaction([&](DbConnection& tx) -> Result<CreatedSecret> {
    std::optional<OAuthClient> client = LoadClient(tx, client_id, true);
    if (!client || !OwnedBy(*client, acting_owner)) return NotFound();
    if (client->kind != ClientKind::kConfidential) {
      return Status(ErrorCode::kInvalid, "public clients have no secrets (they use PKCE)");
    }
    if (client->secrets.size() >= kMaxActiveSecrets) {
      return Status(ErrorCode::kConflict,
                    "a client has at most 2 active secrets; revoke one before generating another");
    }
    InsertSecret(tx, client->client_id, secret);
    const int64_t id = tx.LastInsertId();
    RecordRevocation(tx, Revocation{RevocationKind::kClient, client->client_id});
    for (const ClientSecretInfo& info : LoadSecrets(tx, client->client_id)) {
      if (info.secret_id == id) return CreatedSecret{info, secret};
    }
    return Status(ErrorCode::kInternal, "generated secret not found");
  });
  if (result.ok()) {
    Forget(client_id);
    logger_.Info("oauth client secret generated",
                 {{"client_id", client_id}, {"secret_id", result->info.secret_id}});
  }
  return result;
}

Status ClientService::RevokeSecret(const std::string& client_id, int64_t secret_id,
                                   std::optional<int64_t> acting_owner) {
  Status status = db_.Transaction([&](DbConnection& tx) -> Status {
    std::optional<OAuthClient> client = LoadClient(tx, client_id, true);
    if (!client || !OwnedBy(*client, acting_owner)) return NotFound();
    const bool active = std::any_of(client->secrets.begin(), client->secrets.end(),
                                    [&](const ClientSecretInfo& s) { return s.secret_id == secret_id; });
    if (!active) {
      return Status(ErrorCode::kNotFound,
                    "secret " + std::to_string(secret_id) + " is not an active secret of this client");
    }
    if (client->kind == ClientKind::kConfidential && client->secrets.size() == 1) {
      return Status(
          ErrorCode::kConflict,
          "the last active secret of a confidential client cannot be revoked; generate a new one first");
    }
    tx.Exec(
        "UPDATE oauth_client_secrets SET revoked_at = UTC_TIMESTAMP(3) WHERE id = ? AND client_id = ? AND "
        "revoked_at IS NULL",
        {secret_id, client->client_id});
    RecordRevocation(tx, Revocation{RevocationKind::kClient, client->client_id});
    return Status::Ok();
  });
  if (status.ok()) Forget(client_id);
  if (status.ok())
    logger_.Info("oauth client secret revoked", {{"client_id", client_id}, {"secret_id", secret_id}});
  return status;
}

bool ClientService::VerifySecret(const std::string& client_id, const std::string& secret) {
  if (secret.empty()) return false;
  std::optional<ClientCredentials> credentials = LoadCredentials(client_id);
  return credentials && credentials->kind == ClientKind::kConfidential &&
         !AuthenticateClient(credentials, secret);
}

namespace {

// A client's kind and its active secrets' hashes; nullopt when there is no such client.
std::optional<ClientCredentials> ReadCredentials(DbConnection& conn, const std::string& client_id) {
  static const char* const kSql =
      "SELECT c.kind, s.secret_hash FROM oauth_clients c"
      " LEFT JOIN oauth_client_secrets s ON s.client_id = c.client_id AND s.revoked_at IS NULL"
      " WHERE c.client_id = ?";
  std::optional<ClientCredentials> out;
  for (const DbRow& row : conn.Query(kSql, {client_id})) {
    if (!out) {
      out.emplace();
      out->kind = ParseClientKind(row.String(1)).value_or(ClientKind::kConfidential);
    }
    if (!row.IsNull(2)) out->active_secret_hashes.push_back(row.String(2));
  }
  return out;
}

}  // namespace

std::optional<ClientCredentials> ClientService::LoadCredentials(const std::string& client_id) {
  if (!CanBeClientId(client_id)) return std::nullopt;
  ClientCache::Ticket ticket;
  if (clients_) {
    if (std::optional<ClientCredentials> cached = clients_->Get(client_id)) return cached;
    ticket = clients_->Take();
  }
  std::optional<ClientCredentials> loaded =
      db_.Run([&](DbConnection& conn) { return ReadCredentials(conn, client_id); });
  if (loaded && clients_) clients_->Put(client_id, *loaded, ticket);  // unknown ids are never kept
  return loaded;
}

}  // namespace rendezvous::oauth
