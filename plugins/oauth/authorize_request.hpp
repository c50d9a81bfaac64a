// Validation of the authorization page's request (specification §4.1, §7.1) against the
// client it names. Knows nothing of HTTP, sessions or storage: the page looks the client up,
// signs the user in, and calls ValidateAuthorizeRequest with what it found. Pure, thread-safe.
//
// Outcomes, checked in this order (§7.1's table order):
//  page errors, shown to the user with no redirect (HTTP 400 per DESIGN §9):
//   1. client_id missing, or no such client;
//   2. client not usable: pending is usable by its owner only (for testing), rejected by no one;
//      a client that requires pushed authorization requests (require_par) with a request that was
//      not pushed (RFC 9126 §5);
//   3. redirect_uri missing or not exactly (byte for byte) one of the client's;
//   (a client_id or redirect_uri given twice is a page error too: there is no trusted target)
//   4. no scope (absent or only separators) for a non-legacy client:
//      "scope parameter is required for this OAuth client".
//  redirect errors, sent to the redirect URI with error, error_description and state:
//   5. response_type present and not "code" → unsupported_response_type (the specification does
//      not list response_type; clients that omit it are served);
//   6. another known parameter given twice → invalid_request (RFC 6749 §3.1);
//   7. state longer than kMaxStateLength, or not UTF-8 text without control characters (tab, CR
//      and LF included: the consent form could not carry it back unchanged) → invalid_request
//      (state then not echoed);
//   8. a scope value not recognized, for regular and legacy clients alike (also a list over the
//      ParseScopeParam limits) → invalid_scope "Requested scope is not a recognized scope";
//   9. non-legacy client: a scope not among the client's → invalid_request "Requested scope
//      exceeds the client's registered scopes";
//  10. PKCE: code_challenge_method other than S256 (plain included) → invalid_request; a method
//      without a challenge, or a challenge not in S256 format → invalid_request; a public client
//      without a challenge → invalid_request. A challenge without a method is taken as S256: the
//      specification's parameter table has no method parameter and names S256 as the method (a
//      client sending a "plain" challenge then fails at the token endpoint, never downgraded).
//  success: the grant to show on the consent page and bind to the code.
//   Legacy clients skip the check against the client's scopes. Without scope they get
//   all_scopes (no scope enforcement on their tokens, §5.2); with scope exactly the requested
//   ones (§5.5 step 1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "client_policy.hpp"

namespace rendezvous::oauth {

inline constexpr size_t kMaxStateLength = 2048;

// The client as the authorize page needs it (loaded by the caller).
struct AuthorizeClientView {
  std::string client_id;
  ClientState state = ClientState::kPending;
  int64_t owner_id = 0;
  ClientKind kind = ClientKind::kConfidential;
  std::vector<std::string> redirect_uris;
  std::vector<std::string> scopes;
  bool require_par = false;
};

// The query parameters that matter. nullopt = absent. `repeated` lists known parameters given
// more than once (FromParams fills it).
struct AuthorizeQuery {
  std::optional<std::string> client_id, redirect_uri, state, scope, response_type,
      code_challenge, code_challenge_method;
  std::vector<std::string> repeated;
  // The parameters were pushed by the authenticated client (RFC 9126) and read back from storage,
  // not taken from the browser.
  bool pushed = false;

  // From decoded query parameters (e.g. rendezvous::Request::query); the first value of a
  // repeated parameter is kept and the name noted in `repeated`.
  static AuthorizeQuery FromParams(const std::multimap<std::string, std::string>& query);
};

// The authorization parameters by name, each with its AuthorizeQuery member: one table for the
// query reader and the pushed requests' storage.
using AuthorizeQueryField = std::optional<std::string> AuthorizeQuery::*;
inline constexpr std::pair<const char*, AuthorizeQueryField> kAuthorizeQueryFields[] = {
    {"client_id", &AuthorizeQuery::client_id},
    {"redirect_uri", &AuthorizeQuery::redirect_uri},
    {"state", &AuthorizeQuery::state},
    {"scope", &AuthorizeQuery::scope},
    {"response_type", &AuthorizeQuery::response_type},
    {"code_challenge", &AuthorizeQuery::code_challenge},
    {"code_challenge_method", &AuthorizeQuery::code_challenge_method},
};

// Shown on the authorization page; the application is not contacted.
struct AuthorizePageError {
  std::string message;
};

// Sent back to the application by redirect.
struct AuthorizeRedirectError {
  std::string redirect_uri;
  std::string error;
  std::string error_description;
  std::optional<std::string> state;

  // redirect_uri with error, error_description, state (when present) and iss = `issuer` (RFC 9207)
  // appended to its query.
  std::string Url(const std::string& issuer) const;
};

// A valid request: what the consent page shows and the authorization code is bound to.
struct AuthorizeGrant {
  std::string client_id;
  std::string redirect_uri;
  std::optional<std::string> state;
  std::vector<std::string> scopes;  // requested scopes, or the client's own when all_scopes
  bool all_scopes = false;          // legacy client without scope: no scope enforcement
  std::string code_challenge;       // "" when none was sent (confidential clients may omit it)
  std::string code_challenge_method;  // "S256" when code_challenge is set
};

using AuthorizeOutcome = std::variant<AuthorizePageError, AuthorizeRedirectError, AuthorizeGrant>;

// `client` is the client named by query.client_id, or nullptr when there is none. `user_id` is
// the signed-in user.
AuthorizeOutcome ValidateAuthorizeRequest(const AuthorizeQuery& query,
                                          const AuthorizeClientView* client, int64_t user_id);

// `<redirect_uri>?code=<code>&state=<state>&iss=<issuer>` (state only when given; '&' when the URI
// already has a query), values percent-encoded. iss names the authorization server (RFC 9207),
// so a client talking to several can tell which one answered (mix-up attacks).
std::string SuccessRedirectUrl(const std::string& redirect_uri, const std::string& code,
                               const std::optional<std::string>& state, const std::string& issuer);

// The access_denied redirect for the Deny button (RFC 6749 §4.1.2.1).
AuthorizeRedirectError AccessDenied(const AuthorizeGrant& grant);

}  // namespace rendezvous::oauth
