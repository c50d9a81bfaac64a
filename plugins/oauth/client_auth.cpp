#include "client_auth.hpp"

#include "rendezvous/crypto.hpp"

namespace rendezvous::oauth {

std::optional<TokenError> AuthenticateClient(const std::optional<ClientCredentials>& client, const std::string& secret) {
  if (!client) return TokenError::ClientNotFound();
  if (client->kind == ClientKind::kPublic) {
    if (!secret.empty()) return TokenError::InvalidClientCredentials();  // public clients have no secret
    return std::nullopt;
  }
  if (secret.empty() || secret.size() > kMaxClientSecretLength) return TokenError::InvalidClientCredentials();
  const std::string hash = crypto::Sha256Hex(secret);
  bool match = false;
  for (const std::string& h : client->active_secret_hashes) match = crypto::ConstantTimeEquals(h, hash) || match;
  if (!match) return TokenError::InvalidClientCredentials();
  return std::nullopt;
}

}  // namespace rendezvous::oauth
