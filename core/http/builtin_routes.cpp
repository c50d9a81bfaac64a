#include "http/builtin_routes.hpp"

#include <memory>
#include <mutex>
#include <utility>

#include "http/api_description.hpp"
#include "metrics/metrics_registry.hpp"

namespace rendezvous::core {

void AddBuiltinRoutes(Router& router, const std::string& metrics_path, Listener metrics_listener,
                      prometheus::Registry& registry, const std::function<bool()>& readiness, Logger& logger,
                      const DescriptionUrls& urls) {
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

  rendezvous::Route openapi;
  openapi.listener = Listener::kApi;
  openapi.pattern = "/v2/openapi.json";
  openapi.inline_handler = true;
  // Converted on the first request (most servers of the test suite never serve it), then kept.
  auto served = std::make_shared<std::pair<std::once_flag, ApiDescription>>();
  openapi.handler = [served, urls](Request& req) {
    std::call_once(served->first, [&] { served->second = OpenApiDescription(urls); });
    const ApiDescription& description = served->second;
    Response r;
    if (req.Header("if-none-match") == description.etag) {
      r.status = 304;
    } else {
      r.body = description.json;
    }
    // Clients may keep it but ask again (cheaply: 304) before using it, so an upgrade shows at once.
    r.With("ETag", description.etag).With("Cache-Control", "no-cache");
    return r;
  };
  router.Add(std::move(openapi));

  if (metrics_path.empty()) return;
  rendezvous::Route metrics;
  metrics.listener = metrics_listener;
  metrics.pattern = metrics_path;
  metrics.handler = [&registry](Request&) { return Response::Text(200, SerializeMetrics(registry), kMetricsContentType); };
  router.Add(std::move(metrics));
}

}  // namespace rendezvous::core
