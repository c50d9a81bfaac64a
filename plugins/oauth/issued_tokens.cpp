#include "issued_tokens.hpp"

#include <stdexcept>

#include "rendezvous/crypto.hpp"
#include "revocation_log.hpp"
#include "scopes.hpp"
#include "token_cache.hpp"
#include "token_storage.hpp"

namespace rendezvous::oauth {

IssuedTokens::IssuedTokens(Database& db, TokenCache* cache) : db_(db), cache_(cache) {}

namespace {

constexpr size_t kMaxLiveByHash = 1000;

// The live access tokens, ended by the condition on a.token_hash ("= ?" or "IN (…)"): a token not
// expired or revoked, on a live grant of a client that is not rejected.
constexpr std::string_view kLiveTokenColumns =
    "g.id, g.client_id, g.user_id, g.scopes, g.all_scopes, g.kind, a.dpop_jkt, c.scopes,"
    " TIMESTAMPDIFF(SECOND, '1970-01-01', a.expires_at), TIMESTAMPDIFF(SECOND, '1970-01-01', a.created_at),"
    " TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(3), a.expires_at) DIV 1000";
constexpr int kLiveTokenColumnCount = 11;
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
  std::vector<std::string> scopes = JsonList(row.String(4));
  t.all_scopes = row.Bool(5);
  t.scope_text = JoinScopes(t.all_scopes ? JsonList(row.String(8)) : scopes);
  for (std::string& s : scopes) t.scopes.insert(std::move(s));
  t.managed = row.String(6) == "managed";
  t.dpop_jkt = row.String(7);
  t.expires_at = row.Int(9);
  t.issued_at = row.Int(10);
  t.expires_in_ms = row.Int(11);
  return t;
}

}  // namespace

std::optional<ResolvedToken> IssuedTokens::Resolve(std::string_view token) {
  if (!WellFormed(token, kAccessTokenPrefix)) return std::nullopt;
  return ResolveHash(crypto::Sha256Hex(token));
}

std::optional<ResolvedToken> IssuedTokens::ResolveHash(const std::string& hash) {
  if (!cache_) return db_.Run([&](DbConnection& conn) { return LiveOne(conn, hash); });
  if (std::optional<ResolvedToken> cached = cache_->Get(hash)) return cached;
  const TokenCache::Ticket ticket = cache_->Take();
  std::optional<ResolvedToken> live = db_.Run([&](DbConnection& conn) { return LiveOne(conn, hash); });
  if (live) cache_->Put(hash, *live, ticket);
  return live;
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
  for (const DbRow& row : conn.QueryUnprepared(sql))
    live.emplace(row.String(kLiveTokenColumnCount + 1), TokenOf(row));
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
  // [id, client_id, user_id, scopes (the column's JSON text), all_scopes, kind, dpop_jkt,
  //  client scopes (JSON text), expires_at, issued_at, expires_in_ms]
  constexpr size_t kColumns = kLiveTokenColumnCount;
  if (!a.is_array() || a.size() != kColumns || !a[0].is_number_integer() || !a[1].is_string() ||
      !a[2].is_number_integer() || !a[3].is_string() || !a[4].is_number_integer() || !a[5].is_string() ||
      !a[6].is_string() || !a[7].is_string() || !a[8].is_number_integer() || !a[9].is_number_integer() ||
      !a[10].is_number_integer()) {
    return std::nullopt;
  }
  ResolvedToken t;
  t.grant_id = a[0].get<int64_t>();
  t.client_id = a[1].get<std::string>();
  t.user_id = a[2].get<int64_t>();
  std::vector<std::string> scopes = JsonList(a[3].get_ref<const std::string&>());
  t.all_scopes = a[4].get<int64_t>() != 0;
  t.scope_text = JoinScopes(t.all_scopes ? JsonList(a[7].get_ref<const std::string&>()) : scopes);
  for (std::string& s : scopes) t.scopes.insert(std::move(s));
  t.managed = a[5].get_ref<const std::string&>() == "managed";
  t.dpop_jkt = a[6].get<std::string>();
  t.expires_at = a[8].get<int64_t>();
  t.issued_at = a[9].get<int64_t>();
  t.expires_in_ms = a[10].get<int64_t>();
  return t;
}

void IssuedTokens::Revoke(const std::string& client_id, const std::string& token) {
  const bool access = WellFormed(token, kAccessTokenPrefix);
  if (!access && !WellFormed(token, kRefreshTokenPrefix)) return;
  const std::string hash = crypto::Sha256Hex(token);
  std::optional<Revocation> revoked = db_.Transaction([&](DbConnection& tx) -> std::optional<Revocation> {
    if (access) {
      const uint64_t n = tx.Exec(
          "UPDATE oauth_access_tokens a JOIN oauth_grants g ON g.id = a.grant_id"
          " SET a.revoked_at = UTC_TIMESTAMP(3) WHERE a.token_hash = ? AND g.client_id = ? AND a.revoked_at "
          "IS NULL",
          {hash, client_id});
      if (n == 0) return std::nullopt;
      Revocation r{RevocationKind::kToken, hash};
      RecordRevocation(tx, r);
      return r;
    }
    std::optional<DbRow> grant = tx.QueryOne(
        "SELECT g.id FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id"
        " WHERE r.token_hash = ? AND g.client_id = ?",
        {hash, client_id});
    if (!grant || !RevokeGrant(tx, grant->Int(1))) return std::nullopt;
    return Revocation{RevocationKind::kGrant, std::to_string(grant->Int(1))};
  });
  if (revoked && cache_) cache_->Evict(*revoked);
}

nlohmann::json IssuedTokens::Introspect(const std::string& client_id, const std::string& token) {
  const bool access = WellFormed(token, kAccessTokenPrefix);
  if (!access && !WellFormed(token, kRefreshTokenPrefix)) return {{"active", false}};
  const std::string hash = crypto::Sha256Hex(token);
  if (access) {
    // The live token as a protected route sees it (from the cache when it holds it).
    std::optional<ResolvedToken> live = ResolveHash(hash);
    if (!live || live->client_id != client_id) return {{"active", false}};
    nlohmann::json out = {{"active", true},
                          {"scope", live->scope_text},
                          {"client_id", client_id},
                          {"sub", std::to_string(live->user_id)},
                          {"exp", live->expires_at},
                          {"iat", live->issued_at},
                          {"token_type", live->dpop_jkt.empty() ? "bearer" : "DPoP"}};
    if (!live->dpop_jkt.empty()) out["cnf"] = {{"jkt", live->dpop_jkt}};
    return out;
  }
  return db_.Run([&](DbConnection& conn) -> nlohmann::json {
    std::optional<DbRow> rs = conn.QueryOne(
        "SELECT g.user_id, g.scopes, g.all_scopes, c.scopes, TIMESTAMPDIFF(SECOND, '1970-01-01', "
        "t.expires_at), TIMESTAMPDIFF(SECOND, '1970-01-01', t.created_at), t.dpop_jkt"
        " FROM oauth_refresh_tokens t JOIN oauth_grants g ON g.id = t.grant_id"
        " JOIN oauth_clients c ON c.client_id = g.client_id"
        " WHERE t.token_hash = ? AND g.client_id = ? AND t.revoked_at IS NULL AND t.expires_at > "
        "UTC_TIMESTAMP(3)"
        " AND g.revoked_at IS NULL AND c.state <> 'rejected' AND t.rotated_at IS NULL",
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
                          {"token_type", "refresh_token"}};
    if (!jkt.empty()) out["cnf"] = {{"jkt", jkt}};
    return out;
  });
}

}  // namespace rendezvous::oauth
