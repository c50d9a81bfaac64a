#include "token_service.hpp"

#include <exception>
#include <memory>
#include <stdexcept>


#include "client_auth.hpp"
#include "client_policy.hpp"
#include "pkce.hpp"
#include "rendezvous/crypto.hpp"
#include "scopes.hpp"

namespace rendezvous::oauth {
namespace {

// The refresh grant's write half as one round trip (DESIGN §5 rotation): marks the presented
// refresh token rotated -- only while it and its grant are live, the same guard as the UPDATE in
// TokenService::Refresh's transaction -- and inserts the new access and refresh token, in one
// transaction inside the server. A token that is no longer rotatable signals SQLSTATE 45000
// (MySQL error 1644) and nothing is written; the caller then decides under locks. The hash
// parameters are ascii compared as ascii_bin, as the columns are: a parameter in the database's
// default character set would turn the primary-key look-up into a scan of every token.
constexpr const char* kRotateProcedure = R"sql(DROP PROCEDURE IF EXISTS oauth_rotate_refresh_token;
CREATE PROCEDURE oauth_rotate_refresh_token(IN p_old_hash CHAR(64) CHARACTER SET ascii, IN p_grant_id BIGINT,
    IN p_access_hash CHAR(64) CHARACTER SET ascii, IN p_refresh_hash CHAR(64) CHARACTER SET ascii,
    IN p_access_ttl INT, IN p_refresh_ttl INT)
MODIFIES SQL DATA
BEGIN
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  UPDATE oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id
     SET r.rotated_at = UTC_TIMESTAMP(3)
   WHERE r.token_hash = p_old_hash COLLATE ascii_bin AND r.grant_id = p_grant_id AND r.rotated_at IS NULL
     AND r.revoked_at IS NULL AND r.expires_at > UTC_TIMESTAMP(3) AND g.revoked_at IS NULL;
  IF ROW_COUNT() <> 1 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refresh token is not rotatable';
  END IF;
  INSERT INTO oauth_access_tokens (token_hash, grant_id, created_at, expires_at)
    VALUES (p_access_hash, p_grant_id, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL p_access_ttl SECOND);
  INSERT INTO oauth_refresh_tokens (token_hash, grant_id, created_at, expires_at)
    VALUES (p_refresh_hash, p_grant_id, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL p_refresh_ttl SECOND);
  COMMIT;
END;
)sql";

constexpr size_t kTokenBytes = 32;  // 256 bits -> 43 base64url characters
constexpr size_t kTokenBodyLength = 43;
constexpr size_t kMaxCodeLength = 256;

constexpr const char* kMigration = R"sql(CREATE TABLE IF NOT EXISTS oauth_grants (
  id BIGINT NOT NULL AUTO_INCREMENT,
  client_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  user_id BIGINT NOT NULL,
  scopes TEXT NOT NULL,
  all_scopes TINYINT(1) NOT NULL DEFAULT 0,
  kind VARCHAR(16) CHARACTER SET ascii NOT NULL,
  created_at DATETIME(3) NOT NULL,
  revoked_at DATETIME(3) NULL,
  PRIMARY KEY (id),
  KEY ix_oauth_grants_client_user (client_id, user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS oauth_codes (
  code_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  client_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  user_id BIGINT NOT NULL,
  redirect_uri VARCHAR(2048) NOT NULL,
  scopes TEXT NOT NULL,
  all_scopes TINYINT(1) NOT NULL DEFAULT 0,
  code_challenge VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
  created_at DATETIME(3) NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  used_at DATETIME(3) NULL,
  grant_id BIGINT NULL,
  PRIMARY KEY (code_hash),
  KEY ix_oauth_codes_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS oauth_access_tokens (
  token_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  grant_id BIGINT NOT NULL,
  created_at DATETIME(3) NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  revoked_at DATETIME(3) NULL,
  PRIMARY KEY (token_hash),
  KEY ix_oauth_access_tokens_grant (grant_id),
  KEY ix_oauth_access_tokens_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS oauth_refresh_tokens (
  token_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  grant_id BIGINT NOT NULL,
  created_at DATETIME(3) NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  rotated_at DATETIME(3) NULL,
  revoked_at DATETIME(3) NULL,
  PRIMARY KEY (token_hash),
  KEY ix_oauth_refresh_tokens_grant (grant_id),
  KEY ix_oauth_refresh_tokens_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci)sql";

std::vector<std::string> JsonList(const std::string& text) {
  std::vector<std::string> out;
  const Json j = Json::parse(text, nullptr, false);
  if (!j.is_array()) return out;
  for (const Json& v : j) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

// A token of ours: prefix + 43 base64url characters.
bool WellFormed(std::string_view token, std::string_view prefix) {
  if (token.size() != prefix.size() + kTokenBodyLength || token.substr(0, prefix.size()) != prefix) return false;
  for (char c : token.substr(prefix.size())) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

struct ClientRow {
  std::string state;
  int64_t owner_id = 0;
  std::vector<std::string> scopes;
};

std::optional<ClientRow> LoadClientRow(DbConnection& conn, const std::string& client_id) {
  std::optional<DbRow> row = conn.QueryOne("SELECT state, owner_id, scopes FROM oauth_clients WHERE client_id = ?", {client_id});
  if (!row) return std::nullopt;
  return ClientRow{row->String(1), row->Int(2), JsonList(row->String(3))};
}

// Rejected clients get nothing; a pending one only for its owner's own grants (testing).
std::optional<TokenError> CheckClientUsable(const ClientRow& client, int64_t user_id) {
  if (client.state == "rejected") return TokenError::UnauthorizedClient("the OAuth client is not approved");
  if (client.state != "approved" && user_id != client.owner_id) {
    return TokenError::UnauthorizedClient("the OAuth client is pending review; only its owner can use it");
  }
  return std::nullopt;
}

// The token response's scope: the granted scopes, or for an all-scopes (legacy) grant the
// client's scopes ("" when it has none).
std::string ScopeText(const std::vector<std::string>& scopes, bool all_scopes, const ClientRow& client) {
  return JoinScopes(all_scopes ? client.scopes : scopes);
}

void RevokeGrant(DbConnection& conn, int64_t grant_id) {
  conn.Exec("UPDATE oauth_grants SET revoked_at = UTC_TIMESTAMP(3) WHERE id = ? AND revoked_at IS NULL", {grant_id});
}

}  // namespace

Json ToJson(const TokenResponse& response) {
  return {{"access_token", response.access_token},
          {"refresh_token", response.refresh_token},
          {"token_type", "bearer"},
          {"expires_in", response.expires_in},
          {"scope", response.scope}};
}

TokenService::TokenService(Database& db, Logger& logger, TokenLifetimes lifetimes)
    : db_(db), logger_(logger), lifetimes_(lifetimes) {}

std::vector<Migration> TokenService::Migrations() {
  return {Migration{2, "oauth_grants, oauth_codes, oauth_access_tokens, oauth_refresh_tokens", kMigration},
          Migration{3, "procedure oauth_rotate_refresh_token", kRotateProcedure}};
}

namespace {

// Inserts a fresh access and refresh token for the grant; returns the response without scope.
TokenResponse IssueTokens(DbConnection& conn, int64_t grant_id, const TokenLifetimes& lifetimes) {
  TokenResponse out;
  out.access_token = std::string(kAccessTokenPrefix) + crypto::RandomToken(kTokenBytes);
  out.refresh_token = std::string(kRefreshTokenPrefix) + crypto::RandomToken(kTokenBytes);
  out.expires_in = lifetimes.access_token_ttl;
  conn.Exec(
      "INSERT INTO oauth_access_tokens (token_hash, grant_id, created_at, expires_at)"
      " VALUES (?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL ? SECOND)",
      {crypto::Sha256Hex(out.access_token), grant_id, lifetimes.access_token_ttl});
  conn.Exec(
      "INSERT INTO oauth_refresh_tokens (token_hash, grant_id, created_at, expires_at)"
      " VALUES (?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL ? SECOND)",
      {crypto::Sha256Hex(out.refresh_token), grant_id, lifetimes.refresh_token_ttl});
  return out;
}

int64_t InsertGrant(DbConnection& conn, const std::string& client_id, int64_t user_id,
                    const std::vector<std::string>& scopes, bool all_scopes, const char* kind) {
  conn.Exec(
      "INSERT INTO oauth_grants (client_id, user_id, scopes, all_scopes, kind, created_at)"
      " VALUES (?, ?, ?, ?, ?, UTC_TIMESTAMP(3))",
      {client_id, user_id, Json(scopes).dump(), all_scopes, kind});
  return conn.LastInsertId();
}

}  // namespace

std::string TokenService::IssueCode(const CodeGrant& grant) {
  const std::string code = crypto::RandomToken(kTokenBytes);
  db_.Run([&](DbConnection& conn) {
    conn.Exec(
        "INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, scopes, all_scopes,"
        " code_challenge, created_at, expires_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL ? SECOND)",
        {crypto::Sha256Hex(code), grant.client_id, grant.user_id, grant.redirect_uri, Json(grant.scopes).dump(),
         grant.all_scopes, grant.code_challenge, lifetimes_.code_ttl});
  });
  return code;
}

TokenResult TokenService::ExchangeCode(const std::string& client_id, const std::string& code,
                                       const std::string& redirect_uri, const std::string& code_verifier) {
  if (code.empty() || code.size() > kMaxCodeLength) return TokenError::CodeInvalidOrExpired();
  const std::string hash = crypto::Sha256Hex(code);
  int64_t replayed_grant = 0;
  TokenResult result = db_.Transaction([&](DbConnection& tx) -> TokenResult {
    struct CodeRow {
      std::string client_id, redirect_uri, scopes, challenge;
      int64_t user_id = 0, grant_id = 0;
      bool all_scopes = false, used = false;
    } row;
    {
      std::optional<DbRow> r = tx.QueryOne(
          "SELECT client_id, user_id, redirect_uri, scopes, all_scopes, code_challenge,"
          " used_at IS NOT NULL, COALESCE(grant_id, 0) FROM oauth_codes WHERE code_hash = ? FOR UPDATE",
          {hash});
      if (!r) return TokenError::CodeInvalidOrExpired();
      row.client_id = r->String(1);
      row.user_id = r->Int(2);
      row.redirect_uri = r->String(3);
      row.scopes = r->String(4);
      row.all_scopes = r->Bool(5);
      row.challenge = r->String(6);
      row.used = r->Bool(7);
      row.grant_id = r->Int(8);
    }
    if (row.client_id != client_id) return TokenError::CodeInvalidOrExpired();
    if (row.used) {
      if (row.grant_id != 0) {
        RevokeGrant(tx, row.grant_id);
        replayed_grant = row.grant_id;
      }
      return TokenError::CodeInvalidOrExpired();
    }
    std::optional<ClientRow> client = LoadClientRow(tx, client_id);
    if (!client) return TokenError::CodeInvalidOrExpired();
    if (auto error = CheckClientUsable(*client, row.user_id)) return *error;

    if (tx.Exec("UPDATE oauth_codes SET used_at = UTC_TIMESTAMP(3)"
                " WHERE code_hash = ? AND used_at IS NULL AND expires_at > UTC_TIMESTAMP(3)",
                {hash}) != 1) {
      return TokenError::CodeInvalidOrExpired();  // expired
    }

    if (row.redirect_uri != redirect_uri) return TokenError::CodeInvalidOrExpired();
    if (row.challenge.empty() != code_verifier.empty()) return TokenError::CodeInvalidOrExpired();
    if (!row.challenge.empty() && !VerifyS256(code_verifier, row.challenge)) return TokenError::CodeInvalidOrExpired();

    const std::vector<std::string> scopes = JsonList(row.scopes);
    const int64_t grant_id = InsertGrant(tx, client_id, row.user_id, scopes, row.all_scopes, "oauth");
    tx.Exec("UPDATE oauth_codes SET grant_id = ? WHERE code_hash = ?", {grant_id, hash});
    TokenResponse out = IssueTokens(tx, grant_id, lifetimes_);
    out.scope = ScopeText(scopes, row.all_scopes, *client);
    return out;
  });
  if (replayed_grant != 0) {
    logger_.Warn("oauth authorization code replayed; grant revoked", {{"client_id", client_id}, {"grant_id", replayed_grant}});
  }
  return result;
}

namespace {

// The requesting client (when it exists) with, when the presented refresh token exists, the
// token and its grant.
struct RefreshRow {
  std::optional<ClientCredentials> credentials;  // the requesting client; absent: no such client
  std::optional<ClientRow> client;
  bool token_found = false;
  int64_t grant_id = 0, user_id = 0;
  bool live = false, rotated = false, revoked = false, grant_revoked = false, all_scopes = false;
  std::string grant_client, scopes_text;

  bool Rotatable() const { return token_found && live && !rotated && !revoked && !grant_revoked; }
};

// The token's and its grant's state from six columns starting at `first`: grant id, live,
// rotated, revoked, the grant's client, grant revoked.
void ReadTokenState(const DbRow& rs, int first, RefreshRow& row) {
  row.grant_id = rs.Int(first);
  row.live = rs.Bool(first + 1);
  row.rotated = rs.Bool(first + 2);
  row.revoked = rs.Bool(first + 3);
  row.grant_client = rs.String(first + 4);
  row.grant_revoked = rs.Bool(first + 5);
}

// One non-locking read of the requesting client (kind, active secret hashes, state) and the
// refresh token with its grant: client authentication and the grant decision in one round trip.
// Without locks a guarded write decides any race (a locking read would also lock the client row,
// which every refresh of the client shares).
std::optional<RefreshRow> ReadRefreshRow(DbConnection& conn, const std::string& client_id, const std::string& hash) {
  std::optional<DbRow> rs = conn.QueryOne(
      "SELECT c.kind, (SELECT GROUP_CONCAT(s.secret_hash) FROM oauth_client_secrets s"
      "   WHERE s.client_id = c.client_id AND s.revoked_at IS NULL),"
      " c.state, c.owner_id, c.scopes,"
      " r.grant_id, r.expires_at > UTC_TIMESTAMP(3), r.rotated_at IS NOT NULL, r.revoked_at IS NOT NULL,"
      " g.client_id, g.revoked_at IS NOT NULL, g.user_id, g.scopes, g.all_scopes"
      " FROM oauth_clients c"
      " LEFT JOIN oauth_refresh_tokens r ON r.token_hash = ?"
      " LEFT JOIN oauth_grants g ON g.id = r.grant_id"
      " WHERE c.client_id = ?",
      {hash, client_id});
  if (!rs) return std::nullopt;
  RefreshRow row;
  ClientCredentials credentials;
  credentials.kind = ParseClientKind(rs->String(1)).value_or(ClientKind::kConfidential);
  if (!rs->IsNull(2)) {
    const std::string joined = rs->String(2);
    for (size_t start = 0; start < joined.size();) {
      size_t comma = joined.find(',', start);
      if (comma == std::string::npos) comma = joined.size();
      credentials.active_secret_hashes.push_back(joined.substr(start, comma - start));
      start = comma + 1;
    }
  }
  row.credentials = std::move(credentials);
  row.client = ClientRow{rs->String(3), rs->Int(4), JsonList(rs->String(5))};
  row.token_found = !rs->IsNull(6) && !rs->IsNull(10);
  if (row.token_found) {
    ReadTokenState(*rs, 6, row);
    row.user_id = rs->Int(12);
    row.scopes_text = rs->String(13);
    row.all_scopes = rs->Bool(14);
  }
  return row;
}

// The exact re-read after a lost race: locks the token and grant rows (not the client's).
std::optional<RefreshRow> ReadLockedRefreshRow(DbConnection& conn, const std::string& hash) {
  std::optional<DbRow> rs = conn.QueryOne(
      "SELECT r.grant_id, r.expires_at > UTC_TIMESTAMP(3), r.rotated_at IS NOT NULL, r.revoked_at IS NOT NULL,"
      " g.client_id, g.revoked_at IS NOT NULL"
      " FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id"
      " WHERE r.token_hash = ? FOR UPDATE",
      {hash});
  if (!rs) return std::nullopt;
  RefreshRow row;
  row.token_found = true;
  ReadTokenState(*rs, 1, row);
  return row;
}

}  // namespace

TokenResult TokenService::Refresh(const std::string& client_id, const std::string& refresh_token) {
  return RefreshGrant(client_id, nullptr, refresh_token);
}

TokenResult TokenService::AuthenticateAndRefresh(const std::string& client_id, const std::string& client_secret,
                                                 const std::string& refresh_token) {
  return RefreshGrant(client_id, &client_secret, refresh_token);
}

TokenResult TokenService::RefreshGrant(const std::string& client_id, const std::string* client_secret,
                                       const std::string& refresh_token) {
  if (client_id.empty() || client_id.size() > kMaxClientIdLength) return TokenError::ClientNotFound();
  // A malformed token is looked up as "" (which matches nothing), so that the client is still
  // authenticated first: a bad secret answers invalid_client whatever the token.
  const bool well_formed = WellFormed(refresh_token, kRefreshTokenPrefix);
  const std::string hash = well_formed ? crypto::Sha256Hex(refresh_token) : std::string();
  if (std::optional<TokenResult> done = RefreshFast(client_id, client_secret, hash)) return *std::move(done);
  return RefreshLocked(client_id, hash);
}

// The common case in two round trips: the read above (client authentication included), then the
// stored procedure that rotates and issues in one server-side transaction. Anything but a live token of
// this client (and a lost race) is left to RefreshLocked, which decides it exactly (reuse
// detection too).
std::optional<TokenResult> TokenService::RefreshFast(const std::string& client_id, const std::string* client_secret,
                                                     const std::string& hash) {
  return db_.Run([&](DbConnection& conn) -> std::optional<TokenResult> {
    std::optional<RefreshRow> row = ReadRefreshRow(conn, client_id, hash);
    if (client_secret != nullptr) {
      if (auto error = AuthenticateClient(row ? row->credentials : std::nullopt, *client_secret)) {
        return TokenResult(*std::move(error));
      }
    }
    if (!row || !row->token_found) return TokenResult(TokenError::InvalidRefreshToken());
    if (row->grant_client != client_id || !row->Rotatable()) return std::nullopt;
    if (auto error = CheckClientUsable(*row->client, row->user_id)) return TokenResult(*error);

    TokenResponse out;
    out.access_token = std::string(kAccessTokenPrefix) + crypto::RandomToken(kTokenBytes);
    out.refresh_token = std::string(kRefreshTokenPrefix) + crypto::RandomToken(kTokenBytes);
    out.expires_in = lifetimes_.access_token_ttl;
    try {
      conn.Exec("CALL oauth_rotate_refresh_token(?, ?, ?, ?, ?, ?)",
                {hash, row->grant_id, crypto::Sha256Hex(out.access_token), crypto::Sha256Hex(out.refresh_token),
                 lifetimes_.access_token_ttl, lifetimes_.refresh_token_ttl});
    } catch (const DatabaseError& e) {
      // Not rotatable any more (a concurrent refresh won, or the grant was revoked: the procedure's
      // SIGNAL), or a lock conflict: the procedure rolled back; decide again under locks.
      const int code = e.code();
      if (code == kDbErrorSignal || code == kDbErrorDeadlock || code == kDbErrorLockWaitTimeout) return std::nullopt;
      throw;
    }
    out.scope = ScopeText(JsonList(row->scopes_text), row->all_scopes, *row->client);
    return TokenResult(std::move(out));
  });
}

TokenResult TokenService::RefreshLocked(const std::string& client_id, const std::string& hash) {
  int64_t reused_grant = 0;
  TokenResult result = db_.Transaction([&](DbConnection& tx) -> TokenResult {
    // The outcome for a token that is not (or no longer) rotatable; nullopt when it is.
    auto refuse = [&](const RefreshRow& row) -> std::optional<TokenError> {
      if (row.grant_client != client_id) return TokenError::InvalidRefreshToken();
      if (row.rotated) {
        // Reuse: someone holds an old token. Kill the grant, whoever the legitimate holder is.
        if (!row.grant_revoked) {
          RevokeGrant(tx, row.grant_id);
          reused_grant = row.grant_id;
        }
        return TokenError::RefreshTokenRevoked();
      }
      if (row.revoked || row.grant_revoked || !row.live) return TokenError::InvalidRefreshToken();
      return std::nullopt;
    };

    std::optional<RefreshRow> row = ReadRefreshRow(tx, client_id, hash);
    if (!row || !row->token_found) return TokenError::InvalidRefreshToken();
    // A committed rotation is final, so reuse needs no lock (RevokeGrant is idempotent).
    if (auto error = refuse(*row)) return *error;
    if (!row->client) return TokenError::InvalidRefreshToken();
    if (auto error = CheckClientUsable(*row->client, row->user_id)) return *error;

    // Rotates only a token that is still live on a live grant; 0 rows means another request
    // rotated it (or the grant was revoked) since the read: decide again under the locks.
    const uint64_t rotated = tx.Exec(
        "UPDATE oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id"
        " SET r.rotated_at = UTC_TIMESTAMP(3)"
        " WHERE r.token_hash = ? AND r.rotated_at IS NULL AND r.revoked_at IS NULL"
        " AND r.expires_at > UTC_TIMESTAMP(3) AND g.revoked_at IS NULL",
        {hash});
    if (rotated != 1) {
      std::optional<RefreshRow> locked = ReadLockedRefreshRow(tx, hash);
      if (!locked) return TokenError::InvalidRefreshToken();
      return refuse(*locked).value_or(TokenError::InvalidRefreshToken());
    }
    TokenResponse out = IssueTokens(tx, row->grant_id, lifetimes_);
    out.scope = ScopeText(JsonList(row->scopes_text), row->all_scopes, *row->client);
    return out;
  });
  if (reused_grant != 0) {
    logger_.Warn("oauth refresh token reused; grant revoked", {{"client_id", client_id}, {"grant_id", reused_grant}});
  }
  return result;
}

std::optional<Principal> TokenService::ResolveAccessToken(std::string_view token) {
  if (!WellFormed(token, kAccessTokenPrefix)) return std::nullopt;
  const std::string hash = crypto::Sha256Hex(token);
  return db_.Run([&](DbConnection& conn) -> std::optional<Principal> {
    std::optional<DbRow> rs = conn.QueryOne(
        "SELECT g.id, g.client_id, g.user_id, g.scopes, g.all_scopes, g.kind"
        " FROM oauth_access_tokens a"
        " JOIN oauth_grants g ON g.id = a.grant_id"
        " JOIN oauth_clients c ON c.client_id = g.client_id"
        " WHERE a.token_hash = ? AND a.revoked_at IS NULL AND a.expires_at > UTC_TIMESTAMP(3)"
        " AND g.revoked_at IS NULL AND c.state <> 'rejected'",
        {hash});
    if (!rs) return std::nullopt;
    Principal p;
    p.credential_id = rs->Int(1);
    p.client_id = rs->String(2);
    p.user_id = rs->Int(3);
    for (std::string& s : JsonList(rs->String(4))) p.scopes.insert(std::move(s));
    p.all_scopes = rs->Bool(5);
    p.kind = rs->String(6) == "managed" ? kManagedUserToken : kOAuthToken;
    return p;
  });
}

TokenResponse TokenService::IssueManagedUserTokens(const std::string& client_id, int64_t user_id) {
  return db_.Transaction([&](DbConnection& tx) {
    std::optional<ClientRow> client = LoadClientRow(tx, client_id);
    if (!client) throw std::runtime_error("OAuth client not found: " + client_id);
    const bool all_scopes = IsLegacyClient(client->scopes);
    const std::vector<std::string> scopes = all_scopes ? std::vector<std::string>{} : client->scopes;
    const int64_t grant_id = InsertGrant(tx, client_id, user_id, scopes, all_scopes, "managed");
    TokenResponse out = IssueTokens(tx, grant_id, lifetimes_);
    out.scope = JoinScopes(client->scopes);
    return out;
  });
}

void TokenService::Revoke(const std::string& client_id, const std::string& token) {
  const bool access = WellFormed(token, kAccessTokenPrefix);
  if (!access && !WellFormed(token, kRefreshTokenPrefix)) return;
  const std::string hash = crypto::Sha256Hex(token);
  db_.Transaction([&](DbConnection& tx) {
    if (access) {
      tx.Exec(
          "UPDATE oauth_access_tokens a JOIN oauth_grants g ON g.id = a.grant_id"
          " SET a.revoked_at = UTC_TIMESTAMP(3) WHERE a.token_hash = ? AND g.client_id = ? AND a.revoked_at IS NULL",
          {hash, client_id});
      return;
    }
    std::optional<DbRow> grant = tx.QueryOne(
        "SELECT g.id FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id"
        " WHERE r.token_hash = ? AND g.client_id = ?",
        {hash, client_id});
    if (grant) RevokeGrant(tx, grant->Int(1));
  });
}

Json TokenService::Introspect(const std::string& client_id, const std::string& token) {
  const bool access = WellFormed(token, kAccessTokenPrefix);
  if (!access && !WellFormed(token, kRefreshTokenPrefix)) return {{"active", false}};
  const std::string hash = crypto::Sha256Hex(token);
  const std::string table = access ? "oauth_access_tokens" : "oauth_refresh_tokens";
  const std::string extra = access ? "" : " AND t.rotated_at IS NULL";
  return db_.Run([&](DbConnection& conn) -> Json {
    std::optional<DbRow> rs = conn.QueryOne(
        "SELECT g.user_id, g.scopes, g.all_scopes, c.scopes, TIMESTAMPDIFF(SECOND, '1970-01-01', t.expires_at), TIMESTAMPDIFF(SECOND, '1970-01-01', t.created_at)"
        " FROM " + table + " t JOIN oauth_grants g ON g.id = t.grant_id"
        " JOIN oauth_clients c ON c.client_id = g.client_id"
        " WHERE t.token_hash = ? AND g.client_id = ? AND t.revoked_at IS NULL AND t.expires_at > UTC_TIMESTAMP(3)"
        " AND g.revoked_at IS NULL AND c.state <> 'rejected'" + extra,
        {hash, client_id});
    if (!rs) return {{"active", false}};
    const bool all_scopes = rs->Bool(3);
    const std::vector<std::string> scopes = JsonList(rs->String(all_scopes ? 4 : 2));
    return {{"active", true},
            {"scope", JoinScopes(scopes)},
            {"client_id", client_id},
            {"sub", std::to_string(rs->Int(1))},
            {"exp", rs->Int(5)},
            {"iat", rs->Int(6)},
            {"token_type", access ? "bearer" : "refresh_token"}};
  });
}

TokenService::~TokenService() { StopPurger(); }

uint64_t TokenService::PurgeExpired(size_t batch) {
  static constexpr const char* kDeletes[] = {
      "DELETE FROM oauth_codes WHERE expires_at < UTC_TIMESTAMP(3) LIMIT ?",
      "DELETE FROM oauth_access_tokens WHERE expires_at < UTC_TIMESTAMP(3) OR revoked_at IS NOT NULL LIMIT ?",
      "DELETE FROM oauth_refresh_tokens WHERE expires_at < UTC_TIMESTAMP(3) OR revoked_at IS NOT NULL LIMIT ?",
  };
  if (batch == 0) batch = 1;
  uint64_t total = 0;
  for (const char* sql : kDeletes) {
    for (int i = 0; i < kMaxPurgeBatches; ++i) {
      // One autocommit statement per batch: short row locks, no long transaction.
      const uint64_t n = db_.Run([&](DbConnection& conn) -> uint64_t {
        return conn.Exec(sql, {batch});
      });
      total += n;
      if (n < batch) break;
    }
  }
  return total;
}

void TokenService::StartPurger(std::chrono::milliseconds interval) {
  std::lock_guard<std::mutex> lk(purge_mu_);
  if (purger_.joinable()) return;
  purge_stop_ = false;
  purger_ = std::thread([this, interval] {
    std::unique_lock<std::mutex> lk(purge_mu_);
    while (!purge_cv_.wait_for(lk, interval, [this] { return purge_stop_; })) {
      lk.unlock();
      try {
        const uint64_t n = PurgeExpired();
        if (n > 0) logger_.Debug("oauth purge", {{"deleted", static_cast<int64_t>(n)}});
      } catch (const std::exception& e) {
        logger_.Warn("oauth purge failed", {{"error", std::string(e.what())}});
      }
      lk.lock();
    }
  });
}

void TokenService::StopPurger() {
  std::thread t;
  {
    std::lock_guard<std::mutex> lk(purge_mu_);
    purge_stop_ = true;
    t = std::move(purger_);
  }
  purge_cv_.notify_all();
  if (t.joinable()) t.join();
}

}  // namespace rendezvous::oauth
