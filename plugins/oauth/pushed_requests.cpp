#include "pushed_requests.hpp"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "client_auth.hpp"
#include "rendezvous/crypto.hpp"

namespace rendezvous::oauth {
namespace {

// base64url of kRequestUriRandomBytes bytes, without padding.
constexpr size_t kRandomChars = (kRequestUriRandomBytes * 4 + 2) / 3;

bool IsBase64UrlChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

}  // namespace

std::string PushedParamsJson(const AuthorizeQuery& params) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, member] : kAuthorizeQueryFields) {
    if (params.*member) j[name] = *(params.*member);
  }
  return j.dump();
}

std::optional<AuthorizeQuery> PushedParamsFromJson(std::string_view json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  AuthorizeQuery q;
  for (const auto& [name, member] : kAuthorizeQueryFields) {
    auto it = j.find(name);
    if (it == j.end()) continue;
    if (!it->is_string()) return std::nullopt;
    q.*member = it->get<std::string>();
  }
  q.pushed = true;
  return q;
}

bool IsPushedRequestUri(std::string_view request_uri) {
  if (request_uri.size() != kRequestUriPrefix.size() + kRandomChars) return false;
  if (request_uri.substr(0, kRequestUriPrefix.size()) != kRequestUriPrefix) return false;
  const std::string_view random = request_uri.substr(kRequestUriPrefix.size());
  return std::all_of(random.begin(), random.end(), IsBase64UrlChar);
}

PushedRequests::PushedRequests(Database& db, long ttl_seconds, size_t pending_per_address)
    : db_(db), ttl_(ttl_seconds), pending_per_address_(pending_per_address) {}

std::optional<PushedRequest> PushedRequests::Push(const std::string& client_id,
                                                  const std::string& client_address,
                                                  const AuthorizeQuery& params) {
  if (!CanBeClientId(client_id)) return std::nullopt;
  const std::string address =
      client_address.size() <= kMaxStoredAddressBytes ? client_address : crypto::Sha256Hex(client_address);
  const std::string request_uri =
      std::string(kRequestUriPrefix) + crypto::RandomToken(kRequestUriRandomBytes);
  const std::string stored = PushedParamsJson(params);
  const bool stored_ok = db_.Transaction([&](DbConnection& tx) {
    // The client's row is the lock that makes count-then-insert exact under concurrent pushes.
    if (!tx.QueryOne("SELECT 1 FROM oauth_clients WHERE client_id = ? FOR UPDATE", {client_id})) return false;
    std::optional<DbRow> pending = tx.QueryOne(
        "SELECT COUNT(*) FROM oauth_pushed_requests WHERE client_id = ? AND client_address = ?"
        " AND expires_at > UTC_TIMESTAMP(3)",
        {client_id, address});
    if (pending && pending->Int(1) >= static_cast<int64_t>(pending_per_address_)) return false;
    tx.Exec(
        "INSERT INTO oauth_pushed_requests (uri_hash, client_id, client_address, params, created_at, "
        "expires_at)"
        " VALUES (?, ?, ?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL ? SECOND)",
        {crypto::Sha256Hex(request_uri), client_id, address, stored, ttl_});
    return true;
  });
  if (!stored_ok) return std::nullopt;
  return PushedRequest{request_uri, ttl_};
}

std::optional<AuthorizeQuery> PushedRequests::Peek(const std::string& client_id,
                                                   const std::string& request_uri) {
  if (!CanBeClientId(client_id) || !IsPushedRequestUri(request_uri)) return std::nullopt;
  std::optional<DbRow> row = db_.Run([&](DbConnection& conn) {
    return conn.QueryOne(
        "SELECT client_id, params FROM oauth_pushed_requests WHERE uri_hash = ? AND expires_at > "
        "UTC_TIMESTAMP(3)",
        {crypto::Sha256Hex(request_uri)});
  });
  if (!row || row->String(1) != client_id) return std::nullopt;
  return PushedParamsFromJson(row->String(2));
}

std::optional<AuthorizeQuery> PushedRequests::Consume(const std::string& client_id,
                                                      const std::string& request_uri) {
  if (!CanBeClientId(client_id) || !IsPushedRequestUri(request_uri)) return std::nullopt;
  const std::string hash = crypto::Sha256Hex(request_uri);
  std::optional<std::string> params = db_.Transaction([&](DbConnection& tx) -> std::optional<std::string> {
    std::optional<DbRow> row = tx.QueryOne(
        "SELECT client_id, params FROM oauth_pushed_requests WHERE uri_hash = ? AND expires_at > "
        "UTC_TIMESTAMP(3)"
        " FOR UPDATE",
        {hash});
    if (!row || row->String(1) != client_id) return std::nullopt;
    if (tx.Exec("DELETE FROM oauth_pushed_requests WHERE uri_hash = ?", {hash}) != 1) return std::nullopt;
    return row->String(2);
  });
  if (!params) return std::nullopt;
  return PushedParamsFromJson(*params);
}

}  // namespace rendezvous::oauth
