#include "authorize_request.hpp"

#include <algorithm>
#include <string_view>

#include "pkce.hpp"
#include "rendezvous/text.hpp"
#include "scopes.hpp"
#include "rendezvous/url.hpp"

namespace rendezvous::oauth {
namespace {

constexpr char kNotRecognized[] = "Requested scope is not a recognized scope";
constexpr char kExceeds[] = "Requested scope exceeds the client's registered scopes";
constexpr char kScopeRequired[] = "scope parameter is required for this OAuth client";

bool Contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// C0 controls (tab, CR and LF included) and DEL.
bool HasAnyControl(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

}  // namespace

AuthorizeQuery AuthorizeQuery::FromParams(const std::multimap<std::string, std::string>& query) {
  AuthorizeQuery q;
  for (const auto& [name, member] : kAuthorizeQueryFields) {
    auto [begin, end] = query.equal_range(name);
    if (begin == end) continue;
    q.*member = begin->second;
    if (std::next(begin) != end) q.repeated.emplace_back(name);
  }
  return q;
}

std::string AuthorizeRedirectError::Url(const std::string& issuer) const {
  std::vector<std::pair<std::string, std::string>> params = {
      {"error", error}, {"error_description", error_description}};
  if (state) params.emplace_back("state", *state);
  params.emplace_back("iss", issuer);
  return net::AppendQuery(redirect_uri, params);
}

std::string SuccessRedirectUrl(const std::string& redirect_uri, const std::string& code,
                               const std::optional<std::string>& state, const std::string& issuer) {
  std::vector<std::pair<std::string, std::string>> params = {{"code", code}};
  if (state) params.emplace_back("state", *state);
  params.emplace_back("iss", issuer);
  return net::AppendQuery(redirect_uri, params);
}

AuthorizeRedirectError AccessDenied(const AuthorizeGrant& grant) {
  return {grant.redirect_uri, "access_denied", "The user denied the authorization request",
          grant.state};
}

AuthorizeOutcome ValidateAuthorizeRequest(const AuthorizeQuery& query,
                                          const AuthorizeClientView* client, int64_t user_id) {
  if (Contains(query.repeated, "client_id")) {
    return AuthorizePageError{"client_id is given more than once"};
  }
  if (!query.client_id || query.client_id->empty()) {
    return AuthorizePageError{"client_id is required"};
  }
  if (client == nullptr || client->client_id != *query.client_id) {
    return AuthorizePageError{"No OAuth client with this client_id exists"};
  }
  if (client->state == ClientState::kRejected) {
    return AuthorizePageError{"This OAuth client was rejected and cannot be used"};
  }
  if (client->state == ClientState::kPending && client->owner_id != user_id) {
    return AuthorizePageError{
        "This OAuth client is awaiting approval; until then only its owner can use it"};
  }
  if (client->require_par && !query.pushed) {
    return AuthorizePageError{
        "This OAuth client accepts only pushed authorization requests: its application must push the "
        "request first (request_uri)"};
  }
  if (Contains(query.repeated, "redirect_uri")) {
    return AuthorizePageError{"redirect_uri is given more than once"};
  }
  if (!query.redirect_uri || query.redirect_uri->empty()) {
    return AuthorizePageError{"redirect_uri is required"};
  }
  if (!Contains(client->redirect_uris, *query.redirect_uri)) {
    return AuthorizePageError{"redirect_uri is not registered for this OAuth client"};
  }

  const bool legacy = IsLegacyClient(client->scopes);
  Result<std::vector<std::string>> requested =
      ParseScopeParam(query.scope ? std::string_view(*query.scope) : std::string_view());
  const bool scope_missing = requested.ok() && requested->empty();
  if (scope_missing && !legacy) return AuthorizePageError{kScopeRequired};

  const bool state_short = !query.state || query.state->size() <= kMaxStateLength;
  // The consent form carries state through the browser, which rewrites ill-formed UTF-8 and line
  // breaks: such a state would come back changed and fail the application's check.
  const bool state_text = !query.state || (text::IsValidUtf8(*query.state) && !HasAnyControl(*query.state));
  const bool state_ok = state_short && state_text;
  auto redirect_error = [&](std::string error, std::string description) {
    return AuthorizeRedirectError{*query.redirect_uri, std::move(error), std::move(description),
                                  state_ok ? query.state : std::nullopt};
  };

  if (query.response_type && *query.response_type != "code") {
    return redirect_error("unsupported_response_type", "response_type must be 'code'");
  }
  if (!query.repeated.empty()) {
    return redirect_error("invalid_request",
                          "parameter " + query.repeated.front() + " is given more than once");
  }
  if (!state_short) {
    return redirect_error("invalid_request", "state must be at most " +
                                                 std::to_string(kMaxStateLength) + " characters");
  }
  if (!state_text) {
    return redirect_error("invalid_request", "state must be UTF-8 text without control characters");
  }

  AuthorizeGrant grant;
  if (!requested.ok()) return redirect_error("invalid_scope", kNotRecognized);
  for (const std::string& s : *requested) {
    if (!IsRecognizedScope(s)) return redirect_error("invalid_scope", kNotRecognized);
  }
  if (!legacy) {
    for (const std::string& s : *requested) {
      if (!Contains(client->scopes, s)) return redirect_error("invalid_request", kExceeds);
    }
  }
  if (scope_missing) {
    grant.all_scopes = true;
    grant.scopes = client->scopes;
  } else {
    grant.scopes = std::move(*requested);
  }

  const bool has_challenge = query.code_challenge && !query.code_challenge->empty();
  if (query.code_challenge_method && *query.code_challenge_method != "S256") {
    return redirect_error("invalid_request", "code_challenge_method must be S256");
  }
  if (query.code_challenge_method && !has_challenge) {
    return redirect_error("invalid_request", "code_challenge is required with code_challenge_method");
  }
  if (has_challenge && !IsValidS256Challenge(*query.code_challenge)) {
    return redirect_error("invalid_request",
                          "code_challenge must be an S256 challenge (43 base64url characters)");
  }
  if (!has_challenge && client->kind == ClientKind::kPublic) {
    return redirect_error("invalid_request",
                          "code_challenge (PKCE, method S256) is required for public clients");
  }
  if (has_challenge) {
    grant.code_challenge = *query.code_challenge;
    grant.code_challenge_method = "S256";
  }

  grant.client_id = client->client_id;
  grant.redirect_uri = *query.redirect_uri;
  grant.state = query.state;
  return grant;
}

}  // namespace rendezvous::oauth
