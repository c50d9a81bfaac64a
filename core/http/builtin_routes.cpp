#include "http/builtin_routes.hpp"

#include <algorithm>
#include <fstream>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "http/api_description.hpp"
#include "metrics/metrics_registry.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::core {
namespace {

// The zones people pick from: every Zone of the system's tz database (the "Z" lines of
// /usr/share/zoneinfo/tzdata.zi, the file time zones are validated against) named Area/Location,
// without the Etc/ ones, each one the time library finds; sorted, at most kMaxZones.
std::vector<std::string> ListZoneNames() {
  constexpr size_t kMaxZones = 2000;
  constexpr size_t kMaxLines = 100000;
  std::vector<std::string> out;
  std::ifstream in("/usr/share/zoneinfo/tzdata.zi");
  std::string line;
  for (size_t n = 0; n < kMaxLines && out.size() < kMaxZones && std::getline(in, line); ++n) {
    if (line.size() < 3 || line[0] != 'Z' || line[1] != ' ') continue;
    const size_t end = line.find(' ', 2);
    std::string name = line.substr(2, end == std::string::npos ? std::string::npos : end - 2);
    if (name.find('/') == std::string::npos || name.rfind("Etc/", 0) == 0) continue;
    if (time::Zone::Find(name)) out.push_back(std::move(name));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

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

  // Cal.com's list of time zones (DESIGN §10): {city, timezone, pop} for each zone of the tz
  // database the server validates against, built on the first request and kept (the database
  // changes with a package upgrade, which restarts the server). The city is the zone's last part;
  // no population figures ship with the tz database, so pop is 0.
  rendezvous::Route timezones;
  timezones.listener = Listener::kApi;
  timezones.pattern = "/v2/timezones";
  timezones.inline_handler = true;
  auto zones = std::make_shared<std::pair<std::once_flag, std::string>>();
  timezones.handler = [zones](Request&) {
    std::call_once(zones->first, [&] {
      Json data = Json::array();
      for (const std::string& name : ListZoneNames()) {
        std::string city = name.substr(name.rfind('/') + 1);
        std::replace(city.begin(), city.end(), '_', ' ');
        data.push_back(Json{{"city", std::move(city)}, {"timezone", name}, {"pop", 0}});
      }
      zones->second = Json{{"status", "success"}, {"data", std::move(data)}}.dump();
    });
    Response r;
    r.body = zones->second;
    return r;
  };
  router.Add(std::move(timezones));

  if (metrics_path.empty()) return;
  rendezvous::Route metrics;
  metrics.listener = metrics_listener;
  metrics.pattern = metrics_path;
  metrics.handler = [&registry](Request&) { return Response::Text(200, SerializeMetrics(registry), kMetricsContentType); };
  router.Add(std::move(metrics));
}

}  // namespace rendezvous::core
