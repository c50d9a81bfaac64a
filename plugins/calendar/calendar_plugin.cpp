// The calendar plugin's wiring: config (DESIGN §8 plus the documented `ics_allow_private_networks`),
// migrations, the Google API client with its request metric, the service and its routes, and the
// booking events' way into Google Calendar (an outbox consumer writing sync jobs, the sync worker
// performing them, the booking references it records).

#include <memory>
#include <set>
#include <string>

#include "booking_sync_plan.hpp"
#include "calendar_migrations.hpp"
#include "calendar_routes.hpp"
#include "calendar_service.hpp"
#include "google_api.hpp"
#include "rendezvous/booking_references.hpp"
#include "rendezvous/outbox.hpp"
#include "rendezvous/plugin.hpp"
#include "rendezvous/url.hpp"
#include "sync_jobs.hpp"
#include "sync_worker.hpp"

namespace rendezvous::calendar {
namespace {

constexpr const char* kSyncConsumer = "calendar";
constexpr const char* kBookingsTopic = "bookings";

// The booking references the sync worker records, through the bookings plugin's host service once
// it is found (absent when the bookings plugin is disabled: then there are no booking events
// either). Thread-safe after Start().
class ReferenceRecorder {
 public:
  void Attach(std::shared_ptr<BookingReferences> references) { references_ = std::move(references); }
  // Records the job's event as a reference of its booking, unless a repeated job did already. A
  // moved event's reference moves from the bookings that had it, so that one booking at a time
  // names the event.
  void Record(const SyncJob& job, const std::string& calendar_id, Logger& logger) const {
    if (!references_) return;
    const BookingReference reference{"google_calendar", job.event_id, calendar_id, 0};
    bool recorded = false;
    for (const std::string& from : job.moved_from) {
      Status s = references_->Move(from, job.booking_uid, reference);
      if (s.ok())
        recorded = true;
      else
        logger.Warn("calendar sync: the booking reference was not moved",
                    {{"booking_uid", job.booking_uid}, {"from_uid", from}, {"error", s.message()}});
    }
    if (recorded) return;
    for (const BookingReference& r : references_->List(job.booking_uid)) {
      if (r.type == reference.type && r.event_uid == reference.event_uid) return;
    }
    Status s = references_->Add(job.booking_uid, reference);
    if (!s.ok())
      logger.Warn("calendar sync: the booking reference was not recorded",
                  {{"booking_uid", job.booking_uid}, {"error", s.message()}});
  }

 private:
  std::shared_ptr<BookingReferences> references_;
};

class CalendarPlugin final : public Plugin {
 public:
  CalendarPlugin(PluginContext& ctx, std::unique_ptr<GoogleApi> google, std::shared_ptr<CalendarService> service,
                 std::shared_ptr<ReferenceRecorder> references, std::shared_ptr<SyncWorker> worker)
      : ctx_(ctx),
        google_(std::move(google)),
        service_(std::move(service)),
        references_(std::move(references)),
        worker_(std::move(worker)) {}
  Status Start() noexcept override {
    try {
      references_->Attach(ctx_.Find<BookingReferences>("bookings.references"));
      worker_->Start();
    } catch (const std::exception& e) {
      return Status(ErrorCode::kInternal, std::string("the calendar sync worker did not start: ") + e.what());
    }
    return Status::Ok();
  }
  void Stop() noexcept override { worker_->Stop(); }

