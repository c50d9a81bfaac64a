// The HTML of the authorization pages (consent page, authorization error page) and the hidden
// fields that carry a validated request through the consent form. Plain data in, HTML out; no
// HTTP, database or plugin API, so it is unit-tested on its own. Every value is escaped by the
// template engine. Pure functions, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "authorize_request.hpp"

namespace rendezvous::oauth {

// What the consent page shows.
struct ConsentPage {
  std::string csrf_token;
  std::string client_name;
  bool client_pending = false;  // shown to the owner testing a pending client
  std::string user_email;
  AuthorizeQuery request;  // the request as received; carried in hidden fields (present ones only)
  // A pushed request (RFC 9126): the form carries only client_id and this, never the parameters.
  std::optional<std::string> request_uri;
  AuthorizeGrant grant;    // the validated grant: scopes shown, redirect host
};

// The hidden form fields that carry `request` to the POST: client_id, redirect_uri, state, scope,
// code_challenge, code_challenge_method, each only when present in the request (so an absent
// state or scope stays absent when validated again).
std::vector<std::pair<std::string, std::string>> ConsentHiddenFields(const AuthorizeQuery& request);

// The host (and port, when written) of a redirect URI, for "you will be sent back to ..."; the
// whole URI when it does not parse.
std::string RedirectHost(const std::string& redirect_uri);

std::string RenderConsentPage(const ConsentPage& page);

// An error shown on the authorization page itself (no redirect): title and one message.
std::string RenderAuthorizeErrorPage(const std::string& title, const std::string& message);

}  // namespace rendezvous::oauth
