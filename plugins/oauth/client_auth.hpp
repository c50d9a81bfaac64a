// Client authentication (RFC 6749 §2.3.1) for the token, revocation and introspection endpoints:
// the specification's §7.2 answers, decided from a client's kind and its active secret hashes.
// Pure logic; the rows come from ClientService::LoadCredentials (through its ClientCache). The
// code and refresh grants apply these same rules inside their one procedure call
// (oauth_migrations.cpp, migration 9), on the SHA-256 of the secret sent: a change here is a
// change there.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client_policy.hpp"
#include "token_request.hpp"

namespace rendezvous::oauth {

struct ClientCredentials {
  ClientKind kind = ClientKind::kConfidential;
  std::vector<std::string> active_secret_hashes;  // SHA-256 hex of each active secret
};

inline constexpr size_t kMaxClientIdLength = 64;

// Whether `client_id` can name a client at all: 1..64 visible ASCII characters. Ids from outside
// (query strings, paths, forms, the command line) are checked with this before they reach SQL,
// where text in another character set than the column's is an error, not a miss.
inline bool CanBeClientId(std::string_view client_id) {
  if (client_id.empty() || client_id.size() > kMaxClientIdLength) return false;
  for (char c : client_id) {
    if (c <= 0x20 || c >= 0x7f) return false;
  }
  return true;
}
inline constexpr size_t kMaxClientSecretLength = 256;

// nullopt: authenticated. No client: 401 client_not_found. A confidential client needs a secret
// matching one active hash (every hash is compared in constant time, so timing does not tell
// which matched); a public client must send none. Otherwise 401 invalid_client_credentials.
std::optional<TokenError> AuthenticateClient(const std::optional<ClientCredentials>& client, const std::string& secret);

}  // namespace rendezvous::oauth
