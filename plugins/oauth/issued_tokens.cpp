#include "issued_tokens.hpp"

#include <stdexcept>

#include "rendezvous/crypto.hpp"
#include "scopes.hpp"
#include "token_storage.hpp"

namespace rendezvous::oauth {

IssuedTokens::IssuedTokens(Database& db) : db_(db) {}

namespace {

constexpr size_t kMaxLiveByHash = 1000;

// The live access tokens, ended by the condition on a.token_hash ("= ?" or "IN (…)"): a token not
// expired or revoked, on a live grant of a client that is not rejected.
constexpr const char* kLiveTokens =
    "SELECT g.id, g.client_id, g.user_id, g.scopes, g.all_scopes, g.kind, a.dpop_jkt, a.token_hash"
    " FROM oauth_access_tokens a"
    " JOIN oauth_grants g ON g.id = a.grant_id"
    " JOIN oauth_clients c ON c.client_id = g.client_id"
    " WHERE a.revoked_at IS NULL AND a.expires_at > UTC_TIMESTAMP(3) AND g.revoked_at IS NULL"
    " AND c.state <> 'rejected' AND a.token_hash ";

// A row of kLiveTokens.
ResolvedToken TokenOf(const DbRow& row) {
  ResolvedToken t;
  t.grant_id = row.Int(1);
  t.client_id = row.String(2);
  t.user_id = row.Int(3);
  for (std::string& s : JsonList(row.String(4))) t.scopes.insert(std::move(s));
  t.all_scopes = row.Bool(5);
  t.managed = row.String(6) == "managed";
  t.dpop_jkt = row.String(7);
  return t;
}

}  // namespace

std::optional<ResolvedToken> IssuedTokens::Resolve(std::string_view token) {
  if (!WellFormed(token, kAccessTokenPrefix)) return std::nullopt;
  const std::string hash = crypto::Sha256Hex(token);
  return db_.Run([&](DbConnection& conn) { return LiveOne(conn, hash); });
}

std::optional<ResolvedToken> IssuedTokens::LiveOne(DbConnection& conn, const std::string& hash) {
  static const std::string kOne = std::string(kLiveTokens) + "= ?";
  std::optional<DbRow> row = conn.QueryOne(kOne, {hash});
  if (!row) return std::nullopt;
  return TokenOf(*row);
}

std::unordered_map<std::string, ResolvedToken> IssuedTokens::LiveByHash(
    DbConnection& conn, const std::vector<std::string>& hashes) {
  std::unordered_map<std::string, ResolvedToken> live;
  if (hashes.empty()) return live;
  if (hashes.size() > kMaxLiveByHash) throw std::invalid_argument("LiveByHash: at most 1000 hashes");
  if (hashes.size() == 1) {
    // One token: Resolve's prepared statement.
    if (std::optional<ResolvedToken> one = LiveOne(conn, hashes.front()))
      live.emplace(hashes.front(), *std::move(one));
    return live;
  }
  std::string in;
  in.reserve(hashes.size() * 68);
  for (const std::string& hash : hashes) {
    // Written into the statement: only what a SHA-256 hex digest can be.
    if (hash.size() != 64 || hash.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw std::invalid_argument("LiveByHash: a hash is 64 lowercase hexadecimal characters");
    in += in.empty() ? "'" : ", '";
    in += hash;
    in += '\'';
  }
  const std::string sql = std::string(kLiveTokens) + "IN (" + in + ")";
  for (const DbRow& row : conn.QueryUnprepared(sql)) live.emplace(row.String(8), TokenOf(row));
  return live;
}

void IssuedTokens::Revoke(const std::string& client_id, const std::string& token) {
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

nlohmann::json IssuedTokens::Introspect(const std::string& client_id, const std::string& token) {
  const bool access = WellFormed(token, kAccessTokenPrefix);
  if (!access && !WellFormed(token, kRefreshTokenPrefix)) return {{"active", false}};
  const std::string hash = crypto::Sha256Hex(token);
  const std::string table = access ? "oauth_access_tokens" : "oauth_refresh_tokens";
  const std::string extra = access ? "" : " AND t.rotated_at IS NULL";
  return db_.Run([&](DbConnection& conn) -> nlohmann::json {
    std::optional<DbRow> rs = conn.QueryOne(
        "SELECT g.user_id, g.scopes, g.all_scopes, c.scopes, TIMESTAMPDIFF(SECOND, '1970-01-01', "
        "t.expires_at), TIMESTAMPDIFF(SECOND, '1970-01-01', t.created_at), t.dpop_jkt"
        " FROM " +
            table +
            " t JOIN oauth_grants g ON g.id = t.grant_id"
            " JOIN oauth_clients c ON c.client_id = g.client_id"
            " WHERE t.token_hash = ? AND g.client_id = ? AND t.revoked_at IS NULL AND t.expires_at > "
            "UTC_TIMESTAMP(3)"
            " AND g.revoked_at IS NULL AND c.state <> 'rejected'" +
            extra,
        {hash, client_id});
    if (!rs) return {{"active", false}};
    const bool all_scopes = rs->Bool(3);
    const std::vector<std::string> scopes = JsonList(rs->String(all_scopes ? 4 : 2));
    const std::string jkt = rs->String(7);
    nlohmann::json out = {{"active", true},
                          {"scope", JoinScopes(scopes)},
                          {"client_id", client_id},
                          {"sub", std::to_string(rs->Int(1))},
                          {"exp", rs->Int(5)},
                          {"iat", rs->Int(6)},
                          {"token_type", access ? (jkt.empty() ? "bearer" : "DPoP") : "refresh_token"}};
    if (!jkt.empty()) out["cnf"] = {{"jkt", jkt}};
    return out;
  });
}

}  // namespace rendezvous::oauth
