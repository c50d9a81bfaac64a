// The token endpoint and its neighbours on the api listener (spec §4.2, §4.3, §7.2; DESIGN §5, §9):
//   POST /v2/auth/oauth2/token                     authorization_code and refresh_token grants
//   POST /v2/auth/oauth2/revoke                    RFC 7009 (client-authenticated)
//   POST /v2/auth/oauth2/introspect                RFC 7662 (client-authenticated)
//   GET  /.well-known/oauth-authorization-server   RFC 8414 metadata
// Every answer of the three POST endpoints is raw JSON (not the envelope) with
// `Cache-Control: no-store` and `Pragma: no-cache`; 401s after HTTP Basic carry
// `WWW-Authenticate: Basic realm="rendezvous"`.
//
// Client authentication (all three POST endpoints): unknown client_id -> 401 client_not_found; a
// confidential client needs one of its active secrets (body or Basic), else 401
// invalid_client_credentials; a public client must send no secret (401 invalid_client_credentials
// when it does) and, for the code grant, a code_verifier (400 invalid_request).
//
// DPoP (RFC 9449 §5): a token request carrying a `DPoP` header gets tokens bound to the proof's
// key (token_type "DPoP"); a proof that fails any check (DpopVerifier) answers 400
// invalid_dpop_proof and nothing is issued. The metadata lists dpop_signing_alg_values_supported.
//
// The services must outlive the registered routes (the plugin owns both). Handlers are
// thread-safe.
#pragma once

#include "client_service.hpp"
#include "code_exchange.hpp"
#include "dpop_verifier.hpp"
#include "issued_tokens.hpp"
#include "refresh_grant.hpp"
#include "rendezvous/plugin.hpp"
#include "token_metrics.hpp"

namespace rendezvous::oauth {

// Raw JSON with `Cache-Control: no-store` and `Pragma: no-cache`: the answers of the token,
// revocation, introspection and pushed-request endpoints.
Response NoStoreJson(int status, const Json& body);
// A §7.2 error answer; a 401 after HTTP Basic carries `WWW-Authenticate: Basic`.
Response TokenErrorResponse(const TokenError& error, bool basic_auth);

// The logic the endpoints answer with. The code and refresh grants authenticate the client from
// the row they read anyway; revocation and introspection through `clients`.
struct TokenEndpointServices {
  ClientService& clients;
  CodeExchange& codes;
  RefreshGrant& refresh;
  IssuedTokens& issued;
  DpopVerifier& dpop;
  std::string token_url;  // base_url + the token endpoint's path: the htu its DPoP proofs name
};

// Handlers, exposed for the registration below and for tests that call them directly.
// `outcome`, when given, is filled with what the request came to (for TokenMetrics); its grant
// type is set as soon as it is read, so it is known even when the handler throws.
Response HandleTokenRequest(const TokenEndpointServices& services, const Request& req,
                            TokenRequestOutcome* outcome = nullptr);
Response HandleRevokeRequest(const TokenEndpointServices& services, const Request& req);
Response HandleIntrospectRequest(const TokenEndpointServices& services, const Request& req);
// The RFC 8414 document: issuer = base_url, authorization endpoint on app_url.
Json AuthorizationServerMetadata(const std::string& base_url, const std::string& app_url);

// The token endpoint counts its requests in `metrics`, which must outlive the routes.
void RegisterTokenEndpoints(PluginContext& ctx, const TokenEndpointServices& services, TokenMetrics& metrics);

}  // namespace rendezvous::oauth
