// OAuth clients acting as a platform (DESIGN §10): a client's own credentials on the
// /v2/oauth-clients/{clientId}/... routes, and the managed users each client owns. The oauth
// plugin, which owns clients and managed users, provides this service as "oauth.platform_clients";
// without it (oauth disabled) no route authenticates a client this way and no user is managed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "rendezvous/status.hpp"

namespace rendezvous {

struct Request;  // rendezvous/http.hpp: the routes that authenticate include it

struct PlatformClient {
  std::string client_id;
  int64_t owner_user_id = 0;  // the user who registered the client (its pages show its webhooks)
};

// Thread-safe. Calls may throw DatabaseUnavailable.
class PlatformClients {
 public:
  virtual ~PlatformClients() = default;
  // Authenticates `x-cal-client-id` and `x-cal-secret-key` for the route's `{clientId}`
  // (`path_client_id`). Ok: that client. 401 with the envelope when a header is missing, names
  // another or no client, or the secret matches none of the client's active secrets (compared in
  // constant time); 403 when the client exists but is not approved.
  virtual Result<PlatformClient> Authenticate(const Request& request, const std::string& path_client_id) = 0;
  // The client that manages `user_id`; nullopt for a user no client manages. A user's managing
  // client never changes, so implementations may answer from memory.
  virtual std::optional<std::string> ManagingClient(int64_t user_id) = 0;
};

}  // namespace rendezvous
