// Managed users over the API (DESIGN §10, Cal.com's platform routes), authenticated by the OAuth
// client itself (x-cal-client-id, x-cal-secret-key: OAuthPlatformClients):
//
//   POST   /v2/oauth-clients/{clientId}/users                          201 {user, tokens, expiries}
//   GET    /v2/oauth-clients/{clientId}/users?limit&offset             the client's users
//   GET    /v2/oauth-clients/{clientId}/users/{userId}
//   PATCH  /v2/oauth-clients/{clientId}/users/{userId}
//   DELETE /v2/oauth-clients/{clientId}/users/{userId}                 revokes, cancels, removes
//   POST   /v2/oauth-clients/{clientId}/users/{userId}/force-refresh   new tokens, old ones revoked
//   POST   /v2/oauth/{clientId}/refresh {refreshToken}                 rotation as the token endpoint
//
// A client sees only its own managed users: another client's is 404, as no user is. Every call
// is counted in oauth_managed_user_requests_total{operation, outcome}.
#pragma once

#include <memory>

#include "managed_user_tokens.hpp"
#include "managed_users.hpp"
#include "platform_client_routes.hpp"
#include "refresh_grant.hpp"
#include "rendezvous/contracts/user_bookings.hpp"
#include "rendezvous/plugin.hpp"

namespace rendezvous::oauth {

// Where the bookings' cancellations come from once the plugins started (the bookings plugin's
// "bookings.user_bookings"); null when bookings are disabled.
struct UserBookingsSlot {
  std::shared_ptr<UserBookings> bookings;
};

struct ManagedUserServices {
  OAuthPlatformClients& platform;
  ManagedUsers& managed;
  ManagedUserTokens& tokens;
  RefreshGrant& refresh;
  std::shared_ptr<UserBookingsSlot> bookings;
  // Managed users one client may have at once (plugins.oauth.managed_users_per_client).
  int64_t max_users_per_client = 10000;
};

// The services must outlive the routes.
void RegisterManagedUserRoutes(PluginContext& ctx, const ManagedUserServices& services);

}  // namespace rendezvous::oauth
