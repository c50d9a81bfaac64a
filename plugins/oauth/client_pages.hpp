// The OAuth client pages on the app host ({app_url}), DESIGN §3:
//   GET  /settings/developer/oauth                       the user's clients + create form
//   POST /settings/developer/oauth                       create (a new secret is shown once)
//   GET  /settings/developer/oauth/:client_id            edit form + secrets
//   POST /settings/developer/oauth/:client_id            update
//   POST /settings/developer/oauth/:client_id/secrets    generate a secret (shown once)
//   POST /settings/developer/oauth/:client_id/secrets/:secret_id/revoke
//   GET  /admin/oauth-clients                            pending clients (admins only)
//   POST /admin/oauth-clients/:client_id/review          accept=1 | reject=1, reason
// Every route needs a session; every POST checks the form's CSRF token first (403, nothing
// changed). Pages answer with Cache-Control: no-store.
#pragma once

#include "client_service.hpp"
#include "rendezvous/plugin.hpp"

namespace rendezvous::oauth {

// Registers the routes above (call from the plugin's factory). `service` and `ctx` must outlive
// the server's routes, i.e. belong to the plugin. The handlers are thread-safe.
void RegisterClientPages(rendezvous::PluginContext& ctx, rendezvous::oauth::ClientService& service);

}  // namespace rendezvous::oauth
