// What the token jobs share (spec §3.2, §4.2–4.4, §5.1; DESIGN §5): lifetimes, token formats,
// the grant a code carries and the token endpoint's answer. Each job is a class of its own:
// CodeExchange (codes), RefreshGrant (rotation), ManagedUserTokens (§5.1), IssuedTokens
// (resolution, introspection, revocation) and TokenPurger (expired rows, active grants).
// All tokens are random (crypto::RandomToken, 256 bits) and stored only as SHA-256 hashes.
//
// Storage (owner "oauth", migrations 2, 3 and 5, oauth_migrations.hpp): oauth_grants (one
// authorization of a client by a user: scopes, kind 'oauth' or 'managed', revoked_at),
// oauth_codes (single-use codes, bound to client, user, redirect URI, scopes and PKCE challenge;
// grant_id once exchanged), oauth_access_tokens and oauth_refresh_tokens (hash -> grant, and the
// DPoP key thumbprint the token is bound to, '' for a bearer token).
// Revoking a grant (code replay, refresh reuse, revocation of a refresh token) kills every token
// of it: resolution and refresh check the grant.
//
// Client state at the token endpoint: a rejected client -> unauthorized_client; a pending one
// works only for grants of its owner (testing before review). Tokens of a rejected client stop
// resolving.
//
// Token formats: access tokens "rdvat_" + 43 base64url characters, refresh tokens "rdvrt_" + 43;
// anything else is refused without a database round trip.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "client_auth.hpp"
#include "token_request.hpp"

namespace rendezvous::oauth {

struct TokenLifetimes {
  long access_token_ttl = 1800;      // plugins.oauth.access_token_ttl
  long refresh_token_ttl = 2592000;  // plugins.oauth.refresh_token_ttl
  long code_ttl = 600;               // plugins.oauth.code_ttl
};

// What the user allowed on the consent page; bound into the code.
struct CodeGrant {
  std::string client_id;
  int64_t user_id = 0;
  std::string redirect_uri;
  std::vector<std::string> scopes;  // granted scopes (empty + all_scopes for a legacy client without `scope`)
  bool all_scopes = false;
  std::string code_challenge;  // S256 challenge, "" when none was sent
};

// The token endpoint's success body (spec §2.2): access_token, refresh_token, token_type "bearer"
// (or "DPoP" for tokens bound to a DPoP key, RFC 9449 §5), expires_in, scope (space-separated).
struct TokenResponse {
  std::string access_token;
  std::string refresh_token;
  long expires_in = 1800;
  std::string scope;
  bool dpop = false;
};

// The DPoP keys (RFC 7638 thumbprints) new tokens are bound to; "" = a plain bearer token.
struct TokenBinding {
  std::string access_jkt;
  std::string refresh_jkt;
};

// {"access_token","refresh_token","token_type":"bearer"|"DPoP","expires_in","scope"}
inline nlohmann::json ToJson(const TokenResponse& response) {
  return {{"access_token", response.access_token},
          {"refresh_token", response.refresh_token},
          {"token_type", response.dpop ? "DPoP" : "bearer"},
          {"expires_in", response.expires_in},
          {"scope", response.scope}};
}

using TokenResult = std::variant<TokenResponse, TokenError>;

// The client credentials a token request presented, for the grant to authenticate the client in
// its own statement by client_auth.hpp's rules (AuthenticateClient), before anything about the
// code or token is decided (§7.2 answers first). `authenticate` false: the caller authenticated
// the client already, and `secret` is not looked at. The code grant also refuses a public client
// that sent no code_verifier (invalid_request), as the token endpoint must.
struct PresentedClient {
  bool authenticate = false;
  std::string secret;  // "" when none was sent
};

// Grants that can still be used: not revoked, with a refresh token that is neither rotated,
// revoked nor expired. By the grant's kind: third-party apps ("oauth") and managed users.
struct ActiveGrants {
  int64_t oauth = 0;
  int64_t managed = 0;
};

inline constexpr std::string_view kAccessTokenPrefix = "rdvat_";
inline constexpr std::string_view kRefreshTokenPrefix = "rdvrt_";

}  // namespace rendezvous::oauth
