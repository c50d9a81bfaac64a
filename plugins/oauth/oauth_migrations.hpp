// The oauth plugin's schema (migration owner "oauth"), every version in one list: the clients and
// their secrets (ClientService), then grants, codes and tokens and the refresh rotation procedure
// (the token jobs, tokens.hpp). Versions and SQL already applied are never edited; a change is a
// new version at the end.
#pragma once

#include <vector>

#include "rendezvous/database.hpp"

namespace rendezvous::oauth {

std::vector<Migration> OAuthMigrations();

}  // namespace rendezvous::oauth
