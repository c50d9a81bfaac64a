// The webhooks plugin's schema (migration owner "webhooks"), every version in one list: the
// subscriptions (WebhookStore) and their delivery log (DeliveryQueue). Versions and SQL already
// applied are never edited; a change is a new version at the end.
#pragma once

#include <vector>

#include "rendezvous/database.hpp"

namespace rendezvous::webhooks {

std::vector<Migration> WebhookMigrations();

}  // namespace rendezvous::webhooks
