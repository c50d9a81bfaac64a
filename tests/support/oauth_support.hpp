// OAuth helpers for integration tests: PKCE and encoding helpers, and a one-call way to obtain an
// OAuth access token with chosen scopes from the real server (a client made through the CLI, an
// authorization code row stored as the consent page stores it, exchanged at the token endpoint).
// The browser tests (tests/e2e) cover the pages that issue codes; route tests only need tokens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scratch_db.hpp"
#include "test_server.hpp"

namespace rendezvous::testing {

std::string Sha256Raw(const std::string& data);
std::string HexEncode(const std::string& raw);
std::string Base64Encode(const std::string& raw);
// RFC 7636 S256 challenge of a verifier (base64url, no padding).
std::string S256Challenge(const std::string& verifier);
// application/x-www-form-urlencoded value encoding (RFC 3986 unreserved kept).
std::string FormEncode(const std::string& s);

constexpr const char* kTestRedirectUri = "https://app.example.com/callback";

// Stores an authorization code for `client_id` as the consent page would; returns the code.
std::string InsertAuthorizationCode(const ScratchDatabase& db, const std::string& client_id, int64_t user_id,
                                    const std::vector<std::string>& scopes, bool all_scopes = false,
                                    const std::string& challenge = "", int expires_in = 600);

struct OAuthGrant {
  std::string client_id;
  std::string client_secret;
  std::string access_token;
  std::string refresh_token;
  std::string scope;  // as the token response gave it
};

// An approved confidential client owned by `owner_id` with `client_scopes` (empty: a legacy
// client), and tokens for `user_id` carrying `scopes` (legacy + empty `scopes`: an all-scopes
// grant). The server must be running. Fails the calling test (ADD_FAILURE) and returns empty
// tokens on any error.
// Tokens for `user_id` from an existing approved client: an authorization code carrying `scopes`
// (`all_scopes`: a legacy client's unscoped grant) exchanged at the token endpoint.
OAuthGrant IssueOAuthTokens(const TestServer& server, const ScratchDatabase& db, const std::string& client_id,
                            const std::string& client_secret, int64_t user_id, const std::vector<std::string>& scopes,
                            bool all_scopes = false);

OAuthGrant GrantOAuthToken(const TestServer& server, const ScratchDatabase& db, int64_t owner_id, int64_t user_id,
                           const std::vector<std::string>& client_scopes, const std::vector<std::string>& scopes);

}  // namespace rendezvous::testing
