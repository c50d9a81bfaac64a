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
        {crypto::Sha256Hex(code), grant.client_id, grant.user_id, grant.redirect_uri, nlohmann::json(grant.scopes).dump(),
         grant.all_scopes, grant.code_challenge, lifetimes_.code_ttl});
  });
  return code;
}

TokenResult CodeExchange::Exchange(const std::string& client_id, const std::string& code,
                                   const std::string& redirect_uri, const std::string& code_verifier,
                                   const ClientCheck& authenticate, const std::string& dpop_jkt) {
  const std::string hash = crypto::Sha256Hex(code);
  int64_t replayed_grant = 0;
  TokenResult result = db_.Transaction([&](DbConnection& tx) -> TokenResult {
    // The client's row, credentials included, is read once: a plain read (the code row below is
    // the one locked), so exchanges of one client never wait for each other on it.
    std::optional<GrantClient> client = ReadGrantClient(tx, client_id);
    if (authenticate) {
      if (auto error = authenticate(client ? std::optional(client->credentials) : std::nullopt)) return *error;
    }
    if (code.empty() || code.size() > kMaxCodeLength) return TokenError::CodeInvalidOrExpired();
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
    if (!client) return TokenError::CodeInvalidOrExpired();
    if (auto error = CheckClientUsable(client->row, row.user_id)) return *error;

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
    TokenResponse out = IssueTokens(tx, grant_id, lifetimes_, TokenBinding{dpop_jkt, dpop_jkt});
    out.scope = ScopeText(scopes, row.all_scopes, client->row);
    return out;
  });
  if (replayed_grant != 0) {
    logger_.Warn("oauth authorization code replayed; grant revoked", {{"client_id", client_id}, {"grant_id", replayed_grant}});
  }
    if (cache_) cache_->Evict(Revocation{RevocationKind::kGrant, std::to_string(replayed_grant)});
  return result;
}

}  // namespace rendezvous::oauth
