// Parsing of token endpoint requests (specification §4.2, §4.3, §7.2; DESIGN §5) and the one
// table of token endpoint errors. Knows nothing of HTTP beyond the three inputs it is given: the
// Content-Type header, the raw body and the Authorization header. Pure functions, thread-safe.
//
// Bodies: application/json (an object) or application/x-www-form-urlencoded. Known parameters:
// grant_type, client_id, client_secret, code, redirect_uri, code_verifier, refresh_token; every
// other parameter is ignored (RFC 6749 §3.2). A known parameter given twice is invalid_request
// (RFC 6749 §3.2), in JSON too; an empty value counts as absent (RFC 6749 §3.2). Known values
// must be strings of printable ASCII (VSCHAR, RFC 6749 appendix A).
//
// Client authentication: client_secret in the body, or HTTP Basic (RFC 6749 §2.3.1: base64 of
// urlencoded(client_id) ":" urlencoded(client_secret)). Using both is invalid_request (RFC 6749
// §2.3: one method per request); a client_id in the body besides Basic must be the same one.
//
// Order of checks (the first failing one answers): body size, content type, body syntax and
// limits, Basic header, client_id ("client_id is required" — before grant_type, as the §7.2
// table lists them), grant_type, then the grant's own parameters.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace rendezvous::oauth {

inline constexpr size_t kMaxTokenBodyBytes = 64 * 1024;
inline constexpr size_t kMaxTokenParamValueBytes = 4096;
inline constexpr size_t kMaxTokenParams = 50;
inline constexpr size_t kMaxAuthorizationHeaderBytes = 8192;

inline constexpr std::string_view kGrantAuthorizationCode = "authorization_code";
inline constexpr std::string_view kGrantRefreshToken = "refresh_token";

// An error answer of the token endpoint: `http_status` and the JSON body {error,
// error_description}. The named constructors are the §7.2 rows (exact texts) and the few
// answers DESIGN §5 and RFC 6749 add. When http_status is 401 and the client used HTTP Basic,
// the endpoint adds `WWW-Authenticate: Basic` (RFC 6749 §5.2).
struct TokenError {
  int http_status = 400;
  std::string error;
  std::string error_description;

  // 400 invalid_request with the given description (malformed or missing parameters).
  static TokenError InvalidRequest(std::string description);
  static TokenError ClientIdRequired();         // 400 invalid_request "client_id is required"
  static TokenError UnsupportedGrantType();     // 400 invalid_request "grant_type must be ..."
  static TokenError CodeInvalidOrExpired();     // 400 invalid_grant code_invalid_or_expired
  static TokenError InvalidRefreshToken();      // 400 invalid_grant invalid_refresh_token
  static TokenError RefreshTokenRevoked();      // 400 invalid_grant refresh_token_revoked
  static TokenError InvalidClientCredentials(); // 401 invalid_client invalid_client_credentials
  static TokenError ClientNotFound();           // 401 invalid_client client_not_found
  // 400 invalid_grant for other grant failures (PKCE mismatch, redirect_uri mismatch).
  static TokenError InvalidGrant(std::string description);
  // 400 unauthorized_client, e.g. a client rejected after the grant was issued.
  static TokenError UnauthorizedClient(std::string description);
  // 413 invalid_request: the body exceeds kMaxTokenBodyBytes.
  static TokenError BodyTooLarge();
};

bool operator==(const TokenError& a, const TokenError& b);

// {"error": ..., "error_description": ...}
nlohmann::json ToJson(const TokenError& error);

// A well-formed token request. Strings absent from the request are empty. Only the parameters
// of its grant are guaranteed present: authorization_code has code and redirect_uri;
// refresh_token has refresh_token. client_secret and code_verifier are optional here: whether
// they are required depends on the client's kind, which the endpoint knows.
struct TokenRequest {
  std::string grant_type, client_id, client_secret, code, redirect_uri, code_verifier,
      refresh_token;
  bool basic_auth = false;  // credentials came from HTTP Basic
};

using TokenRequestResult = std::variant<TokenRequest, TokenError>;

// Parses a token endpoint request. `authorization` is the Authorization header when present;
// schemes other than Basic are ignored.
TokenRequestResult ParseTokenRequest(std::string_view content_type, std::string_view body,
                                     std::optional<std::string_view> authorization);

// Building blocks, shared with the revocation and introspection endpoints (RFC 7009, 7662),
// which take the same kinds of bodies and client authentication.

// The known parameters of a body (`known` names; others ignored), with the limits and rules
// above. Empty values are dropped.
using OAuthParams = std::map<std::string, std::string, std::less<>>;
std::variant<OAuthParams, TokenError> ParseOAuthBody(std::string_view content_type,
                                                     std::string_view body,
                                                     const std::vector<std::string_view>& known);

struct BasicCredentials {
  std::string client_id, client_secret;
};
// monostate when `authorization` is absent or not the Basic scheme; a TokenError when it is Basic
// but malformed (400 invalid_request).
std::variant<std::monostate, BasicCredentials, TokenError> ParseBasicCredentials(
    std::optional<std::string_view> authorization);

// Who a request says it is (RFC 6749 §2.3.1): client_id and client_secret taken out of `params`,
// or HTTP Basic from `authorization`. Both at once is invalid_request (one method per request), a
// client_id in the body besides Basic must be the same one, and no client_id at all is
// "client_id is required". The one reading of client credentials of the token, revocation,
// introspection and pushed authorization request endpoints.
struct ClientAuthentication {
  std::string client_id, client_secret;
  bool basic_auth = false;  // credentials came from HTTP Basic
};
std::variant<ClientAuthentication, TokenError> TakeClientAuthentication(
    OAuthParams& params, std::optional<std::string_view> authorization);

}  // namespace rendezvous::oauth
