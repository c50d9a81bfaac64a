#include "refresh_grant.hpp"

#include "rendezvous/crypto.hpp"
#include "token_storage.hpp"

namespace rendezvous::oauth {

RefreshGrant::RefreshGrant(Database& db, Logger& logger, TokenLifetimes lifetimes, TokenCache* cache)
    : db_(db), logger_(logger), lifetimes_(lifetimes), cache_(cache) {}

TokenResult RefreshGrant::Refresh(const std::string& client_id, const std::string& refresh_token,
                                  const PresentedClient& client, const std::string& dpop_jkt) {
  if (client_id.empty() || client_id.size() > kMaxClientIdLength) return TokenError::ClientNotFound();
  if (!CanBeClientId(client_id)) {
    return client.authenticate ? TokenError::ClientNotFound() : TokenError::InvalidRefreshToken();
  }
  // A malformed token is looked up as "" (which matches nothing), so that the client is still
  // authenticated first: a bad secret answers invalid_client whatever the token.
  const std::string old_hash =
      WellFormed(refresh_token, kRefreshTokenPrefix) ? crypto::Sha256Hex(refresh_token) : std::string();
  TokenResponse out = NewTokenPair(lifetimes_);
  out.dpop = !dpop_jkt.empty();
  const GrantAnswer answer =
      CallGrantProcedure(db_, "CALL oauth_refresh_grant(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         {client_id, client.authenticate, SecretHashParameter(client), BlindParameter(client),
                          old_hash, crypto::Sha256Hex(out.access_token), crypto::Sha256Hex(out.refresh_token),
                          lifetimes_.access_token_ttl, lifetimes_.refresh_token_ttl, dpop_jkt});
  if (answer.revoked_grant != 0) {
    logger_.Warn("oauth refresh token reused; grant revoked",
                 {{"client_id", client_id}, {"grant_id", answer.revoked_grant}});
  }
  // The procedure committed the revocation (and its log row, which the other instances read).
  if (answer.revoked_grant != 0 && cache_) {
    cache_->Evict(Revocation{RevocationKind::kGrant, std::to_string(answer.revoked_grant)});
  }
  if (!answer.Issued()) return answer.Error();
  out.scope = answer.Scope();
  return out;
}

}  // namespace rendezvous::oauth
