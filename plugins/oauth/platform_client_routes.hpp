// OAuth clients acting as a platform (DESIGN §10): the client's own credentials on the
// /v2/oauth-clients/{clientId}/... routes, and the managing client of a managed user. Provided to
// other plugins as "oauth.platform_clients" (rendezvous/contracts/platform_clients.hpp).
#pragma once

#include <optional>
#include <string>

#include "managed_users.hpp"
#include "rendezvous/contracts/platform_clients.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/http.hpp"

namespace rendezvous::oauth {

// Thread-safe. The Database and ManagedUsers must outlive it.
class OAuthPlatformClients final : public PlatformClients {
 public:
  OAuthPlatformClients(Database& db, ManagedUsers& managed) : db_(db), managed_(managed) {}

  // One read of the client (kind, active secret hashes, state, owner); the secret is compared
  // with every active hash in constant time (client_auth.hpp). Public clients have no secret, so
  // they never authenticate here.
  Result<PlatformClient> Authenticate(const Request& request, const std::string& path_client_id) override;
  std::optional<std::string> ManagingClient(int64_t user_id) override {
    return managed_.ManagingClient(user_id);
  }
  // The same for `client_id` named by the route alone (POST /v2/oauth/{clientId}/refresh, whose
  // caller sends only x-cal-secret-key).
  Result<PlatformClient> AuthenticateSecret(const std::string& client_id, const std::string& secret);

 private:
  Database& db_;
  ManagedUsers& managed_;
};

}  // namespace rendezvous::oauth