 private:
  PluginContext& ctx_;
  std::unique_ptr<GoogleApi> google_;
  std::shared_ptr<CalendarService> service_;
  std::shared_ptr<ReferenceRecorder> references_;
  std::shared_ptr<SyncWorker> worker_;
};

std::string Url(ConfigNode& node, const std::string& key, const std::string& def) {
  std::string v = node.String(key, def);
  if (v.rfind("http://", 0) != 0 && v.rfind("https://", 0) != 0) node.Fail(key, "must be an http(s) URL");
  while (!v.empty() && v.back() == '/') v.pop_back();
  return v;
}

// The host name of a URL, without port (cookies are shared across ports); "" when it does not parse.
std::string HostOf(const std::string& url) {
  Result<net::Url> parsed = net::ParseUrl(url);
  return parsed.ok() ? parsed->host : "";
}

std::string TrimSlash(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

// Google's revocation endpoint sits beside its token endpoint (https://oauth2.googleapis.com/revoke),
// so it is derived rather than configured: the token URL's last path segment becomes "revoke".
std::string RevokeUrl(const std::string& token_url) {
  Result<net::Url> url = net::ParseUrl(token_url);
  if (!url.ok() || url->path.empty()) return token_url + "/revoke";
  const std::string port = url->port ? ":" + std::to_string(*url->port) : "";
  return url->scheme + "://" + url->HostInUrl() + port + url->path.substr(0, url->path.rfind('/')) + "/revoke";
}

// The busy times of a user's Google calendars to check and ICS feeds, for the slots of the user's
// event types (CalendarService::SlotBusy: cached, bounded in time, failures reported). All-day
// events of feeds are placed in the user's time zone.
class CalendarBusySource final : public BusyTimeSource {
 public:
  CalendarBusySource(std::shared_ptr<CalendarService> service, Identity& identity)
      : service_(std::move(service)), identity_(identity) {}
  BusyReport BusyTimes(int64_t user_id, time::Millis from, time::Millis to) override {
    std::optional<User> user = identity_.FindUser(user_id);
    const time::Zone zone =
        (user ? time::Zone::Find(user->time_zone) : std::nullopt).value_or(time::Zone::Utc());
    const CollectedBusy busy = service_->SlotBusy(user_id, from, to, zone);
    BusyReport out;
    out.times.reserve(busy.periods.size());
    for (const BusyPeriod& p : busy.periods) out.times.push_back({p.start, p.end});
    for (const BusySourceError& f : busy.failures) out.failures.push_back({f.source, BusyFailureCode(f.status)});
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
  // Not in DESIGN §8 either (documented in docs/calendar.md): the sync worker's threads and delays.
  ConfigNode sync = c.Child("sync");
  SyncWorkerOptions sync_options;
  sync_options.workers = static_cast<size_t>(sync.Int("workers", 4, 1, 32));
  sync_options.retry_schedule = sync.IntList("retry_schedule", sync_options.retry_schedule, 1, 7 * 86400);
  if (sync_options.retry_schedule.empty() || sync_options.retry_schedule.size() > 20)
    sync.Fail("retry_schedule", "must have 1 to 20 delays");
  sync.RejectUnknown();
  // Not in DESIGN §8 either: the time and the cache of busy times for slots.
  ConfigNode busy = c.Child("busy_times");
  options.busy_timeout = std::chrono::milliseconds(busy.Int("timeout_ms", 5000, 100, 60000));
  options.busy_cache_fresh = std::chrono::seconds(busy.Int("cache_seconds", 60, 0, 3600));
  options.busy_cache_stale = std::chrono::seconds(busy.Int("stale_seconds", 3600, 0, 86400));
  busy.RejectUnknown();
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
  // Exported at zero from start-up, so dashboards show 0 rather than no data.
  for (const char* endpoint : {"token", "refresh", "revoke", "calendar_list", "free_busy", "events_get",
                               "events_insert", "events_patch", "events_delete"}) {
    for (const char* outcome : {"ok", "unauthorized", "not_found", "client_error", "server_error", "bad_body",
                                "timeout", "connect_failed", "too_large", "error"})
      google_requests.With({endpoint, outcome});
  }
  for (const char* outcome : {"ok", "not_modified", "http_error", "not_calendar", "timeout", "connect_failed", "blocked",
                              "too_large"})
    ics_fetches.With({outcome});
  auto api = std::make_unique<GoogleApi>(
      google, [&google_requests](const std::string& endpoint, const std::string& outcome) {
        google_requests.With({endpoint, outcome}).Increment();
      });
  auto service = std::make_shared<CalendarService>(ctx.db(), logger, *api, options,
                                                   [&ics_fetches](const std::string& outcome) {
                                                     ics_fetches.With({outcome}).Increment();
                                                   });
  MetricFamily& busy_failures = ctx.metrics().Counter(
      "calendar_busy_source_failures_total",
      "Busy-time sources (a Google connection, an ICS feed) that could not be read, by source and error code.",
      {"source", "code"});
  service->SetBusyFailureObserver([&busy_failures](const std::string& source, const std::string& code) {
    busy_failures.With({source, code}).Increment();
  });
  for (const char* source : {"google_calendar", "ics_feed"}) {
    for (const char* code : {"bad_gateway", "gateway_timeout", "reconnect_required", "not_configured"})
      busy_failures.With({source, code});
  }
  Metric& reconnects = ctx.metrics()
                           .Counter("calendar_reconnects_required_total",
                                    "Google connections marked invalid (Google refused the refresh token); each "
                                    "user must connect again.")
                           .With();
  service->SetReconnectObserver([&reconnects] { reconnects.Increment(); });
  ctx.AddMigrations(CalendarMigrations());
  RegisterCalendarRoutes(ctx, service);
  ctx.AddBusyTimeSource(std::make_shared<CalendarBusySource>(service, ctx.identity()));

  MetricFamily& sync_jobs = ctx.metrics().Counter(
      "calendar_sync_jobs_total", "Attempts of calendar sync jobs (a booking's Google event), by action and outcome.",
      {"action", "outcome"});
  Metric& sync_pending = ctx.metrics().Gauge("calendar_sync_jobs_pending", "Calendar sync jobs not yet done.").With();
  for (const char* action : {"create", "move", "delete"}) {
    for (const char* outcome : {"done", "retry", "failed"}) sync_jobs.With({action, outcome});
  }
  auto references = std::make_shared<ReferenceRecorder>();
  SyncWorkerHooks hooks;
  hooks.write = [service](const SyncJob& job) { return service->WriteBookingEvent(job); };
  hooks.record_reference = [references, &logger](const SyncJob& job, const std::string& calendar_id) {
    references->Record(job, calendar_id, logger);
  };
  hooks.attempt = [&sync_jobs](const std::string& action, const std::string& outcome) {
    sync_jobs.With({action, outcome}).Increment();
  };
  hooks.backlog = [&sync_pending](int64_t pending) { sync_pending.Set(static_cast<double>(pending)); };
  auto worker = std::make_shared<SyncWorker>(ctx.db(), logger, sync_options, std::move(hooks));
  // Runs inside the transaction that advances the consumer: the jobs commit with its progress, and
  // Google is never called here.
  ctx.outbox().Subscribe(kSyncConsumer, {kBookingsTopic},
                         [worker](DbConnection& tx, const std::vector<OutboxEvent>& batch) {
                           // Most hosts have no Google calendar: one query for the batch
                           // finds those that do, and only their events are planned.
                           std::set<int64_t> hosts;
                           for (const OutboxEvent& e : batch) {
                             if (std::optional<int64_t> host = BookingEventHost(e.payload)) hosts.insert(*host);
                           }
                           const std::set<int64_t> connected = SyncJobStore::WithCredential(tx, hosts);
                           bool queued = false;
                           const time::Millis now = time::Now();
                           for (const OutboxEvent& e : batch) {
                             std::optional<int64_t> host = BookingEventHost(e.payload);
                             if (!host || connected.count(*host) == 0) continue;
                             if (std::optional<SyncPlan> plan = PlanBookingSync(e.type, e.payload, now))
                               queued = SyncJobStore::Enqueue(tx, *plan) || queued;
                           }
                           if (queued) worker->Wake();
                         });
  return std::make_unique<CalendarPlugin>(ctx, std::move(api), std::move(service), std::move(references),
                                          std::move(worker));
}

}  // namespace
}  // namespace rendezvous::calendar

RENDEZVOUS_DEFINE_PLUGIN("calendar", &rendezvous::calendar::Create)
