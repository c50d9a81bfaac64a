// The pushed authorization request endpoint (RFC 9126; DESIGN §5) on the api listener:
//   POST /v2/auth/oauth2/par
// Body: application/x-www-form-urlencoded (or JSON, as the token endpoint takes), at most
// kMaxTokenBodyBytes, kMaxTokenParams parameters of at most kMaxTokenParamValueBytes printable
// ASCII each, a known parameter at most once (token_request.hpp's rules).
//
// The client authenticates exactly as at the token endpoint (TakeClientAuthentication, then
// AuthenticateClient on ClientService::LoadCredentials): a confidential client with one of its
// secrets in the body or by HTTP Basic, a public client with its client_id alone. A rejected
// client is 400 unauthorized_client; a pending one may push (the authorization page then lets only
// its owner use the request).
//
// The authorization parameters (response_type, redirect_uri, scope, state, code_challenge,
// code_challenge_method) are validated as the authorization page validates them
// (ValidateAuthorizeRequest): what the page would show as an error is 400 invalid_request with
// the page's message; what it would redirect with is 400 with that error (invalid_request,
// invalid_scope, unsupported_response_type). A request_uri in the body is invalid_request (RFC
// 9126 §2.1). Success: 201 {"request_uri":"urn:ietf:params:oauth:request_uri:...","expires_in":
// par_ttl}. A client already holding plugins.oauth.par_pending_per_address unused requests pushed
// from the request's client address (Request::remote_ip): 429 invalid_request with Retry-After
// (RFC 9126 §2.3); pushes from other addresses are not affected. Every answer is raw JSON with Cache-Control:
// no-store and Pragma: no-cache; a 401 after HTTP Basic carries WWW-Authenticate: Basic.
//
// The services must outlive the route (the plugin owns them). The handler is thread-safe.
#pragma once

#include "client_service.hpp"
#include "pushed_requests.hpp"
#include "rendezvous/plugin.hpp"

namespace rendezvous::oauth {

struct ParEndpointServices {
  ClientService& clients;
  PushedRequests& pushed;
};

// Exposed for the registration below and for tests that call it directly.
Response HandlePushedAuthorizationRequest(const ParEndpointServices& services, const Request& req);

inline constexpr const char* kParPath = "/v2/auth/oauth2/par";

void RegisterParEndpoint(PluginContext& ctx, const ParEndpointServices& services);

}  // namespace rendezvous::oauth
