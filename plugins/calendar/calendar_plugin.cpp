// The calendar plugin's wiring: config (DESIGN §8 plus the documented `ics_allow_private_networks`),
// migrations, the metrics, the Google API client, the logic classes and their routes, and the
// booking events' way into Google Calendar (an outbox consumer writing sync jobs, the sync worker
// performing them, the booking references it records).

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "calendar_metrics.hpp"
#include "calendar_migrations.hpp"
#include "calendar_parts.hpp"
#include "calendar_routes.hpp"
#include "google_api.hpp"
#include "reference_recorder.hpp"
#include "rendezvous/contracts/busy_times.hpp"
#include "rendezvous/outbox.hpp"
#include "rendezvous/plugin.hpp"
#include "rendezvous/time.hpp"
#include "rendezvous/url.hpp"
#include "sync_jobs.hpp"
#include "sync_worker.hpp"

namespace rendezvous::calendar {
namespace {

constexpr const char* kSyncConsumer = "calendar";
// A booking's calendar event follows it by the sync worker's call to Google, not at once: the
// consumer that queues the sync jobs gathers a steady stream of bookings into rounds at most this
// often, a transaction each, instead of a round per booking.
constexpr std::chrono::milliseconds kSyncGather{25};
constexpr const char* kBookingsTopic = "bookings";

class CalendarPlugin final : public Plugin {
 public:
  CalendarPlugin(PluginContext& ctx, std::unique_ptr<CalendarMetrics> metrics, std::unique_ptr<GoogleApi> google,
                 std::shared_ptr<CalendarParts> parts, std::shared_ptr<ReferenceRecorder> references,
                 std::shared_ptr<SyncWorker> worker)
      : ctx_(ctx),
        metrics_(std::move(metrics)),
        google_(std::move(google)),
        parts_(std::move(parts)),
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
  // Before everything that reports to it.
  std::unique_ptr<CalendarMetrics> metrics_;
  std::unique_ptr<GoogleApi> google_;
  std::shared_ptr<CalendarParts> parts_;
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
// event types (BusyTimes::SlotBusy: cached, bounded in time, failures reported). All-day
// events of feeds are placed in the user's time zone.
class CalendarBusySource final : public BusyTimeSource {
 public:
  CalendarBusySource(std::shared_ptr<CalendarParts> parts, Identity& identity)
      : parts_(std::move(parts)), identity_(identity) {}
  BusyReport BusyTimes(int64_t user_id, time::Millis from, time::Millis to) override {
    std::optional<User> user = identity_.FindUser(user_id);
    const time::Zone zone =
        (user ? time::Zone::Find(user->time_zone) : std::nullopt).value_or(time::Zone::Utc());
    const CollectedBusy busy = parts_->busy.SlotBusy(user_id, from, to, zone);
    BusyReport out;
    out.times.reserve(busy.periods.size());
    for (const BusyPeriod& p : busy.periods) out.times.push_back({p.start, p.end});
    for (const BusySourceError& f : busy.failures) out.failures.push_back({f.source, BusyFailureCode(f.status)});
    return out;
  }

 private:
  std::shared_ptr<CalendarParts> parts_;
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
  // DESIGN §8: the parsed feeds held in memory, all users together.
  options.ics_memory_bytes = static_cast<size_t>(c.Int("ics_memory_bytes", 268435456, 0, 1L << 40));
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

  auto metrics = std::make_unique<CalendarMetrics>(ctx.metrics());
  auto api = std::make_unique<GoogleApi>(google, *metrics);
  auto parts = std::make_shared<CalendarParts>(ctx.db(), logger, *api, options, *metrics);
  ctx.AddMigrations(CalendarMigrations());
  RegisterCalendarRoutes(ctx, parts);
  ctx.Provide<BusyTimeSource>("calendar.busy_times",
                              std::make_shared<CalendarBusySource>(parts, ctx.identity()));

  auto references = std::make_shared<ReferenceRecorder>();
  SyncWorkerHooks hooks;
  hooks.write = [parts](const SyncJob& job) { return parts->writer.Write(job); };
  hooks.record_reference = [references, &logger](const SyncJob& job, const std::string& calendar_id) {
    references->Record(job, calendar_id, logger);
  };
  auto worker = std::make_shared<SyncWorker>(ctx.db(), logger, sync_options, std::move(hooks), *metrics);
  // Runs inside the transaction that advances the consumer: the jobs commit with its progress, and
  // Google is never called here. The worker is woken once they have committed (it would not see
  // them before).
  auto queued = std::make_shared<std::atomic<bool>>(false);
  ctx.outbox().Subscribe(
      kSyncConsumer, {kBookingsTopic},
      [queued](DbConnection& tx, const std::vector<OutboxEvent>& batch) {
        if (QueueBookingSyncJobs(tx, batch, time::Now())) queued->store(true);
      },
      [worker, queued] {
        if (queued->exchange(false)) worker->Wake();
      },
      OutboxPayload::kNone,  // texts are read only when a calendar is connected (QueueBookingSyncJobs)
      kSyncGather);
  return std::make_unique<CalendarPlugin>(ctx, std::move(metrics), std::move(api), std::move(parts),
                                          std::move(references), std::move(worker));
}

}  // namespace
}  // namespace rendezvous::calendar

RENDEZVOUS_DEFINE_PLUGIN("calendar", &rendezvous::calendar::Create)
