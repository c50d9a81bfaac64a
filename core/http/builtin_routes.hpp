// The server's own routes on the api listener: /healthz (inline), /readyz (readiness callback) and
// the metrics path (prometheus text format; none when the path is empty).
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
void AddBuiltinRoutes(Router& router, const std::string& metrics_path, prometheus::Registry& registry,
                      const std::function<bool()>& readiness, Logger& logger);

}  // namespace rendezvous::core
