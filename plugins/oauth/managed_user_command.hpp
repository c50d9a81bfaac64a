// `rendezvous admin managed-user create --client-id ID --email E --name N [--time-zone TZ]`
// (DESIGN §3, spec §5.1): a user who cannot sign in, and tokens for the client that manages it.
// Prints one JSON object on `out` and returns 0; on failure a message on `err` and 2 for a usage
// error, 1 otherwise. DatabaseUnavailable propagates (the core's command line maps it).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "client_service.hpp"
#include "managed_user_tokens.hpp"
#include "rendezvous/user.hpp"

namespace rendezvous::oauth {

// `args`: the words after "managed-user".
int RunManagedUserCommand(ClientService& clients, ManagedUserTokens& tokens, UserDirectory& users,
                          const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace rendezvous::oauth
