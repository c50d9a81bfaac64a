#include "http/route_auth.hpp"

#include "rendezvous/url.hpp"

namespace rendezvous::core {
namespace {

constexpr size_t kMaxBearerTokenBytes = 4096;

bool IsBearerScheme(std::string_view s) {
  if (s.size() != 6) return false;
  for (size_t i = 0; i < 6; ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != "bearer"[i]) return false;
  }
  return true;
}

Response Unauthorized(std::string challenge, std::string message) {
  Response resp = Response::Error(401, "", std::move(message));
  resp.headers.emplace_back("WWW-Authenticate", std::move(challenge));
  return resp;
}

std::string AcceptedKinds(unsigned accepted) {
  std::string kinds;
  auto add = [&](unsigned bit, const char* name) {
    if (accepted & bit) kinds += (kinds.empty() ? "" : ", ") + std::string(name);
  };
  add(kApiKey, "API keys");
  add(kOAuthToken, "OAuth access tokens");
  add(kManagedUserToken, "managed-user access tokens");
  return kinds;
}

}  // namespace

std::optional<Response> CheckRouteAuth(const RouteAuth& auth, Request& r, const std::string& raw_target,
                                       const BearerAuthenticator& bearer, const SessionChecker& session) {
  if (auth.session_required && (!session || !session(r)))
    return Response::Redirect("/auth/login?next=" + net::PercentEncode(raw_target, true));
  if (!auth.bearer_required) return std::nullopt;

  auto header = r.Header("authorization");
  if (!header) return Unauthorized("Bearer", "missing bearer token");
  std::string_view value = *header;
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (value.size() < 7 || !IsBearerScheme(value.substr(0, 6)) || value[6] != ' ')
    return Unauthorized("Bearer", "malformed Authorization header: expected Bearer <token>");
  value.remove_prefix(7);
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (value.empty() || value.size() > kMaxBearerTokenBytes || value.find_first_of(" \t") != std::string_view::npos)
    return Unauthorized("Bearer", "malformed Authorization header: expected Bearer <token>");

  std::optional<Principal> principal;
  if (bearer) principal = bearer(value);
  const std::string invalid = "Bearer error=\"invalid_token\"";
  if (!principal) return Unauthorized(invalid, "the bearer token is invalid, expired or revoked");
  if ((auth.accepted & principal->kind) == 0)
    return Unauthorized(invalid, "this endpoint accepts only: " + AcceptedKinds(auth.accepted));
  if (!auth.scope.empty() && !principal->HasScope(auth.scope)) {
    Response resp = Response::Error(403, "insufficient_scope", "this endpoint requires the scope " + auth.scope,
                                    Json{{"scope", auth.scope}});
    resp.headers.emplace_back("WWW-Authenticate", "Bearer error=\"insufficient_scope\", scope=\"" + auth.scope + "\"");
    return resp;
  }
  r.principal = std::move(principal);
  return std::nullopt;
}

}  // namespace rendezvous::core
