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

// nullopt: the caller may proceed (request.principal is set for bearer routes). Otherwise the
// answer: a redirect to the login page (raw_target is the path and query to come back to), 401
// with WWW-Authenticate, or 403 insufficient_scope. May throw DatabaseUnavailable.
std::optional<Response> CheckRouteAuth(const RouteAuth& auth, Request& request, const std::string& raw_target,
                                       const BearerAuthenticator& bearer, const SessionChecker& session);

}  // namespace rendezvous::core
