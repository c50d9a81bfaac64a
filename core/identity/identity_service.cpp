#include "identity/identity_service.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "identity/login_page.hpp"
#include "identity/migrations.hpp"
#include "identity/validation.hpp"
#include "identity/verified_resource_routes.hpp"
#include "rendezvous/crypto.hpp"
#include "rendezvous/pages.hpp"

namespace rendezvous::core {
namespace {

constexpr const char* kInvalidCredentials = "Invalid email or password.";
constexpr const char* kFormExpired = "Your sign-in form expired. Please try again.";
constexpr const char* kThrottled = "Too many failed sign-in attempts. Please try again later.";
constexpr const char* kBusy = "Too many people are signing in right now. Please try again in a moment.";
constexpr size_t kMaxCsrfTokenBytes = 128;


prometheus::Family<prometheus::Counter>& LoginFamily(prometheus::Registry& registry) {
  return prometheus::BuildCounter()
      .Name("identity_logins_total")
      .Help("Sign-in attempts on the app host by outcome")
      .Register(registry);
}

bool StartsWithHttps(const std::string& url) {
  if (url.size() < 8) return false;
  std::string scheme = url.substr(0, 8);
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return scheme == "https://";
}

std::string FormField(const std::map<std::string, std::string>& form, const std::string& name) {
  auto it = form.find(name);
  return it == form.end() ? std::string() : it->second;
}

std::string AsciiLower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}


Response Unauthenticated() {
  return Response::FromStatus(Status(ErrorCode::kUnauthenticated, "missing or invalid credentials"));
}

// A user as /v2/me answers it (Cal.com's MeOutput), before the extensions: the fields a plugin
// owns are null until its extension sets them.
Json HostUserJson(const User& user) {
  return Json{{"id", user.id},
              {"username", user.username},
              {"email", user.email},
              {"name", user.name},
              {"timeZone", user.time_zone},
              {"weekStart", user.week_start},
              {"timeFormat", user.time_format},
              {"defaultScheduleId", nullptr},
              {"organizationId", nullptr},
              {"createdDate", user.created_at}};
}

}  // namespace

IdentityService::IdentityService(Database& db, Logger& logger, prometheus::Registry& registry,
                                 IdentityOptions options)
    : db_(db),
      logger_(logger),
      options_(std::move(options)),
      secure_cookies_(StartsWithHttps(options_.app_url)),
      users_(db),
      sessions_(db, options_.session_ttl),
      api_keys_(db, registry, options_.api_key_prefix, options_.credential_cache_ttl),
      ip_throttle_(options_.login_failures_per_ip),
      hasher_(options_.password_hash_threads, options_.password_hash_queue),
      user_cache_(10000, std::chrono::duration_cast<std::chrono::milliseconds>(options_.credential_cache_ttl)),
      logins_ok_(LoginFamily(registry).Add({{"result", "ok"}})),
      logins_failed_(LoginFamily(registry).Add({{"result", "failed"}})),
      logins_throttled_(LoginFamily(registry).Add({{"result", "throttled"}})) {}

std::vector<Migration> IdentityService::Migrations() { return IdentityMigrations(); }

std::optional<User> IdentityService::FindUser(int64_t id) {
  if (auto cached = user_cache_.Get(id)) return cached;
  auto user = users_.Find(id);
  if (user) user_cache_.Put(id, *user);
  return user;
}

std::optional<User> IdentityService::FindUserByEmail(const std::string& email) {
  auto found = users_.FindByEmail(email);
  if (!found) return std::nullopt;
  return std::move(found->user);
}

void IdentityService::SetUserExtensions(std::vector<std::shared_ptr<UserExtension>> extensions) {
  const Json host_fields = HostUserJson(User{});
  std::set<std::string> fields;
  for (const auto& extension : extensions) {
    for (const std::string& field : extension->Fields()) {
      if (!fields.insert(field).second) {
        throw std::runtime_error("two plugins extend the user with the field '" + field + "'");
      }
      if (host_fields.contains(field) && !host_fields[field].is_null()) {
        throw std::runtime_error("a plugin extends the user with the host's own field '" + field + "'");
      }
    }
  }
  extensions_ = std::move(extensions);
  extension_fields_ = std::move(fields);
}

