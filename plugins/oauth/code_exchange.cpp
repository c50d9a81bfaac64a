#include "code_exchange.hpp"

#include "pkce.hpp"
#include "rendezvous/crypto.hpp"
#include "token_storage.hpp"

namespace rendezvous::oauth {
namespace {

constexpr size_t kMaxCodeLength = 256;

}  // namespace

CodeExchange::CodeExchange(Database& db, Logger& logger, TokenLifetimes lifetimes, TokenCache* cache)
    : db_(db), logger_(logger), lifetimes_(lifetimes), cache_(cache) {}

std::string CodeExchange::IssueCode(const CodeGrant& grant) {
  const std::string code = crypto::RandomToken(kTokenBytes);
  db_.Run([&](DbConnection& conn) {
    conn.Exec(
        "INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, scopes, all_scopes,"
        " code_challenge, created_at, expires_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL ? SECOND)",
        {crypto::Sha256Hex(code), grant.client_id, grant.user_id, grant.redirect_uri,
         nlohmann::json(grant.scopes).dump(), grant.all_scopes, grant.code_challenge, lifetimes_.code_ttl});
  });
  return code;
}

TokenResult CodeExchange::Exchange(const std::string& client_id, const std::string& code,
                                   const std::string& redirect_uri, const std::string& code_verifier,
                                   const PresentedClient& client, const std::string& dpop_jkt) {
  if (!CanBeClientId(client_id)) {
    return client.authenticate ? TokenError::ClientNotFound() : TokenError::CodeInvalidOrExpired();
  }
  // A malformed code is NULL (refused once the client is authenticated); a malformed verifier a
  // challenge no code has.
  const DbValue code_hash =
      code.empty() || code.size() > kMaxCodeLength ? DbValue() : DbValue(crypto::Sha256Hex(code));
  const std::string challenge = code_verifier.empty()                ? std::string()
                                : IsValidCodeVerifier(code_verifier) ? S256Challenge(code_verifier)
                                                                     : "!";
  TokenResponse out = NewTokenPair(lifetimes_);
  out.dpop = !dpop_jkt.empty();
  const GrantAnswer answer =
      CallGrantProcedure(db_, "CALL oauth_exchange_code(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         {client_id, client.authenticate, SecretHashParameter(client), BlindParameter(client),
                          !code_verifier.empty(), code_hash, redirect_uri, challenge,
                          crypto::Sha256Hex(out.access_token), crypto::Sha256Hex(out.refresh_token),
                          lifetimes_.access_token_ttl, lifetimes_.refresh_token_ttl, dpop_jkt});
  if (answer.revoked_grant != 0) {
    logger_.Warn("oauth authorization code replayed; grant revoked",
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
