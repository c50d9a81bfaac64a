// OAuth clients: registration, settings, admin review and secrets (spec §2.1, §3.1, §3.3, §5.4).
// The one service layer behind the command line and the pages. Thread-safe (no mutable state of
// its own); every method is one database transaction and may throw DatabaseUnavailable.
//
// Storage (owner "oauth"): oauth_clients (one row per client; redirect URIs and scopes as JSON
// text) and oauth_client_secrets (SHA-256 hex of each secret, its last 4 characters as the hint,
// revoked_at once revoked; rows are kept for the audit trail). Operations that check and change a
// client's secrets or state lock the client row (SELECT ... FOR UPDATE) first, so concurrent
// calls cannot, say, both see one active secret and make three.
//
// Decision the specification leaves open (§3.1): a rejected client edited by its owner goes back
// to pending for a new review (DecideAfterUpdate); a save that changes nothing leaves it rejected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "client_auth.hpp"
#include "client_policy.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"
#include "rendezvous/mailer.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/user.hpp"

namespace rendezvous::oauth {

// The most code points a review's reason may have (the review page and ClientService::Review).
inline constexpr size_t kMaxReviewReasonChars = 1000;

class TokenCache;
class ClientCache;

using Json = nlohmann::json;

struct ClientSecretInfo {
  int64_t secret_id = 0;
  std::string hint;        // last 4 characters of the secret
  std::string created_at;  // ISO 8601 UTC
};

struct OAuthClient {
  std::string client_id;
  int64_t owner_id = 0;
  ClientKind kind = ClientKind::kConfidential;
  ClientState state = ClientState::kPending;
  std::string review_reason;  // reason given with the last rejection ("" otherwise)
  ClientSettings settings;    // name, logo, website, purpose, redirect_uris, scopes
  bool legacy = false;        // IsLegacyClient(settings.scopes)
  // Plain authorization requests are refused: only pushed ones (RFC 9126) are accepted. Not a
  // setting that sends the client back to review (it only narrows what the client may do).
  bool require_par = false;
  std::vector<ClientSecretInfo> secrets;  // active ones only
  std::string created_at;
  std::string updated_at;
};

// DESIGN §3: {"client_id","client_secret"(only when given),"name","kind","state","legacy","scopes",
// "redirect_uris","secrets":[{"secret_id","hint","created_at"}],"owner_id","require_par"} plus
// logo, website, purpose and review_reason.
Json ClientJson(const OAuthClient& client, const std::optional<std::string>& client_secret = std::nullopt);

struct NewClient {
  int64_t owner_id = 0;
  ClientKind kind = ClientKind::kConfidential;
  ClientSettings settings;
  bool allow_no_scopes = false;  // the command line may create legacy clients; the page may not
  bool require_par = false;
};

// A change to a client's settings. Unset fields stay as they are.
struct ClientUpdate {
  std::optional<std::string> name, logo, website, purpose;
  std::optional<std::vector<std::string>> redirect_uris;  // replaces the list
  std::optional<std::vector<std::string>> scopes;         // replaces the list (the settings page)
  std::vector<std::string> add_scopes, remove_scopes;     // applied after `scopes` (command line)
  std::optional<bool> require_par;                        // never a reason for a new review
};

struct CreatedSecret {
  ClientSecretInfo info;
  std::string secret;  // shown once
};

class ClientService {
 public:
  // Every change to a client (its row or its secrets) writes a 'client' row to the revocation log
  // in its transaction (revocation_log.hpp) and, once committed, drops the client from `clients`
  // and its tokens from `cache` (when given): a rejected client's tokens and the scopes its
  // all-scopes grants show are read again, and so are its credentials.
  ClientService(Database& db, UserDirectory& users, Mailer& mailer, Logger& logger,
                TokenCache* cache = nullptr, ClientCache* clients = nullptr);

  // Creates a pending client; a confidential one gets its first secret (returned once).
  // kInvalid with a clear message for any bad field; nothing is stored then.
  Result<std::pair<OAuthClient, std::optional<std::string>>> Create(const NewClient& request);
  // `acting_owner`: when set, the client must belong to that user (else kNotFound, so existence
  // is not leaked). nullopt: an operator (command line).
  Result<OAuthClient> Get(const std::string& client_id, std::optional<int64_t> acting_owner = std::nullopt);
  std::vector<OAuthClient> ListByOwner(int64_t owner_id);
  std::vector<OAuthClient> ListByState(ClientState state);  // admin review page
  // Applies the change and the re-approval decision of §3.1 (DecideAfterUpdate).
  Result<OAuthClient> Update(const std::string& client_id, std::optional<int64_t> acting_owner,
                             const ClientUpdate& update);
  // Admin review: pending -> approved / rejected (kConflict from another state); mails the owner.
  Result<OAuthClient> Review(const std::string& client_id, bool accept, const std::string& reason);
  // At most 2 active secrets (kConflict "a client has at most 2 active secrets"); public clients
  // have none (kInvalid).
  Result<CreatedSecret> GenerateSecret(const std::string& client_id, std::optional<int64_t> acting_owner);
  // Immediate; the last active secret cannot be revoked (kConflict).
  Status RevokeSecret(const std::string& client_id, int64_t secret_id, std::optional<int64_t> acting_owner);
  // For the token endpoint: constant-time check against the active secrets' hashes.
  bool VerifySecret(const std::string& client_id, const std::string& secret);
  // What client authentication (client_auth.hpp) needs: the client's kind and its active secrets'
  // hashes, from the client cache when it holds them, else in one query (then kept there);
  // nullopt when there is no such client (never kept). A revoked secret is refused at once by
  // this instance and within 1 s by the others (§3.3; client_cache.hpp).
  std::optional<ClientCredentials> LoadCredentials(const std::string& client_id);

 private:
  std::vector<OAuthClient> ListWhere(const std::string& column, const std::string& value);
  // After a committed change to the client: drops it and its tokens from this instance's caches.
  void Forget(const std::string& client_id);

  Database& db_;
  UserDirectory& users_;
  Mailer& mailer_;
  Logger& logger_;
  TokenCache* cache_;
  ClientCache* clients_;
};

}  // namespace rendezvous::oauth
