#include "managed_user_tokens.hpp"

#include <stdexcept>

#include "scopes.hpp"
#include "token_storage.hpp"

namespace rendezvous::oauth {

ManagedUserTokens::ManagedUserTokens(Database& db, TokenLifetimes lifetimes, TokenCache* cache)
    : db_(db), lifetimes_(lifetimes), cache_(cache) {}

namespace {

// The grant and first tokens of a managed user; the caller's transaction.
TokenResponse IssueOn(DbConnection& tx, const std::string& client_id, int64_t user_id,
                      const TokenLifetimes& lifetimes) {
  std::optional<ClientRow> client = LoadClientRow(tx, client_id);
  if (!client) throw std::runtime_error("OAuth client not found: " + client_id);
  const bool all_scopes = IsLegacyClient(client->scopes);
  const std::vector<std::string> scopes = all_scopes ? std::vector<std::string>{} : client->scopes;
  const int64_t grant_id = InsertGrant(tx, client_id, user_id, scopes, all_scopes, "managed");
  TokenResponse out = IssueTokens(tx, grant_id, lifetimes);
  out.scope = JoinScopes(client->scopes);
  return out;
}

}  // namespace

TokenResponse ManagedUserTokens::Reissue(const std::string& client_id, int64_t user_id) {
  // The log names the user: its tokens of other clients leave the caches too (and come back on
  // their next use), which keeps the log to one kind of row for both revocations here.
  const Revocation revocation{RevocationKind::kUser, std::to_string(user_id)};
  bool revoked = false;
  TokenResponse out = db_.Transaction([&](DbConnection& tx) {
    revoked = tx.Exec(
                  "UPDATE oauth_grants SET revoked_at = UTC_TIMESTAMP(3)"
                  " WHERE user_id = ? AND client_id = ? AND kind = 'managed' AND revoked_at IS NULL",
                  {user_id, client_id}) > 0;
    if (revoked) RecordRevocation(tx, revocation);
    return IssueOn(tx, client_id, user_id, lifetimes_);
  });
  if (revoked && cache_) cache_->Evict(revocation);
  return out;
}

void ManagedUserTokens::RevokeAll(int64_t user_id) {
  const Revocation revocation{RevocationKind::kUser, std::to_string(user_id)};
  const bool revoked = db_.Transaction([&](DbConnection& tx) {
    const bool any =
        tx.Exec(
            "UPDATE oauth_grants SET revoked_at = UTC_TIMESTAMP(3) WHERE user_id = ? AND revoked_at IS NULL",
            {user_id}) > 0;
    if (any) RecordRevocation(tx, revocation);
    return any;
  });
  if (revoked && cache_) cache_->Evict(revocation);
}

TokenResponse ManagedUserTokens::Issue(const std::string& client_id, int64_t user_id,
                                       const std::string& locale) {
  return db_.Transaction([&](DbConnection& tx) {
    tx.Exec(
        "INSERT IGNORE INTO oauth_managed_users (user_id, client_id, locale, created_at)"
        " VALUES (?, ?, ?, UTC_TIMESTAMP(3))",
        {user_id, client_id, locale.empty() ? DbValue() : DbValue(locale)});
    return IssueOn(tx, client_id, user_id, lifetimes_);
  });
}

}  // namespace rendezvous::oauth
