// The HTTP surface a plugin sees: requests, responses, routes and credentials.
// Pistache stays behind core/http; nothing here depends on it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "rendezvous/status.hpp"

namespace rendezvous {

using Json = nlohmann::json;

enum class Method { kGet, kHead, kPost, kPut, kPatch, kDelete, kOptions };
std::string_view MethodName(Method m);

// Which listener a route is served on (DESIGN §4): JSON API on {base_url}, pages on {app_url}.
// kMetrics is the server's own metrics listener (metrics.listen); plugins add no routes there.
enum class Listener { kApi, kApp, kMetrics };

// Kinds of bearer credentials (DESIGN §5). Used as a bit set in RouteAuth::accepted.
enum BearerKind : unsigned {
  kApiKey = 1u << 0,
  kOAuthToken = 1u << 1,
  kManagedUserToken = 1u << 2,
};
constexpr unsigned kAnyBearer = kApiKey | kOAuthToken | kManagedUserToken;

// Who made the request, resolved from `Authorization: Bearer ...` (or `DPoP ...`, RFC 9449) by the
// core's bearer registry.
struct Principal {
  BearerKind kind = kApiKey;
  int64_t user_id = 0;
  int64_t credential_id = 0;  // api key id, token id ...
  std::string client_id;      // OAuth client, for OAuth and managed-user tokens
  std::set<std::string> scopes;
  bool all_scopes = false;    // API keys and legacy OAuth clients' tokens
  // An OAuth token bound to a DPoP key: the key's RFC 7638 thumbprint ("" = a bearer token). The
  // core then takes it only as `Authorization: DPoP` with a proof by that key (DESIGN §5).
  std::string dpop_jkt;

  bool HasScope(const std::string& scope) const { return all_scopes || scopes.count(scope) != 0; }
};

struct Request {
  Method method = Method::kGet;
  std::string path;            // decoded path, no query
  std::string route;           // the matched route template, e.g. /v2/bookings/:uid (for metrics)
  std::map<std::string, std::string> params;             // route parameters, decoded
  std::multimap<std::string, std::string> query;         // decoded query parameters
  std::map<std::string, std::string> headers;            // names lower-cased
  std::string body;
  std::string remote_ip;
  std::string request_id;
  std::string api_version;     // resolved value of the version header (default when absent)
  std::optional<Principal> principal;

  // Header by case-insensitive name.
  std::optional<std::string> Header(std::string_view name) const;
  std::optional<std::string> Query(const std::string& name) const;
  std::optional<std::string> Cookie(std::string_view name) const;
  // Media type of Content-Type without parameters, lower-cased ("" when absent).
  std::string ContentType() const;
  // Body as JSON object: 415 unless Content-Type is application/json (or absent with empty body),
  // 400 when malformed or not an object.
  Result<Json> JsonBody() const;
  // Body as application/x-www-form-urlencoded (415 for another content type).
  Result<std::map<std::string, std::string>> FormBody() const;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers, sent as given

  // {"status":"success","data":data}
  static Response Success(const Json& data, int status = 200);
  // {"status":"success","data":[..],"pagination":{...}}
  static Response SuccessWith(const Json& envelope_fields, int status = 200);
  // {"status":"error","error":{"code","message","details"?}} with the status's default code.
  static Response Error(int status, std::string code, std::string message, const Json& details = nullptr);
  // The error envelope of a Status: its category's HTTP status, its reason (or the category's
  // default code), its message, details with "field" when it names one, Retry-After when set.
  static Response FromStatus(const Status& status);
  // An HTML page answering with the HTTP status of `status` (200 when ok).
  static Response Page(const Status& status, std::string html);
  static Response RawJson(int status, const Json& body);
  static Response Html(int status, std::string html);
  static Response Text(int status, std::string text, std::string content_type = "text/plain; charset=utf-8");
  static Response Redirect(const std::string& location, int status = 302);

  Response& With(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
    return *this;
  }
};

using Handler = std::function<Response(Request&)>;

// What a route requires of the caller. Checked in one place by the core before the handler runs.
struct RouteAuth {
  bool bearer_required = false;
  // Without bearer_required: a request that carries an Authorization header has it checked as a
  // required one would be (401 when it is not valid) and its principal set; one without is let in.
  bool bearer_optional = false;
  unsigned accepted = kAnyBearer;  // bearer kinds accepted; others answer 401
  std::string scope;               // scope needed by OAuth tokens ("" = none); 403 insufficient_scope
  bool session_required = false;   // app pages: no session -> redirect to /auth/login?next=...

