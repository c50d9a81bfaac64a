#include "http/builtin_routes.hpp"

#include "metrics/metrics_registry.hpp"

namespace rendezvous::core {

void AddBuiltinRoutes(Router& router, const std::string& metrics_path, Listener metrics_listener,
                      prometheus::Registry& registry, const std::function<bool()>& readiness, Logger& logger) {
  rendezvous::Route health;
  health.listener = Listener::kApi;
  health.pattern = "/healthz";
  health.inline_handler = true;
  health.handler = [](Request&) { return Response::RawJson(200, Json{{"status", "ok"}}); };
  router.Add(std::move(health));

  rendezvous::Route ready;
  ready.listener = Listener::kApi;
  ready.pattern = "/readyz";
  ready.handler = [&readiness, &logger](Request&) {
    bool ok = true;
    if (readiness) {
      try {
        ok = readiness();
      } catch (const std::exception& e) {
        logger.Warn("readiness check failed", {{"error", e.what()}});
        ok = false;
      }
    }
    return ok ? Response::RawJson(200, Json{{"status", "ok"}}) : Response::RawJson(503, Json{{"status", "unavailable"}});
  };
  router.Add(std::move(ready));

  if (metrics_path.empty()) return;
  rendezvous::Route metrics;
  metrics.listener = metrics_listener;
  metrics.pattern = metrics_path;
  metrics.handler = [&registry](Request&) { return Response::Text(200, SerializeMetrics(registry), kMetricsContentType); };
  router.Add(std::move(metrics));
}

}  // namespace rendezvous::core
