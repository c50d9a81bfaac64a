#include "token_service.hpp"

#include "rendezvous/crypto.hpp"
#include "scopes.hpp"
#include "token_storage.hpp"

namespace rendezvous::oauth {

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

}  // namespace rendezvous::oauth