  static RouteAuth Public() { return {}; }
  static RouteAuth Bearer(std::string scope = "", unsigned accepted = kAnyBearer) {
    RouteAuth a;
    a.bearer_required = true;
    a.accepted = accepted;
    a.scope = std::move(scope);
    return a;
  }
  // A public route that looks at a credential when one is given (see bearer_optional).
  static RouteAuth OptionalBearer(unsigned accepted = kAnyBearer) {
    RouteAuth a;
    a.bearer_optional = true;
    a.accepted = accepted;
    return a;
  }
  static RouteAuth Session() {
    RouteAuth a;
    a.session_required = true;
    return a;
  }
};

// How often one client address may call a route (DESIGN §4): a token bucket of `burst` requests
// refilled by `per_minute` a minute, checked by the core before the handler runs (over it: 429
// rate_limited with Retry-After; every answer carries X-RateLimit-Limit, -Remaining, -Reset).
// Routes naming the same `group` share each address's bucket; the group labels the refusals in
// http_rate_limited_total. per_minute 0: no limit.
struct RateLimit {
  std::string group;
  long per_minute = 0;
  long burst = 0;
};

struct Route {
  Listener listener = Listener::kApi;
  Method method = Method::kGet;
  std::string pattern;  // "/v2/webhooks/:id"; ":name" matches one segment
  RouteAuth auth;
  Handler handler;
  // Handlers that only compute (no database, Lua, network) may run on the reactor thread.
  bool inline_handler = false;
  // Handlers that call hosts outside (Google, ICS feeds, webhook receivers) run on their own pool,
  // at most server.outbound_per_user at once per caller (more: 429), so a slow upstream delays
  // only the caller who asked for it.
  bool outbound = false;
  // Limits callers by client address (server.trusted_proxies decides the address).
  RateLimit per_address;

  // A JSON route on the api listener ({base_url}) and a page on the app listener ({app_url}).
  static Route Api(Method method, std::string pattern, RouteAuth auth, Handler handler) {
    return Make(Listener::kApi, method, std::move(pattern), std::move(auth), std::move(handler));
  }
  static Route Page(Method method, std::string pattern, RouteAuth auth, Handler handler) {
    return Make(Listener::kApp, method, std::move(pattern), std::move(auth), std::move(handler));
  }
  // Marks the route as calling outside hosts (see `outbound`).
  Route&& Outbound() && {
    outbound = true;
    return std::move(*this);
  }
  // Limits the route per client address (see RateLimit).
  Route&& LimitedPerAddress(RateLimit limit) && {
    per_address = std::move(limit);
    return std::move(*this);
  }

 private:
  static Route Make(Listener listener, Method method, std::string pattern, RouteAuth auth, Handler handler) {
    Route r;
    r.listener = listener;
    r.method = method;
    r.pattern = std::move(pattern);
    r.auth = std::move(auth);
    r.handler = std::move(handler);
    return r;
  }
};

// Resolves a bearer token of one kind. Returns nullopt when the token is not of this kind or is
// invalid/expired/revoked. Must be thread-safe. May throw DatabaseUnavailable.
using BearerResolver = std::function<std::optional<Principal>(std::string_view token)>;

// A token sent as `Authorization: DPoP <token>` resolved together with its request's proof.
struct DpopResolution {
  // The token's principal when the token is valid (bound to a key or not); nullopt otherwise.
  std::optional<Principal> principal;
  // The thumbprint of the proof's key when the proof passed every check, its jti new until now;
  // empty otherwise (`proof_error` says why).
  std::string jkt;
  std::string proof_error;
};

// Resolves an access token sent with a DPoP proof (RFC 9449 §7.1) in one step, so that the
// token's look-up and the claim of the proof's jti can share a database round trip: `proof` is the
// `DPoP` header; it must name `method` and `url` (the configured base_url + the request's path),
// carry the ath of `access_token`, and its jti is accepted once. The core then requires a
// principal, bound to a key (Principal::dpop_jkt), that key being the proof's `jkt` (401
// invalid_token, or invalid_dpop_proof with `proof_error`). Must be thread-safe; may throw
// DatabaseUnavailable.
using DpopResolver = std::function<DpopResolution(std::string_view access_token, std::string_view proof,
                                                  std::string_view method, std::string_view url)>;

}  // namespace rendezvous
