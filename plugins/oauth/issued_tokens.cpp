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
constexpr std::string_view kLiveTokenColumns =
    "g.id, g.client_id, g.user_id, g.scopes, g.all_scopes, g.kind, a.dpop_jkt";
constexpr std::string_view kLiveTokensFrom =
    " FROM oauth_access_tokens a"
    " JOIN oauth_grants g ON g.id = a.grant_id"
    " JOIN oauth_clients c ON c.client_id = g.client_id"
    " WHERE a.revoked_at IS NULL AND a.expires_at > UTC_TIMESTAMP(3) AND g.revoked_at IS NULL"
    " AND c.state <> 'rejected' AND a.token_hash ";

// kLiveTokenColumns and the token's hash.
const std::string& LiveTokens() {
  static const std::string sql =
      "SELECT " + std::string(kLiveTokenColumns) + ", a.token_hash" + std::string(kLiveTokensFrom);
  return sql;
}

// A row of LiveTokens().
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
  static const std::string kOne = LiveTokens() + "= ?";
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
  const std::string sql = LiveTokens() + "IN (" + in + ")";
  for (const DbRow& row : conn.QueryUnprepared(sql)) live.emplace(row.String(8), TokenOf(row));
  return live;
}

std::string IssuedTokens::LiveTokenJson(std::string_view hash_expression) {
  std::string sql = "(SELECT JSON_ARRAY(";
  sql += kLiveTokenColumns;
  sql += ")";
  sql += kLiveTokensFrom;
  sql += "= ";
  sql += hash_expression;
  sql += ")";
  return sql;
}

std::optional<ResolvedToken> IssuedTokens::TokenOfJson(std::string_view text) {
  const nlohmann::json a = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  // [id, client_id, user_id, scopes (the column's JSON text), all_scopes, kind, dpop_jkt]
  constexpr size_t kColumns = 7;
  if (!a.is_array() || a.size() != kColumns || !a[0].is_number_integer() || !a[1].is_string() ||
      !a[2].is_number_integer() || !a[3].is_string() || !a[4].is_number_integer() || !a[5].is_string() ||
      !a[6].is_string()) {
    return std::nullopt;
  }
  ResolvedToken t;
  t.grant_id = a[0].get<int64_t>();
  t.client_id = a[1].get<std::string>();
  t.user_id = a[2].get<int64_t>();
  for (std::string& s : JsonList(a[3].get_ref<const std::string&>())) t.scopes.insert(std::move(s));
  t.all_scopes = a[4].get<int64_t>() != 0;
  t.managed = a[5].get_ref<const std::string&>() == "managed";
  t.dpop_jkt = a[6].get<std::string>();
  return t;
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
