#include "token_service.hpp"

#include "rendezvous/crypto.hpp"
#include "token_storage.hpp"

namespace rendezvous::oauth {

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

}  // namespace rendezvous::oauth
