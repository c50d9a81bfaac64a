#include "par_endpoint.hpp"

#include <string>
#include <variant>
#include <vector>

#include "authorize_pages.hpp"
#include "token_endpoint.hpp"
#include "token_request.hpp"

namespace rendezvous::oauth {
namespace {

bool SentBasic(const std::optional<std::string>& authorization) {
  if (!authorization) return false;
  return !std::holds_alternative<std::monostate>(ParseBasicCredentials(std::string_view(*authorization)));
}

std::optional<std::string> Param(const OAuthParams& params, std::string_view name) {
  auto it = params.find(name);
  if (it == params.end()) return std::nullopt;
  return it->second;
}

}  // namespace

Response HandlePushedAuthorizationRequest(const ParEndpointServices& services, const Request& req) {
  static const std::vector<std::string_view> kKnown = {
      "client_id", "client_secret",  "response_type",         "redirect_uri", "scope",
      "state",     "code_challenge", "code_challenge_method", "request_uri"};
  const std::optional<std::string> authorization = req.Header("authorization");
  const std::optional<std::string_view> authorization_view =
      authorization ? std::optional<std::string_view>(*authorization) : std::nullopt;
  auto parsed = ParseOAuthBody(req.Header("content-type").value_or(""), req.body, kKnown);
  if (auto* error = std::get_if<TokenError>(&parsed))
    return TokenErrorResponse(*error, SentBasic(authorization));
  auto& params = std::get<OAuthParams>(parsed);
  auto taken = TakeClientAuthentication(params, authorization_view);
  if (auto* error = std::get_if<TokenError>(&taken))
    return TokenErrorResponse(*error, SentBasic(authorization));
  const ClientAuthentication& credentials = std::get<ClientAuthentication>(taken);
  if (auto error = AuthenticateClient(services.clients.LoadCredentials(credentials.client_id),
                                      credentials.client_secret)) {
    return TokenErrorResponse(*error, credentials.basic_auth);
  }

  if (params.count("request_uri") != 0) {
    return TokenErrorResponse(TokenError::InvalidRequest("request_uri cannot be pushed"),
                              credentials.basic_auth);
  }
  auto client = services.clients.Get(credentials.client_id);
  if (!client.ok())
    return TokenErrorResponse(TokenError::ClientNotFound(), credentials.basic_auth);  // deleted meanwhile
  if (client->state == ClientState::kRejected) {
    return TokenErrorResponse(TokenError::UnauthorizedClient("the OAuth client is not approved"),
                              credentials.basic_auth);
  }

  AuthorizeQuery query;
  query.client_id = credentials.client_id;
  query.redirect_uri = Param(params, "redirect_uri");
  query.state = Param(params, "state");
  query.scope = Param(params, "scope");
  query.response_type = Param(params, "response_type");
  query.code_challenge = Param(params, "code_challenge");
  query.code_challenge_method = Param(params, "code_challenge_method");
  query.pushed = true;
  const AuthorizeClientView view = AuthorizeViewOf(*client);
  // Validated as its owner would use it: whether a pending client's request may be used is
  // decided on the authorization page, once the user is known.
  AuthorizeOutcome outcome = ValidateAuthorizeRequest(query, &view, client->owner_id);
  if (auto* page_error = std::get_if<AuthorizePageError>(&outcome)) {
    return TokenErrorResponse(TokenError::InvalidRequest(page_error->message), credentials.basic_auth);
  }
  if (auto* redirect = std::get_if<AuthorizeRedirectError>(&outcome)) {
    return TokenErrorResponse(TokenError{400, redirect->error, redirect->error_description},
                              credentials.basic_auth);
  }

  std::optional<PushedRequest> pushed = services.pushed.Push(credentials.client_id, req.remote_ip, query);
  if (!pushed) {
    Response res = TokenErrorResponse(
        TokenError{429, "invalid_request",
                   "the client holds " + std::to_string(services.pushed.pending_per_address()) +
                       " unused pushed authorization requests from this address; use them or "
                       "let them expire"},
        credentials.basic_auth);
    res.With("Retry-After", std::to_string(services.pushed.ttl()));
    return res;
  }
  return NoStoreJson(201, {{"request_uri", pushed->request_uri}, {"expires_in", pushed->expires_in}});
}

void RegisterParEndpoint(PluginContext& ctx, const ParEndpointServices& services) {
  // The handler authenticates the client itself.
  ctx.AddRoute(Route::Api(Method::kPost, kParPath, RouteAuth::Public(), [services](Request& req) {
    return HandlePushedAuthorizationRequest(services, req);
  }));
}

}  // namespace rendezvous::oauth
