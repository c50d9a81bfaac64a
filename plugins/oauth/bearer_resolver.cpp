#include "token_service.hpp"

#include "rendezvous/crypto.hpp"
#include "token_storage.hpp"

namespace rendezvous::oauth {

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

}  // namespace rendezvous::oauth