Result<User> IdentityService::CreateUser(const NewUser& fields) {
  // The plugins' rows of a user (a bookings default schedule: DESIGN §9, §10) are written with it.
  std::function<Status(DbConnection&, const User&)> also;
  if (!extensions_.empty()) {
    also = [this](DbConnection& tx, const User& user) {
      for (const auto& extension : extensions_) {
        if (Status made = extension->UserCreated(tx, user); !made.ok()) return made;
      }
      return Status::Ok();
    };
  }
  auto user = users_.Create(fields, also);
  if (user.ok()) logger_.Info("user created", {{"user_id", user->id}, {"admin", fields.is_admin}});
  return user;
}

std::optional<Session> IdentityService::CurrentSession(const Request& req) {
  auto token = req.Cookie(kSessionCookie);
  if (!token) return std::nullopt;
  return sessions_.Find(*token);
}

std::optional<User> IdentityService::SessionUser(const Request& req) {
  auto session = CurrentSession(req);
  if (!session) return std::nullopt;
  return std::move(session->user);
}

std::string IdentityService::CsrfToken(const Request& req, Response& res) {
  if (auto session = CurrentSession(req)) return session->csrf_token;
  auto cookie = req.Cookie(kCsrfCookie);
  if (cookie && SessionStore::WellFormedToken(*cookie)) return *cookie;
  std::string token = crypto::RandomToken(32);
  CookieOptions opts;
  opts.secure = secure_cookies_;
  res.With("Set-Cookie", SetCookieHeader(kCsrfCookie, token, opts));
  return token;
}

bool IdentityService::CheckCsrf(const Request& req, const std::string& token) {
  if (token.empty() || token.size() > kMaxCsrfTokenBytes) return false;
  if (auto session = CurrentSession(req)) return crypto::ConstantTimeEquals(session->csrf_token, token);
  auto cookie = req.Cookie(kCsrfCookie);
  return cookie && SessionStore::WellFormedToken(*cookie) && crypto::ConstantTimeEquals(*cookie, token);
}

Json IdentityService::UserJson(const User& user) {
  Json out = HostUserJson(user);
  for (const auto& extension : extensions_) extension->AddFields(user, out);
  return out;
}

Result<IdentityService::CreatedKey> IdentityService::CreateApiKey(int64_t user_id,
                                                                  const std::string& name) {
  auto created = api_keys_.Create(user_id, name);
  if (created.ok()) logger_.Info("api key created", {{"user_id", user_id}, {"key_id", created->id}});
  return created;
}

Status IdentityService::RevokeApiKey(int64_t user_id, int64_t key_id) {
  Status status = api_keys_.Revoke(user_id, key_id);
  if (status.ok()) logger_.Info("api key revoked", {{"user_id", user_id}, {"key_id", key_id}});
  return status;
}

std::optional<Principal> IdentityService::ResolveApiKey(std::string_view token) {
  return api_keys_.Resolve(token);
}

Result<User> IdentityService::UpdateProfile(int64_t user_id, const Json& patch) {
  auto parsed = ParseProfilePatch(patch, extension_fields_);
  if (!parsed.ok()) return parsed.status();
  // Each extension's share of the change, checked before anything is written.
  std::vector<std::pair<UserExtension*, Json>> changes;
  for (const auto& extension : extensions_) {
    Json fields = Json::object();
    for (const std::string& field : extension->Fields()) {
      if (parsed->extension_fields.contains(field)) fields[field] = parsed->extension_fields[field];
    }
    if (fields.empty()) continue;
    if (Status checked = extension->CheckChange(fields); !checked.ok()) return checked;
    changes.emplace_back(extension.get(), std::move(fields));
  }
  std::function<Status(DbConnection&)> also;
  if (!changes.empty()) {
    also = [user_id, &changes](DbConnection& tx) {
      for (const auto& [extension, fields] : changes) {
        if (Status applied = extension->ApplyChange(tx, user_id, fields); !applied.ok()) return applied;
      }
      return Status::Ok();
    };
  }
  auto user = users_.Update(user_id, *parsed, also);
  user_cache_.Erase(user_id);
  return user;
}

Status IdentityService::DeleteUser(int64_t user_id) {
  const std::vector<std::string> keys = api_keys_.KeyHashes(user_id);
  Status deleted = users_.Delete(user_id);
  user_cache_.Erase(user_id);
  api_keys_.Evict(keys);
  if (deleted.ok()) logger_.Info("user deleted", {{"user_id", user_id}});
  return deleted;
}

