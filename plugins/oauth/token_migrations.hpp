// The token tables and the rotation procedure (tokens.hpp describes them), owner "oauth": versions
// 2 and 3, after the clients' (ClientService::Migrations).
#pragma once

#include <vector>

#include "rendezvous/database.hpp"

namespace rendezvous::oauth {

std::vector<Migration> TokenMigrations();

}  // namespace rendezvous::oauth
