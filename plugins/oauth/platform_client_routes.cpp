#include "platform_client_routes.hpp"

#include "client_auth.hpp"
#include "token_storage.hpp"

namespace rendezvous::oauth {
namespace {

Status Unauthenticated(std::string message) {
  return Status(ErrorCode::kUnauthenticated, std::move(message));
}

}  // namespace

Result<PlatformClient> OAuthPlatformClients::Authenticate(const Request& request,
                                                          const std::string& path_client_id) {
  const std::optional<std::string> header_id = request.Header("x-cal-client-id");
  const std::optional<std::string> secret = request.Header("x-cal-secret-key");
  if (!header_id || !secret || header_id->empty() || secret->empty()) {
    return Unauthenticated("the x-cal-client-id and x-cal-secret-key headers are required");
  }
  if (*header_id != path_client_id)
    return Unauthenticated("x-cal-client-id does not name the client of the path");
  return AuthenticateSecret(path_client_id, *secret);
}

Result<PlatformClient> OAuthPlatformClients::AuthenticateSecret(const std::string& path_client_id,
                                                                const std::string& secret) {
  if (secret.empty()) return Unauthenticated("the x-cal-secret-key header is required");
  if (!CanBeClientId(path_client_id)) return Unauthenticated("invalid OAuth client credentials");
  std::optional<GrantClient> client =
      db_.Run([&](DbConnection& conn) { return ReadGrantClient(conn, path_client_id); });
  // A public client has no secret: a platform client must be confidential.
  if (!client || client->credentials.kind == ClientKind::kPublic ||
      AuthenticateClient(client->credentials, secret).has_value()) {
    return Unauthenticated("invalid OAuth client credentials");
  }
  if (client->row.state != "approved") {
    return Status(ErrorCode::kForbidden, "the OAuth client is not approved")
        .WithReason("client_not_approved");
  }
  return PlatformClient{path_client_id, client->row.owner_id};
}

}  // namespace rendezvous::oauth
