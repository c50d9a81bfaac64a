#include "identity/api_key_store.hpp"

#include <memory>


#include "identity/validation.hpp"
#include "rendezvous/crypto.hpp"

namespace rendezvous::core {
namespace {

constexpr size_t kKeyRandomChars = 43;  // 32 bytes in base64url without padding

prometheus::Family<prometheus::Counter>& CacheFamily(prometheus::Registry& registry) {
  return prometheus::BuildCounter()
      .Name("identity_api_key_cache_total")
      .Help("API key look-ups answered from the in-process cache (hit) or the database (miss)")
      .Register(registry);
}

}  // namespace

ApiKeyStore::ApiKeyStore(Database& db, prometheus::Registry& registry, std::string prefix,
                         std::chrono::seconds cache_ttl, size_t cache_capacity, NowFn now)
    : db_(db),
      prefix_(std::move(prefix)),
      cache_(cache_capacity, std::chrono::duration_cast<std::chrono::milliseconds>(cache_ttl),
             std::move(now)),
      cache_hits_(CacheFamily(registry).Add({{"result", "hit"}})),
      cache_misses_(CacheFamily(registry).Add({{"result", "miss"}})) {}

bool ApiKeyStore::WellFormed(std::string_view token) const {
  if (token.size() != prefix_.size() + kKeyRandomChars || token.substr(0, prefix_.size()) != prefix_) {
    return false;
  }
  for (char c : token.substr(prefix_.size())) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

Result<ApiKeyStore::CreatedKey> ApiKeyStore::Create(int64_t user_id, const std::string& name) {
  std::string key_name = name.empty() ? "default" : name;
  auto checked = ValidateName(key_name);
  if (!checked.ok()) return Status(ErrorCode::kInvalid, "api key " + checked.status().message());
  CreatedKey created;
  created.key = prefix_ + crypto::RandomToken(32);
  std::string hash = crypto::Sha256Hex(created.key);
  std::string hint = created.key.substr(created.key.size() - 4);
  auto id = db_.Run([&](DbConnection& conn) -> Result<int64_t> {
    try {
      conn.Exec(
          "INSERT INTO api_keys (user_id, name, key_hash, hint, created_at) "
          "VALUES (?, ?, ?, ?, UTC_TIMESTAMP(3))",
          {user_id, *checked, hash, hint});
    } catch (const DatabaseError& e) {
      if (e.code() == kDbErrorNoReferencedRow) return Status(ErrorCode::kNotFound, "user not found");
      throw;
    }
    return conn.LastInsertId();
  });
  if (!id.ok()) return id.status();
  created.id = *id;
  // A look-up of this very key may have been cached as unknown before it existed.
  cache_.Erase(hash);
  return created;
}

Status ApiKeyStore::Revoke(int64_t user_id, int64_t key_id) {
  auto hash = db_.Transaction([&](DbConnection& conn) -> std::optional<std::string> {
    std::optional<DbRow> row =
        conn.QueryOne("SELECT key_hash FROM api_keys WHERE id = ? AND user_id = ? FOR UPDATE", {key_id, user_id});
    if (!row) return std::nullopt;
    conn.Exec("UPDATE api_keys SET revoked_at = UTC_TIMESTAMP(3) WHERE id = ? AND revoked_at IS NULL", {key_id});
    return row->String(1);
  });
  if (!hash) return Status(ErrorCode::kNotFound, "api key not found");
  cache_.Erase(*hash);
  return Status::Ok();
}

std::vector<std::string> ApiKeyStore::KeyHashes(int64_t user_id) {
  return db_.Run([&](DbConnection& conn) {
    std::vector<std::string> hashes;
    for (const DbRow& row : conn.Query("SELECT key_hash FROM api_keys WHERE user_id = ?", {user_id})) {
      hashes.push_back(row.String(1));
    }
    return hashes;
  });
}

void ApiKeyStore::Evict(const std::vector<std::string>& hashes) {
  for (const std::string& hash : hashes) cache_.Erase(hash);
}

std::optional<Principal> ApiKeyStore::Resolve(std::string_view token) {
  if (!WellFormed(token)) return std::nullopt;
  std::string hash = crypto::Sha256Hex(token);
  auto to_principal = [](const Cached& c) -> std::optional<Principal> {
    if (!c.valid) return std::nullopt;
    Principal p;
    p.kind = kApiKey;
    p.user_id = c.user_id;
    p.credential_id = c.id;
    p.all_scopes = true;
    return p;
  };
  if (auto cached = cache_.Get(hash)) {
    cache_hits_.Increment();
    return to_principal(*cached);
  }
  cache_misses_.Increment();
  Cached found = db_.Run([&](DbConnection& conn) {
    std::optional<DbRow> row = conn.QueryOne(
        "SELECT id, user_id, revoked_at IS NULL, "
        "last_used_at IS NULL OR last_used_at < UTC_TIMESTAMP(3) - INTERVAL 1 MINUTE "
        "FROM api_keys WHERE key_hash = ?",
        {hash});
    Cached c;
    if (!row) return c;
    c.id = row->Int(1);
    c.user_id = row->Int(2);
    c.valid = row->Bool(3);
    const bool stale = row->Bool(4);
    if (c.valid && stale) {
      conn.Exec(
          "UPDATE api_keys SET last_used_at = UTC_TIMESTAMP(3) WHERE id = ? AND "
          "(last_used_at IS NULL OR last_used_at < UTC_TIMESTAMP(3) - INTERVAL 1 MINUTE)",
          {c.id});
    }
    return c;
  });
  cache_.Put(hash, found);
  return to_principal(found);
}

}  // namespace rendezvous::core
