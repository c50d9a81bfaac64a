// The server's own routes: /healthz (inline), /readyz (readiness callback) and /v2/openapi.json (the
// API's description, api_description.hpp) on the api listener, and the metrics path (prometheus
// text format) on the api or the metrics listener.
#pragma once

#include <functional>
#include <string>

#include "http/api_description.hpp"
#include "http/router.hpp"
#include "rendezvous/log.hpp"

namespace prometheus {
class Registry;
}

namespace rendezvous::core {

// `readiness` is read at request time (it may be set after this call); it and the other references
// must outlive the router's use. `urls` fill the API description's server and OAuth addresses.
void AddBuiltinRoutes(Router& router, const std::string& metrics_path, Listener metrics_listener,
                      prometheus::Registry& registry, const std::function<bool()>& readiness, Logger& logger,
                      const DescriptionUrls& urls);

}  // namespace rendezvous::core
