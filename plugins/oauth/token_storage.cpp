#include "token_storage.hpp"

#include <stdexcept>

#include "rendezvous/crypto.hpp"
#include "revocation_log.hpp"
#include "scopes.hpp"

namespace rendezvous::oauth {

bool WellFormed(std::string_view token, std::string_view prefix) {
  if (token.size() != prefix.size() + kTokenBodyLength || token.substr(0, prefix.size()) != prefix)
    return false;
  for (char c : token.substr(prefix.size())) {
    const bool ok =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

std::optional<ClientRow> LoadClientRow(DbConnection& conn, const std::string& client_id) {
  std::optional<DbRow> row =
      conn.QueryOne("SELECT state, owner_id, scopes FROM oauth_clients WHERE client_id = ?", {client_id});
  if (!row) return std::nullopt;
  return ClientRow{row->String(1), row->Int(2), JsonList(row->String(3))};
}

GrantClient GrantClientFromColumns(const DbRow& row, int first) {
  GrantClient out;
  out.credentials.kind = ParseClientKind(row.String(first)).value_or(ClientKind::kConfidential);
  if (!row.IsNull(first + 1)) {
    const std::string joined = row.String(first + 1);
    for (size_t start = 0; start < joined.size();) {
      size_t comma = joined.find(',', start);
      if (comma == std::string::npos) comma = joined.size();
      out.credentials.active_secret_hashes.push_back(joined.substr(start, comma - start));
      start = comma + 1;
    }
  }
  out.row = ClientRow{row.String(first + 2), row.Int(first + 3), JsonList(row.String(first + 4))};
  return out;
}

std::optional<GrantClient> ReadGrantClient(DbConnection& conn, const std::string& client_id) {
  if (!CanBeClientId(client_id)) return std::nullopt;
  static const std::string kSql =
      std::string("SELECT ") + kGrantClientColumns + " FROM oauth_clients c WHERE c.client_id = ?";
  std::optional<DbRow> row = conn.QueryOne(kSql, {client_id});
  if (!row) return std::nullopt;
  return GrantClientFromColumns(*row, 1);
}
TokenError ClientNotApproved() {
  return TokenError::UnauthorizedClient("the OAuth client is not approved");
}

TokenError ClientPendingReview() {
  return TokenError::UnauthorizedClient("the OAuth client is pending review; only its owner can use it");
}

std::string ScopeText(const std::vector<std::string>& scopes, bool all_scopes, const ClientRow& client) {
  return JoinScopes(all_scopes ? client.scopes : scopes);
}

bool RevokeGrant(DbConnection& conn, int64_t grant_id) {
  if (conn.Exec("UPDATE oauth_grants SET revoked_at = UTC_TIMESTAMP(3) WHERE id = ? AND revoked_at IS NULL",
                {grant_id}) == 0) {
    return false;
  }
  RecordRevocation(conn, Revocation{RevocationKind::kGrant, std::to_string(grant_id)});
  return true;
}

TokenError GrantAnswer::Error() const {
  if (outcome == "client_not_found") return TokenError::ClientNotFound();
  if (outcome == "invalid_client") return TokenError::InvalidClientCredentials();
  if (outcome == "invalid_refresh_token") return TokenError::InvalidRefreshToken();
  if (outcome == "refresh_token_revoked") return TokenError::RefreshTokenRevoked();
  if (outcome == "code_invalid_or_expired") return TokenError::CodeInvalidOrExpired();
  if (outcome == "client_rejected") return ClientNotApproved();
  if (outcome == "client_pending") return ClientPendingReview();
  if (outcome == "dpop_proof_required")
    return TokenError::InvalidGrant("the refresh token is DPoP-bound: a DPoP proof is required");
  if (outcome == "dpop_key_mismatch")
    return TokenError::InvalidGrant("the DPoP proof is not signed by the key the refresh token is bound to");
  if (outcome == "code_verifier_required")
    return TokenError::InvalidRequest("code_verifier is required for public clients");
  throw std::logic_error("a grant procedure answered an unknown outcome: " + outcome);
}

std::string GrantAnswer::Scope() const {
  return all_scopes ? JoinScopes(JsonList(client_scopes)) : JoinScopes(JsonList(scopes));
}

GrantAnswer CallGrantProcedure(Database& db, std::string_view call, DbParams params) {
  constexpr int kAttempts = 4;
  const std::optional<DbRow> row = db.Run([&](DbConnection& conn) {
    for (int attempt = 1;; ++attempt) {
      try {
        return conn.QueryOne(call, params);
      } catch (const DatabaseError& e) {
        const bool retryable = e.code() == kDbErrorDeadlock || e.code() == kDbErrorLockWaitTimeout;
        if (!retryable || attempt == kAttempts) throw;
      }
    }
  });
  if (!row) throw std::logic_error("a grant procedure answered no row");
  GrantAnswer out;
  out.outcome = row->String(1);
  out.scopes = row->String(3);
  out.all_scopes = row->Bool(4);
  out.client_scopes = row->String(5);
  out.revoked_grant = row->Int(6);
  return out;
}

DbValue SecretHashParameter(const PresentedClient& client) {
  if (!client.authenticate || client.secret.empty()) return DbValue();
  if (client.secret.size() > kMaxClientSecretLength) return DbValue(std::string());
  return DbValue(crypto::Sha256Hex(client.secret));
}

std::string BlindParameter(const PresentedClient& client) {
  return client.authenticate && !client.secret.empty() ? crypto::RandomToken(kTokenBytes) : std::string();
}

TokenResponse NewTokenPair(const TokenLifetimes& lifetimes) {
  TokenResponse out;
  out.access_token = std::string(kAccessTokenPrefix) + crypto::RandomToken(kTokenBytes);
  out.refresh_token = std::string(kRefreshTokenPrefix) + crypto::RandomToken(kTokenBytes);
  out.expires_in = lifetimes.access_token_ttl;
  return out;
}

TokenResponse IssueTokens(DbConnection& conn, int64_t grant_id, const TokenLifetimes& lifetimes,
                          const TokenBinding& binding) {
  TokenResponse out = NewTokenPair(lifetimes);
  out.dpop = !binding.access_jkt.empty();
  conn.Exec(
      "INSERT INTO oauth_access_tokens (token_hash, grant_id, created_at, expires_at, dpop_jkt)"
      " VALUES (?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL ? SECOND, ?)",
      {crypto::Sha256Hex(out.access_token), grant_id, lifetimes.access_token_ttl, binding.access_jkt});
  conn.Exec(
      "INSERT INTO oauth_refresh_tokens (token_hash, grant_id, created_at, expires_at, dpop_jkt)"
      " VALUES (?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL ? SECOND, ?)",
      {crypto::Sha256Hex(out.refresh_token), grant_id, lifetimes.refresh_token_ttl, binding.refresh_jkt});
  return out;
}

int64_t InsertGrant(DbConnection& conn, const std::string& client_id, int64_t user_id,
                    const std::vector<std::string>& scopes, bool all_scopes, const char* kind) {
  return conn.InsertReturning(
      "INSERT INTO oauth_grants (client_id, user_id, scopes, all_scopes, kind, created_at)"
      " VALUES (?, ?, ?, ?, ?, UTC_TIMESTAMP(3))",
      {client_id, user_id, nlohmann::json(scopes).dump(), all_scopes, kind});
}

}  // namespace rendezvous::oauth
