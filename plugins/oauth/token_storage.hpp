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

// Rejected clients get nothing; a pending one only for its owner's own grants (testing).
std::optional<TokenError> CheckClientUsable(const ClientRow& client, int64_t user_id);

// The token response's scope: the granted scopes, or for an all-scopes (legacy) grant the
// client's scopes ("" when it has none).
std::string ScopeText(const std::vector<std::string>& scopes, bool all_scopes, const ClientRow& client);

// Revokes the grant (every token of it) and writes its revocation log row (revocation_log.hpp),
// on the caller's transaction; false when it was revoked already. The caller evicts the grant
// from its TokenCache once the transaction committed.
bool RevokeGrant(DbConnection& conn, int64_t grant_id);

// A fresh access and refresh token, not yet stored; the response has no scope.
TokenResponse NewTokenPair(const TokenLifetimes& lifetimes);
// Inserts a fresh access and refresh token for the grant, bound as `binding` says; returns the
// response without scope (`dpop` set when the access token is bound).
TokenResponse IssueTokens(DbConnection& conn, int64_t grant_id, const TokenLifetimes& lifetimes,
                          const TokenBinding& binding = {});

int64_t InsertGrant(DbConnection& conn, const std::string& client_id, int64_t user_id,
                    const std::vector<std::string>& scopes, bool all_scopes, const char* kind);

}  // namespace rendezvous::oauth