void IdentityService::EnableVerifiedResources(Mailer& mailer, SmsSender& sms) {
  verified_ = std::make_unique<VerifiedResourceService>(db_, mailer, sms, logger_);
}

void IdentityService::RegisterRoutes(const std::function<void(Route)>& add) {
  auto route = [&](Listener listener, Method method, std::string pattern, RouteAuth auth,
                   Response (IdentityService::*fn)(Request&)) {
    Route r;
    r.listener = listener;
    r.method = method;
    r.pattern = std::move(pattern);
    r.auth = std::move(auth);
    r.handler = [this, fn](Request& req) { return (this->*fn)(req); };
    add(std::move(r));
  };
  // Every bearer kind; a managed user's token with its client's scopes (DESIGN §10).
  constexpr unsigned kMeAccepts = kApiKey | kOAuthToken | kManagedUserToken;
  route(Listener::kApi, Method::kGet, "/v2/me", RouteAuth::Bearer("PROFILE_READ", kMeAccepts), &IdentityService::GetMe);
  route(Listener::kApi, Method::kPatch, "/v2/me", RouteAuth::Bearer("PROFILE_WRITE", kMeAccepts), &IdentityService::PatchMe);
  route(Listener::kApp, Method::kGet, "/auth/login", RouteAuth::Public(), &IdentityService::ShowLogin);
  route(Listener::kApp, Method::kPost, "/auth/login", RouteAuth::Public(), &IdentityService::SubmitLogin);
  route(Listener::kApp, Method::kPost, "/auth/logout", RouteAuth::Public(), &IdentityService::Logout);
  route(Listener::kApp, Method::kGet, "/", RouteAuth::Public(), &IdentityService::ShowHome);
  if (verified_) RegisterVerifiedResourceRoutes(*verified_, add);
}

Response IdentityService::GetMe(Request& req) {
  if (!req.principal) return Unauthenticated();
  auto user = FindUser(req.principal->user_id);
  if (!user) return Response::FromStatus(Status(ErrorCode::kNotFound, "user not found"));
  return Response::Success(UserJson(*user));
}

Response IdentityService::PatchMe(Request& req) {
  if (!req.principal) return Unauthenticated();
  auto body = req.JsonBody();
  if (!body.ok()) return Response::FromStatus(body.status());
  auto user = UpdateProfile(req.principal->user_id, *body);
  if (!user.ok()) return Response::FromStatus(user.status());
  return Response::Success(UserJson(*user));
}

Response IdentityService::LoginPageResponse(const Request& req, int status, const std::string& email,
                                            const std::string& next, const std::string& error) {
  Response res = Response::Html(status, "");
  LoginPageView view{email, next, CsrfToken(req, res), error};
  res.body = RenderLoginPage(view);
  AddPageHeaders(res);
  return res;
}

Response IdentityService::ShowLogin(Request& req) {
  std::string next = req.Query("next").value_or("");
  if (!IsSafeRedirectPath(next)) next.clear();
  return LoginPageResponse(req, 200, "", next, "");
}

const std::string& IdentityService::DummyPasswordHash() {
  std::call_once(dummy_hash_once_, [this] { dummy_hash_ = crypto::HashPassword(crypto::RandomToken(16)); });
  return dummy_hash_;
}

