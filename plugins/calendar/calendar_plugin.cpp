// The calendar plugin's wiring: config (DESIGN §8 plus the documented `ics_allow_private_networks`),
// migrations, the Google API client with its request metric, the service and its routes.

#include <memory>
#include <string>

#include "calendar_migrations.hpp"
#include "calendar_routes.hpp"
#include "calendar_service.hpp"
#include "google_api.hpp"
#include "rendezvous/plugin.hpp"

namespace rendezvous::calendar {
namespace {

class CalendarPlugin final : public Plugin {
 public:
  CalendarPlugin(std::unique_ptr<GoogleApi> google, std::shared_ptr<CalendarService> service)
      : google_(std::move(google)), service_(std::move(service)) {}
  Status Start() noexcept override { return Status::Ok(); }
  void Stop() noexcept override {}

 private:
  std::unique_ptr<GoogleApi> google_;
  std::shared_ptr<CalendarService> service_;
};

std::string Url(ConfigNode& node, const std::string& key, const std::string& def) {
  std::string v = node.String(key, def);
  if (v.rfind("http://", 0) != 0 && v.rfind("https://", 0) != 0) node.Fail(key, "must be an http(s) URL");
  while (!v.empty() && v.back() == '/') v.pop_back();
  return v;
}

// The host name of an http(s) URL, without port or user-info (cookies are shared across ports).
std::string HostOf(const std::string& url) {
  const size_t start = url.find("://");
  std::string authority = start == std::string::npos ? url : url.substr(start + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  if (const size_t at = authority.rfind('@'); at != std::string::npos) authority = authority.substr(at + 1);
  if (!authority.empty() && authority.front() == '[') return authority.substr(0, authority.find(']') + 1);
  return authority.substr(0, authority.find(':'));
}

std::string TrimSlash(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

// Google's revocation endpoint sits beside its token endpoint (https://oauth2.googleapis.com/revoke),
// so it is derived rather than configured: the token URL's last path segment becomes "revoke".
std::string RevokeUrl(const std::string& token_url) {
  const size_t scheme_end = token_url.find("://");
  const size_t slash = token_url.rfind('/');
  if (scheme_end == std::string::npos || slash <= scheme_end + 2) return token_url + "/revoke";
  return token_url.substr(0, slash) + "/revoke";
}

// The busy times of a user's Google calendars to check and ICS feeds, for the slots of the user's
// event types. All-day events of feeds are placed in the user's time zone.
class CalendarBusySource final : public BusyTimeSource {
 public:
  CalendarBusySource(std::shared_ptr<CalendarService> service, Identity& identity)
      : service_(std::move(service)), identity_(identity) {}
  Result<std::vector<BusyTime>> BusyTimes(int64_t user_id, time::Millis from, time::Millis to) override {
    if (!service_->HasBusySources(user_id)) return std::vector<BusyTime>{};
    std::optional<User> user = identity_.FindUser(user_id);
    const time::Zone zone =
        (user ? time::Zone::Find(user->time_zone) : std::nullopt).value_or(time::Zone::Utc());
    Result<std::vector<BusyPeriod>> periods = service_->CollectBusy(user_id, from, to, zone);
    if (!periods.ok()) return periods.status();
    std::vector<BusyTime> out;
    out.reserve(periods->size());
    for (const BusyPeriod& p : *periods) out.push_back({p.start, p.end});
    return out;
  }

 private:
  std::shared_ptr<CalendarService> service_;
  Identity& identity_;
};

std::unique_ptr<Plugin> Create(PluginContext& ctx) {
  ConfigNode& c = ctx.config();
  ConfigNode g = c.Child("google");
  GoogleConfig google;
  google.client_id = g.String("client_id", "");
  google.client_secret = g.Secret("client_secret", "");
  google.auth_url = Url(g, "auth_url", "https://accounts.google.com/o/oauth2/v2/auth");
  google.token_url = Url(g, "token_url", "https://oauth2.googleapis.com/token");
  google.api_base_url = Url(g, "api_base_url", "https://www.googleapis.com/calendar/v3");
  google.revoke_url = RevokeUrl(google.token_url);
  g.RejectUnknown();
  CalendarOptions options;
  // Not in DESIGN §8 (documented in docs/calendar.md): lets ICS feeds live on private or loopback
  // addresses, and on http:// for loopback hosts. For tests and closed networks.
  options.ics_allow_private_networks = c.Bool("ics_allow_private_networks", false);
  c.RejectUnknown();
  options.base_url = TrimSlash(ctx.base_url());
  options.app_url = TrimSlash(ctx.app_url());
  options.encryption_key = ctx.encryption_key();

  Logger& logger = ctx.logger();
  if (HostOf(options.app_url) != HostOf(options.base_url)) {
    logger.Warn(
        "calendar: server.app.app_url and server.api.base_url have different host names; the Google connect flow's"
        " browser cookie (set on the app host) cannot reach /v2/calendars/google/save, so connecting answers 403"
        " connect_browser_mismatch (see docs/calendar.md)");
  }
  if (options.encryption_key.size() != 32) {
    logger.Warn(
        "calendar: no credential encryption key; connecting Google calendars and saving ICS feeds answer 503 "
        "until the variable named by security.encryption_key_env (default RENDEZVOUS_ENCRYPTION_KEY) is set");
  }
  if (google.client_id.empty()) {
    logger.Info("calendar: plugins.calendar.google.client_id is empty; the Google connect flow answers 503");
  }

  MetricFamily& google_requests =
      ctx.metrics().Counter("calendar_google_requests_total",
                            "Requests the calendar plugin made to Google, by endpoint and outcome.",
                            {"endpoint", "outcome"});
  MetricFamily& ics_fetches =
      ctx.metrics().Counter("calendar_ics_fetches_total", "ICS feed downloads by outcome.", {"outcome"});
  auto api = std::make_unique<GoogleApi>(
      google, [&google_requests](const std::string& endpoint, const std::string& outcome) {
        google_requests.With({endpoint, outcome}).Increment();
      });
  auto service = std::make_shared<CalendarService>(ctx.db(), logger, *api, options,
                                                   [&ics_fetches](const std::string& outcome) {
                                                     ics_fetches.With({outcome}).Increment();
                                                   });
  ctx.AddMigrations(CalendarMigrations());
  RegisterCalendarRoutes(ctx, service);
  ctx.AddBusyTimeSource(std::make_shared<CalendarBusySource>(service, ctx.identity()));
  return std::make_unique<CalendarPlugin>(std::move(api), std::move(service));
}

}  // namespace
}  // namespace rendezvous::calendar

RENDEZVOUS_DEFINE_PLUGIN("calendar", &rendezvous::calendar::Create)
