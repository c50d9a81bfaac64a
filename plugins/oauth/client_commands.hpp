// `rendezvous admin oauth-client ...` (DESIGN §3): create, update, review, secret generate|revoke,
// show. Each prints one JSON object on `out` and returns 0; on failure a message on `err` and 2
// for a usage error, 1 otherwise. DatabaseUnavailable propagates (the core's command line maps
// it). Stateless; as thread-safe as the service.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "client_service.hpp"

namespace rendezvous::oauth {

// `args`: the words after "oauth-client".
int RunClientCommand(ClientService& service, const std::vector<std::string>& args, std::ostream& out,
                     std::ostream& err);

}  // namespace rendezvous::oauth
