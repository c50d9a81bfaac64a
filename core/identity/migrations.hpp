// The identity area's tables (owner "identity"): users, api_keys, sessions (version 1);
// verified_emails, verified_phones, verification_codes, verification_requests (2). MariaDB 10.6+ and
// MySQL 8; times are DATETIME(3) in UTC (written with UTC_TIMESTAMP(3)).
#pragma once

#include <vector>

#include "rendezvous/database.hpp"

namespace rendezvous::core {

std::vector<Migration> IdentityMigrations();

}  // namespace rendezvous::core
