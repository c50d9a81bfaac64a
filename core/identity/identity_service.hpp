// The core's identity service: users, app-host sessions and CSRF tokens, API keys, /v2/me and
// the sign-in pages. The one implementation of rendezvous::Identity.
//
// Caching (bounded, per process): API key look-ups and FindUser answers are cached for
// `credential_cache_ttl` (default 5 s). Changes made through this instance (revoking a key,
// updating a profile) evict its own entries at once; ANOTHER INSTANCE may keep honouring a revoked
// API key, or show an old profile, for at most `credential_cache_ttl`. Sessions are not cached.
//
// Thread-safe. Methods touching the database may throw DatabaseUnavailable (the HTTP layer answers
// 503). The Database, Logger and Registry must outlive the service, and the service must outlive
// the routes it registered.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "identity/api_key_store.hpp"
#include "identity/login_throttle.hpp"
#include "identity/password_hasher.hpp"
#include "identity/session_store.hpp"
#include "identity/user_store.hpp"
#include "identity/verified_resources.hpp"
#include "rendezvous/bounded_cache.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/http.hpp"
#include "rendezvous/identity.hpp"
#include "rendezvous/log.hpp"
#include "rendezvous/user_extension.hpp"

namespace rendezvous::core {

struct IdentityOptions {
  std::string api_key_prefix = "rdv_";
  std::string app_url = "http://127.0.0.1:8081";  // cookies are Secure when this is https
  std::chrono::seconds session_ttl{14 * 24 * 3600};
  // How long a revoked API key may still work on another instance (and a profile change take to
  // show there). 0 turns the caches off.
  std::chrono::seconds credential_cache_ttl{5};
  int password_hash_threads = 2;
  size_t password_hash_queue = 16;
  int login_failures_per_ip = 50;  // per 15 minutes, whatever the e-mail
};

class IdentityService final : public Identity {
 public:
  static constexpr const char* kSessionCookie = "rdv_session";
  static constexpr const char* kCsrfCookie = "rdv_csrf";

  IdentityService(Database& db, Logger& logger, prometheus::Registry& registry, IdentityOptions options);

  // Owner "identity": tables users, api_keys, sessions, verified_emails, verified_phones,
  // verification_codes, verification_requests.
  static std::vector<Migration> Migrations();

  // Identity
  std::optional<User> FindUser(int64_t id) override;
  std::optional<User> FindUserByEmail(const std::string& email) override;
  using UserDirectory::CreateUser;
  Result<User> CreateUser(const NewUser& fields) override;
  std::optional<User> SessionUser(const Request& req) override;
  std::string CsrfToken(const Request& req, Response& res) override;
  bool CheckCsrf(const Request& req, const std::string& token) override;
  Json UserJson(const User& user) override;

  // API keys (see api_key_store.hpp). The key of CreatedKey is shown once, never stored.
  using CreatedKey = ApiKeyStore::CreatedKey;
  Result<CreatedKey> CreateApiKey(int64_t user_id, const std::string& name);
  Status RevokeApiKey(int64_t user_id, int64_t key_id);
  // A BearerResolver for API keys: kind kApiKey, all_scopes = true.
  std::optional<Principal> ResolveApiKey(std::string_view token);

  // The plugins' parts of a user (user_extension.hpp): their fields in /v2/me and PATCH /v2/me,
  // their rows written with a new user. Set at start-up before serving, and cleared (empty) before
  // the plugins go. Throws std::runtime_error naming the field when two parts own one field, or a
  // part claims one of the host's own fields.
  void SetUserExtensions(std::vector<std::shared_ptr<UserExtension>> extensions);

  // PATCH /v2/me: name, timeZone, weekStart, username, timeFormat (see ParseProfilePatch) and
  // the fields of the user's extensions, all in one transaction; kNotFound for an unknown user, kConflict
  // "username_taken".
  Result<User> UpdateProfile(int64_t user_id, const Json& patch) override;
  Status DeleteUser(int64_t user_id) override;

  // Turns on the verified e-mails and phone numbers (/v2/verified-resources/..., see
  // verified_resource_routes.hpp): codes go out through `mailer` and `sms`, which must outlive the
  // service. Call once, before RegisterRoutes.
  void EnableVerifiedResources(Mailer& mailer, SmsSender& sms);

  // GET/PATCH /v2/me on the api listener; GET/POST /auth/login and POST /auth/logout on the app
  // listener; /v2/verified-resources/... when enabled.
  void RegisterRoutes(const std::function<void(Route)>& add);

 private:
  Response GetMe(Request& req);
  Response PatchMe(Request& req);
  Response ShowLogin(Request& req);
  Response SubmitLogin(Request& req);
  Response Logout(Request& req);
  // `/` on the app host: the signed-in account with a sign-out button; the sign-in page otherwise.
  Response ShowHome(Request& req);

  std::optional<Session> CurrentSession(const Request& req);
  std::string SessionCookie(const std::string& token) const;
  std::string ExpiredCookie(const char* name) const;
  Response LoginPageResponse(const Request& req, int status, const std::string& email,
                             const std::string& next, const std::string& error);
  const std::string& DummyPasswordHash();

  Database& db_;
  Logger& logger_;
  const IdentityOptions options_;
  const bool secure_cookies_;
  UserStore users_;
  SessionStore sessions_;
  ApiKeyStore api_keys_;
  LoginThrottle throttle_;     // per e-mail and client address
  LoginThrottle ip_throttle_;  // per client address
  PasswordHasher hasher_;
  BoundedCache<int64_t, User> user_cache_;
  prometheus::Counter& logins_ok_;
  prometheus::Counter& logins_failed_;
  prometheus::Counter& logins_throttled_;
  std::once_flag dummy_hash_once_;
  std::string dummy_hash_;
  std::unique_ptr<VerifiedResourceService> verified_;
  std::vector<std::shared_ptr<UserExtension>> extensions_;
  std::set<std::string> extension_fields_;  // every field the extensions own
};

}  // namespace rendezvous::core