Response IdentityService::SubmitLogin(Request& req) {
  auto form = req.FormBody();
  if (!form.ok()) {
    int status = form.status().code() == ErrorCode::kUnsupportedMediaType ? 415 : 400;
    return LoginPageResponse(req, status, "", "", "The sign-in form could not be read.");
  }
  std::string next = FormField(*form, "next");
  if (!IsSafeRedirectPath(next)) next.clear();
  std::string email = FormField(*form, "email");
  const std::string password = FormField(*form, "password");
  std::string shown_email = email.substr(0, kMaxEmailBytes);

  if (!CheckCsrf(req, FormField(*form, "csrf_token"))) {
    return LoginPageResponse(req, 403, shown_email, next, kFormExpired);
  }

  // Keyed on the normalised email so that case or padding variants share one budget.
  auto normalized = NormalizeEmail(shown_email);
  std::string throttle_key =
      LoginThrottle::Key(normalized.ok() ? *normalized : AsciiLower(shown_email), req.remote_ip);
  if (!throttle_.Allowed(throttle_key) || !ip_throttle_.Allowed(req.remote_ip)) {
    logins_throttled_.Increment();
    logger_.Warn("sign-in throttled", {{"remote_ip", req.remote_ip}});
    return LoginPageResponse(req, 429, shown_email, next, kThrottled).With("Retry-After", "60");
  }

  bool bounded = email.size() <= kMaxEmailBytes && password.size() <= kMaxPasswordBytes;
  std::optional<UserWithPassword> user;
  if (bounded) user = users_.FindByEmail(email);
  // Same work for an unknown email as for a known one, so response time does not tell which exist.
  const bool known = user && user->password_hash;
  std::optional<bool> verified = hasher_.Verify(known ? password : bounded ? password : std::string(),
                                                known ? *user->password_hash : DummyPasswordHash());
  if (!verified) {
    logins_throttled_.Increment();
    logger_.Warn("sign-in refused: password checks are busy", {{"remote_ip", req.remote_ip}});
    return LoginPageResponse(req, 429, shown_email, next, kBusy).With("Retry-After", "1");
  }
  const bool ok = known && *verified;
  if (!ok) {
    ip_throttle_.RecordFailure(req.remote_ip);
    throttle_.RecordFailure(throttle_key);
    logins_failed_.Increment();
    logger_.Info("sign-in failed", {{"remote_ip", req.remote_ip}});
    return LoginPageResponse(req, 401, shown_email, next, kInvalidCredentials);
  }

  throttle_.Reset(throttle_key);
  // A fresh session on every sign-in: a session id planted before sign-in is never promoted.
  if (auto old = req.Cookie(kSessionCookie)) sessions_.Delete(*old);
  auto session = sessions_.Create(user->user.id);
  logins_ok_.Increment();
  logger_.Info("sign-in", {{"user_id", user->user.id}, {"remote_ip", req.remote_ip}});
  Response res = Response::Redirect(next.empty() ? "/" : next, 302);
  res.With("Set-Cookie", SessionCookie(session.token));
  res.With("Cache-Control", "no-store");
  return res;
}

Response IdentityService::ShowHome(Request& req) {
  std::optional<User> user = SessionUser(req);
  if (!user) return Response::Redirect("/auth/login", 302);
  Response res = Response::Html(200, "");
  const std::string csrf = CsrfToken(req, res);
  res.body = RenderPage("Rendezvous",
                        "<h1>Rendezvous</h1><p>Signed in as " + HtmlEscape(user->name) + " &lt;" +
                            HtmlEscape(user->email) +
                            "&gt;.</p><form method=\"post\" action=\"/auth/logout\"><input type=\"hidden\" "
                            "name=\"csrf_token\" value=\"" +
                            HtmlEscape(csrf) + "\"><button type=\"submit\">Sign out</button></form>");
  AddPageHeaders(res);
  return res;
}

Response IdentityService::Logout(Request& req) {
  auto token = req.Cookie(kSessionCookie);
  if (token && sessions_.Find(*token)) {
    auto form = req.FormBody();
    std::string csrf = form.ok() ? FormField(*form, "csrf_token") : std::string();
    if (!CheckCsrf(req, csrf)) {
      Response res = Response::Html(
          403, RenderPage("Sign out", "<h1>Sign out</h1><p class=\"error\">The sign-out form expired. "
                                      "Go back, reload the page and try again.</p>"));
      AddPageHeaders(res);
      return res;
    }
    sessions_.Delete(*token);
  }
  Response res = Response::Redirect("/auth/login", 302);
  res.With("Set-Cookie", ExpiredCookie(kSessionCookie));
  res.With("Cache-Control", "no-store");
  return res;
}

std::string IdentityService::SessionCookie(const std::string& token) const {
  CookieOptions opts;
  opts.secure = secure_cookies_;
  opts.max_age = options_.session_ttl;
  return SetCookieHeader(kSessionCookie, token, opts);
}

std::string IdentityService::ExpiredCookie(const char* name) const {
  CookieOptions opts;
  opts.secure = secure_cookies_;
  opts.max_age = std::chrono::seconds(0);
  return SetCookieHeader(name, "", opts);
}

}  // namespace rendezvous::core
