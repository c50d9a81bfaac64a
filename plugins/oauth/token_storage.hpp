// What the token jobs share over the token tables (tokens.hpp describes them):
// token formats, the client's standing at the token endpoint, grant and token rows. Internal to
// the oauth plugin; every function runs on the connection it is given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json_list.hpp"
#include "rendezvous/database.hpp"
#include "tokens.hpp"

namespace rendezvous::oauth {

inline constexpr size_t kTokenBytes = 32;  // 256 bits -> 43 base64url characters
inline constexpr size_t kTokenBodyLength = 43;

// A token of ours: prefix + 43 base64url characters.
bool WellFormed(std::string_view token, std::string_view prefix);

// What the token endpoint needs of a client beyond its credentials: its review state, owner and
// scopes.
struct ClientRow {
  std::string state;
  int64_t owner_id = 0;
  std::vector<std::string> scopes;
};

std::optional<ClientRow> LoadClientRow(DbConnection& conn, const std::string& client_id);

// The requesting client of a grant as one read gives it: its credentials and its row.
struct GrantClient {
  ClientCredentials credentials;
  ClientRow row;
};

// The select list of a GrantClient over `oauth_clients c`: kind, the active secret hashes, state,
// owner and scopes (kGrantClientColumnCount columns), for a grant's query that reads more.
inline constexpr const char* kGrantClientColumns =
    "c.kind, (SELECT GROUP_CONCAT(s.secret_hash) FROM oauth_client_secrets s"
    "   WHERE s.client_id = c.client_id AND s.revoked_at IS NULL),"
    " c.state, c.owner_id, c.scopes";
inline constexpr int kGrantClientColumnCount = 5;
// The GrantClient in the kGrantClientColumns of `row` starting at column `first`.
GrantClient GrantClientFromColumns(const DbRow& row, int first);
// The client `client_id` in one non-locking read; nullopt when there is none (or the id cannot
// name one, without a query).
std::optional<GrantClient> ReadGrantClient(DbConnection& conn, const std::string& client_id);

// Rejected clients get nothing (ClientNotApproved); a pending one only for its owner's own grants
// (testing; ClientPendingReview otherwise).
TokenError ClientNotApproved();
TokenError ClientPendingReview();

// The token response's scope: the granted scopes, or for an all-scopes (legacy) grant the
// client's scopes ("" when it has none).
std::string ScopeText(const std::vector<std::string>& scopes, bool all_scopes, const ClientRow& client);

// Revokes the grant (every token of it) and writes its revocation log row (revocation_log.hpp),
// on the caller's transaction; false when it was revoked already. The caller evicts the grant
// from its TokenCache once the transaction committed. (The grant procedures revoke in the
// database, through the procedure oauth_revoke_grant, which writes the same log row.)
bool RevokeGrant(DbConnection& conn, int64_t grant_id);

// The one row the grant procedures oauth_refresh_grant and oauth_exchange_code answer
// (oauth_migrations.cpp): the outcome, and when tokens were issued the grant's scopes.
struct GrantAnswer {
  std::string outcome;  // "issued" or the refusal
  std::string scopes;   // the grant's scopes (JSON list text)
  bool all_scopes = false;
  std::string client_scopes;  // the client's scopes (JSON list text)
  int64_t revoked_grant = 0;  // the grant this request revoked (reuse, a replayed code), else 0

  bool Issued() const { return outcome == "issued"; }
  // The token endpoint's answer for a refusal; std::logic_error for an outcome no procedure gives.
  TokenError Error() const;
  // The token response's scope (ScopeText).
  std::string Scope() const;
};

// Runs one CALL of a grant procedure in autocommit mode (the procedure commits in the server):
// one round trip. A deadlock or lock wait timeout (a Galera certification conflict too) rolled
// the procedure back; the call is made again, a few times, on the same connection.
GrantAnswer CallGrantProcedure(Database& db, std::string_view call, DbParams params);

// The procedures' p_secret_hash: NULL when no secret was sent (or the caller authenticated the
// client), '' for one too long to be any (never matches), else its SHA-256 hex.
DbValue SecretHashParameter(const PresentedClient& client);
// The procedures' p_blind: a random value for this request when a secret is compared, else ''.
std::string BlindParameter(const PresentedClient& client);

// A fresh access and refresh token, not yet stored; the response has no scope.
TokenResponse NewTokenPair(const TokenLifetimes& lifetimes);
// Inserts a fresh access and refresh token for the grant, bound as `binding` says; returns the
// response without scope (`dpop` set when the access token is bound).
TokenResponse IssueTokens(DbConnection& conn, int64_t grant_id, const TokenLifetimes& lifetimes,
                          const TokenBinding& binding = {});

int64_t InsertGrant(DbConnection& conn, const std::string& client_id, int64_t user_id,
                    const std::vector<std::string>& scopes, bool all_scopes, const char* kind);

}  // namespace rendezvous::oauth
