// The one place where a route's RouteAuth is checked (DESIGN §4, §5): sessions for pages, bearer
// credentials, accepted bearer kinds and scopes. Thread-safe (the callbacks must be).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "rendezvous/http.hpp"

namespace rendezvous::core {

using BearerAuthenticator = std::function<std::optional<Principal>(std::string_view)>;
using SessionChecker = std::function<bool(const Request&)>;
// Resolves a token sent with a DPoP proof: the token, the proof, the request's method and raw path
// (no query). See DpopResolver (http.hpp).
using DpopAuthenticator = std::function<DpopResolution(std::string_view token, std::string_view proof,
                                                       std::string_view method, std::string_view raw_path)>;

// nullopt: the caller may proceed (request.principal is set for bearer routes). Otherwise the
// answer: a redirect to the login page (raw_target is the path and query to come back to), 401
// with WWW-Authenticate, or 403 insufficient_scope. May throw DatabaseUnavailable.
//
// Credentials come as `Authorization: Bearer <token>` or, for a token bound to a DPoP key
// (Principal::dpop_jkt), `Authorization: DPoP <token>` with a `DPoP` proof header that `dpop`
// accepts and that is signed by that key (RFC 9449 §7.1); `dpop` resolves such a token itself (its
// look-up and the proof's jti claim in one step), `bearer` every other one. A bound token sent as Bearer, an
// unbound one sent as DPoP, or a bad proof: 401 with `WWW-Authenticate: DPoP error="invalid_token"`
// or `error="invalid_dpop_proof"`.
std::optional<Response> CheckRouteAuth(const RouteAuth& auth, Request& request, const std::string& raw_target,
                                       const BearerAuthenticator& bearer, const SessionChecker& session,
                                       const DpopAuthenticator& dpop = {});

}  // namespace rendezvous::core
