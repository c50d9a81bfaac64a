// Pushed authorization requests (RFC 9126; DESIGN §5): the authorization parameters a client sent
// to POST /v2/auth/oauth2/par (par_endpoint.hpp), kept under a one-time request_uri until the
// authorization page uses them.
//
// A request_uri is "urn:ietf:params:oauth:request_uri:" + 43 base64url characters (RAND_bytes,
// 256 bits). Only its SHA-256 is stored (oauth_pushed_requests, migration 4), with the client and
// the parameters as pushed. It lives plugins.oauth.par_ttl seconds and is single use: the consent
// form's decision (Allow or Deny) consumes it, atomically, so that of two concurrent uses exactly
// one succeeds. Showing the consent page only reads it, so the detour through the login page (and
// a reload of the consent page) does not use it up before the user decides. Expired rows are
// deleted by the TokenPurger.
//
// A client holds at most `pending_per_address` (plugins.oauth.par_pending_per_address) unexpired
// requests pushed from one client address: a push beyond that is refused (the client's row is
// locked while counting, so concurrent pushes cannot pass the bound). There is no bound on the
// client as a whole: a public client's pushes need only its client_id, so any such bound could be
// spent by strangers and would lock the client's real users out. Each address spends its own
// share; rows live par_ttl seconds.
//
// Thread-safe; every call is one transaction and may throw DatabaseUnavailable. The Database must
// outlive it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "authorize_request.hpp"
#include "rendezvous/database.hpp"

namespace rendezvous::oauth {

inline constexpr std::string_view kRequestUriPrefix = "urn:ietf:params:oauth:request_uri:";
inline constexpr size_t kRequestUriRandomBytes = 32;
// The longest client address stored as given; a longer one is stored as its SHA-256 (hex).
inline constexpr size_t kMaxStoredAddressBytes = 64;

// The parameters as stored (a JSON object of the present ones: client_id, redirect_uri, state,
// scope, response_type, code_challenge, code_challenge_method) and back. FromJson gives a query
// with `pushed` set, or nullopt for text that is not such an object.
std::string PushedParamsJson(const AuthorizeQuery& params);
std::optional<AuthorizeQuery> PushedParamsFromJson(std::string_view json);

// Whether `request_uri` has the form PushedRequests::Push gives out (checked before any query).
bool IsPushedRequestUri(std::string_view request_uri);

// A stored request: the request_uri to send the browser with and its lifetime in seconds.
struct PushedRequest {
  std::string request_uri;
  long expires_in = 0;
};

class PushedRequests {
 public:
  // `ttl_seconds`: plugins.oauth.par_ttl; `pending_per_address`: plugins.oauth.par_pending_per_address.
  PushedRequests(Database& db, long ttl_seconds, size_t pending_per_address);

  // Stores `params` (already validated for `client_id`, an existing client) pushed from
  // `client_address` (Request::remote_ip: the address the server derived). nullopt when the client
  // already holds pending_per_address() unexpired requests from that address, or no longer exists.
  std::optional<PushedRequest> Push(const std::string& client_id, const std::string& client_address,
                                    const AuthorizeQuery& params);

  // The request stored under `request_uri` if it is `client_id`'s and unexpired, left in place.
  // nullopt otherwise: unknown, another client's, used or expired (not told apart).
  std::optional<AuthorizeQuery> Peek(const std::string& client_id, const std::string& request_uri);

  // As Peek, and deletes it: of concurrent calls for one request_uri at most one gets it. A
  // request_uri of another client is left in place.
  std::optional<AuthorizeQuery> Consume(const std::string& client_id, const std::string& request_uri);

  long ttl() const { return ttl_; }
  size_t pending_per_address() const { return pending_per_address_; }

 private:
  Database& db_;
  long ttl_;
  size_t pending_per_address_;
};

}  // namespace rendezvous::oauth
