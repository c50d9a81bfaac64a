#include "refresh_grant.hpp"

#include "client_auth.hpp"
#include "rendezvous/crypto.hpp"
#include "token_storage.hpp"

namespace rendezvous::oauth {
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
  std::string dpop_jkt;  // the key the refresh token is bound to ('' = none)

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
  static const std::string kSql =
      std::string("SELECT ") + kGrantClientColumns +
      ","
      " r.grant_id, r.expires_at > UTC_TIMESTAMP(3), r.rotated_at IS NOT NULL, r.revoked_at IS NOT NULL,"
      " g.client_id, g.revoked_at IS NOT NULL, g.user_id, g.scopes, g.all_scopes, r.dpop_jkt"
      " FROM oauth_clients c"
      " LEFT JOIN oauth_refresh_tokens r ON r.token_hash = ?"
      " LEFT JOIN oauth_grants g ON g.id = r.grant_id"
      " WHERE c.client_id = ?";
  std::optional<DbRow> rs = conn.QueryOne(kSql, {hash, client_id});
  if (!rs) return std::nullopt;
  RefreshRow row;
  GrantClient client = GrantClientFromColumns(*rs, 1);
  row.credentials = std::move(client.credentials);
  row.client = std::move(client.row);
  constexpr int kToken = kGrantClientColumnCount + 1;
  row.token_found = !rs->IsNull(kToken) && !rs->IsNull(kToken + 4);
  if (row.token_found) {
    ReadTokenState(*rs, kToken, row);
    row.user_id = rs->Int(kToken + 6);
    row.scopes_text = rs->String(kToken + 7);
    row.all_scopes = rs->Bool(kToken + 8);
    row.dpop_jkt = rs->String(kToken + 9);
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

// A DPoP-bound refresh token needs a proof (RFC 9449 §5): by the same key from a public client, by
// any key from a confidential one (refresh_grant.hpp says why).
std::optional<TokenError> CheckDpopBinding(const RefreshRow& row, const std::string& proof_jkt) {
  if (row.dpop_jkt.empty()) return std::nullopt;
  if (proof_jkt.empty())
    return TokenError::InvalidGrant("the refresh token is DPoP-bound: a DPoP proof is required");
  const bool is_public = row.credentials && row.credentials->kind == ClientKind::kPublic;
  if (is_public && proof_jkt != row.dpop_jkt) {
    return TokenError::InvalidGrant("the DPoP proof is not signed by the key the refresh token is bound to");
  }
  return std::nullopt;
}

}  // namespace

RefreshGrant::RefreshGrant(Database& db, Logger& logger, TokenLifetimes lifetimes, TokenCache* cache)
    : db_(db), logger_(logger), lifetimes_(lifetimes), cache_(cache) {}

TokenResult RefreshGrant::Refresh(const std::string& client_id, const std::string& refresh_token,
                                  const ClientCheck& authenticate, const std::string& dpop_jkt) {
  if (client_id.empty() || client_id.size() > kMaxClientIdLength) return TokenError::ClientNotFound();
  // A malformed token is looked up as "" (which matches nothing), so that the client is still
  // authenticated first: a bad secret answers invalid_client whatever the token.
  const bool well_formed = WellFormed(refresh_token, kRefreshTokenPrefix);
  const std::string hash = well_formed ? crypto::Sha256Hex(refresh_token) : std::string();
  if (std::optional<TokenResult> done = RefreshFast(client_id, authenticate, hash, dpop_jkt))
    return *std::move(done);
  return RefreshLocked(client_id, hash, dpop_jkt);
}

// The common case in two round trips: the read above (client authentication included), then the
// stored procedure that rotates and issues in one server-side transaction. Anything but a live token of
// this client (and a lost race) is left to RefreshLocked, which decides it exactly (reuse
// detection too).
std::optional<TokenResult> RefreshGrant::RefreshFast(const std::string& client_id,
                                                     const ClientCheck& authenticate, const std::string& hash,
                                                     const std::string& dpop_jkt) {
  return db_.Run([&](DbConnection& conn) -> std::optional<TokenResult> {
    std::optional<RefreshRow> row = ReadRefreshRow(conn, client_id, hash);
    if (authenticate) {
      if (auto error = authenticate(row ? row->credentials : std::nullopt)) return TokenResult(*std::move(error));
    }
    if (!row || !row->token_found) return TokenResult(TokenError::InvalidRefreshToken());
    if (row->grant_client != client_id || !row->Rotatable()) return std::nullopt;
    if (auto error = CheckClientUsable(*row->client, row->user_id)) return TokenResult(*error);
    if (auto error = CheckDpopBinding(*row, dpop_jkt)) return TokenResult(*error);

    TokenResponse out = NewTokenPair(lifetimes_);
    out.dpop = !dpop_jkt.empty();
    try {
      conn.Exec(
          "CALL oauth_rotate_refresh_token(?, ?, ?, ?, ?, ?, ?, ?)",
          {hash, row->grant_id, crypto::Sha256Hex(out.access_token), crypto::Sha256Hex(out.refresh_token),
           lifetimes_.access_token_ttl, lifetimes_.refresh_token_ttl, dpop_jkt, dpop_jkt});
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

TokenResult RefreshGrant::RefreshLocked(const std::string& client_id, const std::string& hash,
                                        const std::string& dpop_jkt) {
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
    if (auto error = CheckDpopBinding(*row, dpop_jkt)) return *error;

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
    TokenResponse out = IssueTokens(tx, row->grant_id, lifetimes_, TokenBinding{dpop_jkt, dpop_jkt});
    out.scope = ScopeText(JsonList(row->scopes_text), row->all_scopes, *row->client);
    return out;
  });
  if (reused_grant != 0) {
    logger_.Warn("oauth refresh token reused; grant revoked", {{"client_id", client_id}, {"grant_id", reused_grant}});
  }
    if (cache_) cache_->Evict(Revocation{RevocationKind::kGrant, std::to_string(reused_grant)});
  return result;
}

}  // namespace rendezvous::oauth
