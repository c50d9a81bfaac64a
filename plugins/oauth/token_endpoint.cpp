#include "token_endpoint.hpp"

#include <variant>

#include "scopes.hpp"

namespace rendezvous::oauth {

Response NoStoreJson(int status, const Json& body) {
  Response res = Response::RawJson(status, body);
  res.With("Cache-Control", "no-store").With("Pragma", "no-cache");
  return res;
}

Response TokenErrorResponse(const TokenError& error, bool basic_auth) {
  Response res = NoStoreJson(error.http_status, ToJson(error));
  if (error.http_status == 401 && basic_auth) res.With("WWW-Authenticate", "Basic realm=\"rendezvous\"");
  return res;
}

namespace {

std::optional<std::string_view> AuthorizationHeader(const std::optional<std::string>& header) {
  if (!header) return std::nullopt;
  return std::string_view(*header);
}

// Body and credentials of the revocation and introspection endpoints.
struct TokenActionRequest {
  std::string client_id, client_secret, token;
  bool basic_auth = false;
};

std::variant<TokenActionRequest, TokenError> ParseTokenAction(const Request& req) {
  static const std::vector<std::string_view> kKnown = {"token", "token_type_hint", "client_id",
                                                       "client_secret"};
  auto parsed = ParseOAuthBody(req.Header("content-type").value_or(""), req.body, kKnown);
  if (auto* error = std::get_if<TokenError>(&parsed)) return std::move(*error);
  OAuthParams& params = std::get<OAuthParams>(parsed);
  auto take = [&](const char* name) {
    auto it = params.find(name);
    return it == params.end() ? std::string() : it->second;
  };
  TokenActionRequest out;
  out.token = take("token");
  const std::optional<std::string> authorization = req.Header("authorization");
  auto client = TakeClientAuthentication(params, AuthorizationHeader(authorization));
  if (auto* error = std::get_if<TokenError>(&client)) return std::move(*error);
  auto& credentials = std::get<ClientAuthentication>(client);
  out.client_id = std::move(credentials.client_id);
  out.client_secret = std::move(credentials.client_secret);
  out.basic_auth = credentials.basic_auth;
  if (out.token.empty()) return TokenError::InvalidRequest("token is required");
  return out;
}

bool SentBasic(const Request& req) {
  auto basic = ParseBasicCredentials(req.Header("authorization"));
  return !std::holds_alternative<std::monostate>(basic);
}

// The revocation or introspection request once parsed and its client authenticated, or the error
// response.
std::variant<TokenActionRequest, Response> AuthenticatedTokenAction(ClientService& clients,
                                                                    const Request& req) {
  auto parsed = ParseTokenAction(req);
  if (auto* error = std::get_if<TokenError>(&parsed)) return TokenErrorResponse(*error, SentBasic(req));
  const TokenActionRequest& r = std::get<TokenActionRequest>(parsed);
  // One database round trip.
  if (auto error = AuthenticateClient(clients.LoadCredentials(r.client_id), r.client_secret)) {
    return TokenErrorResponse(*error, r.basic_auth);
  }
  return r;
}

}  // namespace

Response HandleTokenRequest(const TokenEndpointServices& services, const Request& req,
                            TokenRequestOutcome* outcome) {
  TokenRequestOutcome ignored;
  TokenRequestOutcome& out = outcome ? *outcome : ignored;
  auto refuse = [&out](const TokenError& error, bool basic_auth) {
    out.error = error.error;
    return TokenErrorResponse(error, basic_auth);
  };
  const std::optional<std::string> authorization = req.Header("authorization");
  TokenRequestResult parsed = ParseTokenRequest(req.Header("content-type").value_or(""), req.body,
                                                AuthorizationHeader(authorization));
  if (auto* error = std::get_if<TokenError>(&parsed)) return refuse(*error, SentBasic(req));
  const TokenRequest& tr = std::get<TokenRequest>(parsed);
  out.grant_type = tr.grant_type;
  std::string dpop_jkt;
  if (std::optional<std::string> proof = req.Header("dpop")) {
    Result<std::string> accepted = services.dpop.Accept(*proof, "POST", services.token_url);
    if (!accepted.ok())
      return refuse(TokenError{400, "invalid_dpop_proof", accepted.status().message()}, false);
    dpop_jkt = *std::move(accepted);
  }

  // Both grants authenticate the client in their own statement, before the code or token.
  const PresentedClient client{true, tr.client_secret};
  TokenResult result;
  if (tr.grant_type == kGrantAuthorizationCode) {
    result =
        services.codes.Exchange(tr.client_id, tr.code, tr.redirect_uri, tr.code_verifier, client, dpop_jkt);
  } else {
    result = services.refresh.Refresh(tr.client_id, tr.refresh_token, client, dpop_jkt);
  }
  if (auto* error = std::get_if<TokenError>(&result)) return refuse(*error, tr.basic_auth);
  return NoStoreJson(200, ToJson(std::get<TokenResponse>(result)));
}

Response HandleRevokeRequest(const TokenEndpointServices& services, const Request& req) {
  auto action = AuthenticatedTokenAction(services.clients, req);
  if (auto* refused = std::get_if<Response>(&action)) return std::move(*refused);
  const TokenActionRequest& r = std::get<TokenActionRequest>(action);
  services.issued.Revoke(r.client_id, r.token);
  return NoStoreJson(200, Json::object());
}

Response HandleIntrospectRequest(const TokenEndpointServices& services, const Request& req) {
  auto action = AuthenticatedTokenAction(services.clients, req);
  if (auto* refused = std::get_if<Response>(&action)) return std::move(*refused);
  const TokenActionRequest& r = std::get<TokenActionRequest>(action);
  return NoStoreJson(200, services.issued.Introspect(r.client_id, r.token));
}

Json AuthorizationServerMetadata(const std::string& base_url, const std::string& app_url) {
  const Json auth_methods = {"client_secret_post", "client_secret_basic", "none"};
  return {{"issuer", base_url},
          {"authorization_endpoint", app_url + "/auth/oauth2/authorize"},
          {"token_endpoint", base_url + "/v2/auth/oauth2/token"},
          {"revocation_endpoint", base_url + "/v2/auth/oauth2/revoke"},
          {"introspection_endpoint", base_url + "/v2/auth/oauth2/introspect"},
          {"response_types_supported", {"code"}},
          {"grant_types_supported", {"authorization_code", "refresh_token"}},
          {"code_challenge_methods_supported", {"S256"}},
          {"token_endpoint_auth_methods_supported", auth_methods},
          {"revocation_endpoint_auth_methods_supported", auth_methods},
          {"introspection_endpoint_auth_methods_supported", auth_methods},
          {"scopes_supported", UserLevelScopes()},
          {"authorization_response_iss_parameter_supported", true},
          {"pushed_authorization_request_endpoint", base_url + "/v2/auth/oauth2/par"},
          {"require_pushed_authorization_requests", false},
          {"dpop_signing_alg_values_supported", {"ES256", "RS256"}}};
}

void RegisterTokenEndpoints(PluginContext& ctx, const TokenEndpointServices& services,
                            TokenMetrics& metrics) {
  auto post = [&](std::string pattern, Response (*fn)(const TokenEndpointServices&, const Request&)) {
    // The handlers authenticate clients themselves.
    ctx.AddRoute(Route::Api(Method::kPost, std::move(pattern), RouteAuth::Public(),
                            [services, fn](Request& req) { return fn(services, req); }));
  };
  ctx.AddRoute(Route::Api(Method::kPost, "/v2/auth/oauth2/token", RouteAuth::Public(),
                          [services, &metrics](Request& req) {
                            TokenRequestOutcome outcome;
                            try {
                              Response res = HandleTokenRequest(services, req, &outcome);
                              metrics.Answered(outcome);
                              return res;
                            } catch (...) {
                              metrics.Failed(outcome);
                              throw;
                            }
                          }));
  post("/v2/auth/oauth2/revoke", &HandleRevokeRequest);
  post("/v2/auth/oauth2/introspect", &HandleIntrospectRequest);

  const std::string body = AuthorizationServerMetadata(ctx.base_url(), ctx.app_url()).dump();
  Route meta = Route::Api(Method::kGet, "/.well-known/oauth-authorization-server", RouteAuth::Public(),
                          [body](Request&) {
                            Response res = Response::Text(200, body, "application/json");
                            res.With("Cache-Control", "public, max-age=3600");
                            return res;
                          });
  meta.inline_handler = true;
  ctx.AddRoute(std::move(meta));
}

}  // namespace rendezvous::oauth
