#include "http/route_auth.hpp"

#include "rendezvous/url.hpp"

namespace rendezvous::core {
namespace {

constexpr size_t kMaxBearerTokenBytes = 4096;

// `s` equals the lower-case `scheme` in any case.
bool IsScheme(std::string_view s, std::string_view scheme) {
  if (s.size() != scheme.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != scheme[i]) return false;
  }
  return true;
}

const char* const kDpopInvalidToken = "DPoP error=\"invalid_token\"";
const char* const kDpopInvalidProof = "DPoP error=\"invalid_dpop_proof\"";

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
                                       const BearerAuthenticator& bearer, const SessionChecker& session,
                                       const DpopAuthenticator& dpop) {
  if (auth.session_required && (!session || !session(r)))
    return Response::Redirect("/auth/login?next=" + net::PercentEncode(raw_target, true));
  if (!auth.bearer_required && !(auth.bearer_optional && r.Header("authorization"))) return std::nullopt;

  auto header = r.Header("authorization");
  if (!header) return Unauthorized("Bearer", "missing bearer token");
  std::string_view value = *header;
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  const size_t space = value.find(' ');
  const std::string_view scheme = value.substr(0, space);
  const bool dpop_scheme = IsScheme(scheme, "dpop");
  if (space == std::string_view::npos || (!dpop_scheme && !IsScheme(scheme, "bearer")))
    return Unauthorized("Bearer", "malformed Authorization header: expected Bearer <token>");
  value.remove_prefix(space + 1);
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (value.empty() || value.size() > kMaxBearerTokenBytes || value.find_first_of(" \t") != std::string_view::npos)
    return Unauthorized("Bearer", "malformed Authorization header: expected Bearer <token>");

  // A token with a proof goes to the DPoP resolver, which looks the token up and claims the
  // proof's jti together; a token it does not know is asked of the bearer resolvers too, so that
  // the answer is the same as without a proof (an API key sent as DPoP: not DPoP-bound).
  const std::optional<std::string> proof = dpop_scheme ? r.Header("dpop") : std::nullopt;
  std::optional<Principal> principal;
  DpopResolution resolved;
  const bool with_proof = proof && dpop;
  if (with_proof) {
    const std::string_view path = std::string_view(raw_target).substr(0, raw_target.find('?'));
    resolved = dpop(value, *proof, MethodName(r.method), path);
    principal = std::move(resolved.principal);
  }
  if (!principal && bearer) principal = bearer(value);
  const std::string invalid = dpop_scheme ? kDpopInvalidToken : "Bearer error=\"invalid_token\"";
  if (!principal) return Unauthorized(invalid, "the bearer token is invalid, expired or revoked");
  if (!dpop_scheme && !principal->dpop_jkt.empty())
    return Unauthorized(kDpopInvalidToken,
                        "this token is DPoP-bound: send it as Authorization: DPoP with a DPoP proof");
  if (dpop_scheme) {
    if (principal->dpop_jkt.empty())
      return Unauthorized(kDpopInvalidToken,
                          "this token is not DPoP-bound: send it as Authorization: Bearer");
    if (!proof) return Unauthorized(kDpopInvalidProof, "a DPoP proof header is required");
    if (!with_proof) return Unauthorized(kDpopInvalidProof, "DPoP proofs are not accepted here");
    if (!resolved.proof_error.empty())
      return Unauthorized(kDpopInvalidProof, std::move(resolved.proof_error));
    if (resolved.jkt.empty() || resolved.jkt != principal->dpop_jkt)
      return Unauthorized(kDpopInvalidProof, "the DPoP proof is not signed by the key the token is bound to");
  }
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
