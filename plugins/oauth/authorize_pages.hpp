// The authorization page on the app host ({app_url}), specification §4.1, §5.2, §7.1, DESIGN §4:
//   GET  /auth/oauth2/authorize   validates the request (ValidateAuthorizeRequest) and shows the
//                                 consent page, a page error (400) or redirects with an error;
//   POST /auth/oauth2/authorize   the consent form: CSRF first (403, nothing issued), the request
//                                 validated again from the posted fields (never trusted), then
//                                 Deny -> access_denied redirect, Allow -> a code and a redirect to
//                                 redirect_uri?code=..&state=..&iss=...
// Every redirect that reaches the application (code or error) carries iss = the issuer, the api
// listener's base_url (RFC 9207).
//
// Pushed requests (RFC 9126, pushed_requests.hpp): GET with client_id and request_uri uses the
// parameters pushed by that client and ignores every other query parameter; the consent form then
// carries only client_id and request_uri, and its POST consumes the request_uri (once) before
// deciding. An unknown, used, expired or another client's request_uri is a page error, never a
// redirect. A client with require_par gets a page error for any request that was not pushed.
//
// Both need a session (the core sends the browser to the login page and back). Every response
// carries Cache-Control: no-store and frame-blocking headers (clickjacking on the consent page).
// The HTML comes from authorize_page_views.hpp (pure, unit-tested).
#pragma once

#include <memory>

#include "authorize_request.hpp"
#include "client_service.hpp"
#include "code_exchange.hpp"
#include "pushed_requests.hpp"
#include "rendezvous/plugin.hpp"

namespace rendezvous::oauth {

// Registers the two routes above (call from the plugin's factory). `clients`, `codes` and `ctx`
// must outlive the server's routes, i.e. belong to the plugin; the routes share `pushed`. The
// handlers are thread-safe.
void RegisterAuthorizePages(rendezvous::PluginContext& ctx, rendezvous::oauth::ClientService& clients,
                            rendezvous::oauth::CodeExchange& codes, std::shared_ptr<PushedRequests> pushed);

// What authorization request validation needs of a client.
AuthorizeClientView AuthorizeViewOf(const OAuthClient& client);

}  // namespace rendezvous::oauth
