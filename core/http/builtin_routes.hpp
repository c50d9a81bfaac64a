// The server's own routes: /healthz (inline) and /readyz (readiness callback) on the api listener,
// and the metrics path (prometheus text format) on the api or the metrics listener.
#pragma once

#include <functional>
#include <string>

#include "http/router.hpp"
#include "rendezvous/log.hpp"

namespace prometheus {
class Registry;
}

namespace rendezvous::core {

// `readiness` is read at request time (it may be set after this call); it and the other references
// must outlive the router's use.
void AddBuiltinRoutes(Router& router, const std::string& metrics_path, Listener metrics_listener,
                      prometheus::Registry& registry, const std::function<bool()>& readiness, Logger& logger);

}  // namespace rendezvous::core
