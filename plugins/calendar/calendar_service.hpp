// The calendar plugin's logic over its tables (migration owner "calendar"): Google credentials
// (tokens AES-256-GCM encrypted), the user's Google calendar list, the destination calendar, ICS
// feeds (URLs encrypted too: private feed URLs are credentials) and the single-use connect states.
// Every change is one transaction. Google is reached through GoogleApi; an expired access token is
// refreshed once (on known expiry or on Google's 401). Failures are Status values (status.hpp).
// Thread-safe; may throw DatabaseUnavailable (the host answers 503).
//
// The member functions live in one file per job: google_connect.cpp (the connect flow),
// google_credentials.cpp (loading and refreshing tokens), google_connection.cpp (checking and
// disconnecting the connection), calendar_list.cpp (calendars and the
// destination), ics_feeds.cpp (saving feeds), ics_fetcher.cpp (downloading them), busy_times.cpp
// event_lookup.cpp and event_writer.cpp (a booking's event in the host's Google Calendar).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "busy_cache.hpp"
#include "calendar_metrics.hpp"
#include "google_api.hpp"
#include "ics.hpp"
#include "ics_feed_cache.hpp"
#include "refresh_pool.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/http.hpp"
#include "rendezvous/log.hpp"
#include "rendezvous/status.hpp"
#include "sync_jobs.hpp"

namespace rendezvous::calendar {

struct CalendarOptions {
  std::string base_url;
  std::string app_url;
  std::string encryption_key;               // raw 32 bytes; empty: connecting and saving feeds answer 503
  bool ics_allow_private_networks = false;  // plugins.calendar.ics_allow_private_networks
  // plugins.calendar.busy_times: the time all sources of a user get for the slots of a booking
  // page, and the cache in front of them (busy_cache.hpp; 0 s: no cache).
  std::chrono::milliseconds busy_timeout{5000};
  std::chrono::seconds busy_cache_fresh{60};
  std::chrono::seconds busy_cache_stale{3600};
};

// Limits (documented in docs/calendar.md and, for the ceilings, docs/operations.md).

// 409 reconnect_required: the stored Google credential cannot be used any more (Google refused
// its refresh token, or it cannot be decrypted); only connecting again helps.
Status ReconnectRequired(const std::string& message);
// The API's error code of a busy-time source's failure (reconnect_required, bad_gateway,
// gateway_timeout, not_configured).
std::string BusyFailureCode(const Status& failure);
// The busy-time sources, and the error codes BusyFailureCode gives their failures.
constexpr const char* kBusySources[] = {"google_calendar", "ics_feed"};
constexpr const char* kBusyFailureCodes[] = {"bad_gateway", "gateway_timeout", "reconnect_required", "not_configured"};
// What became of an ICS download: "ok", "not_modified", "http_error", "not_calendar" (the answer
// is no calendar), "timeout" (the transfer or, waiting for the parse budget, the parse), or the
// transport's failure (OutcomeLabel).
constexpr const char* kIcsFetchOutcomes[] = {"ok",      "not_modified",   "http_error", "not_calendar",
                                             "timeout", "connect_failed", "blocked",    "too_large"};

constexpr int kStateTtlSeconds = 600;
// The time the outside calls of one API request (feeds saved, busy times asked) may take together.
constexpr std::chrono::milliseconds kRequestBudget{20000};
constexpr int64_t kMaxBusyRangeSeconds = 93LL * 86400;
constexpr size_t kMaxIcsUrlsPerRequest = 10;
constexpr size_t kMaxIcsFeedsPerUser = 50;
constexpr size_t kMaxIcsBytes = 2 << 20;
// Busy-time refreshes (ICS downloads and parses, Google free/busy queries) run on the plugin's own
// threads, never on the API's: this many, with this many refreshes waiting at most.
constexpr size_t kRefreshThreads = 8;
constexpr size_t kRefreshQueue = 1024;
// Feed text being parsed at once, process-wide (a parse takes several times its text in memory).
constexpr size_t kIcsParseBytesAtOnce = 8 << 20;
// A user's feeds count together up to this many bytes of feed text; feeds beyond it are left out
// (named failed). A feed not read yet counts as kMaxIcsBytes until it is.
constexpr size_t kMaxIcsBytesPerUser = 32 << 20;
// Parsed feeds kept (per URL, for every user naming it), by the size of their feed text.
constexpr size_t kIcsCacheBytes = 64 << 20;
// After this much large work (feed text parsed, busy-times answers written) and a second without
// any, free memory goes back to the system.
constexpr size_t kTrimAfterBytes = 4 << 20;
constexpr std::chrono::milliseconds kTrimWhenQuiet{1000};
// A slots answer (slots, create, reschedule, reopen) waits for a refresh at most this long after
// the refresh started (and never beyond plugins.calendar.busy_times.timeout_ms), and at most this
// many such requests wait at once; the others answer at once with what is known.
constexpr std::chrono::milliseconds kSlotWait{1000};
constexpr int kMaxSlotWaiters = 2;
constexpr size_t kMaxUrlLength = 2048;
constexpr size_t kMaxEventUidLength = 1024;
// Calendar and feed names are stored in VARCHAR(255) columns, cut to this many bytes.
constexpr size_t kMaxNameBytes = 255;

class CalendarService {
 public:
  // ICS downloads, busy-time sources that could not be read and credentials marked invalid are
  // counted in `metrics`, which must outlive the service.
  CalendarService(Database& db, Logger& logger, const GoogleApi& google, CalendarOptions options,
                  CalendarMetrics& metrics);

  bool google_configured() const { return !google_.config().client_id.empty(); }
  bool encryption_configured() const { return options_.encryption_key.size() == 32; }

  // GET /v2/calendars/google/connect: the URL of the start page ({app_url}, see StartConnect)
  // with a fresh state bound to the user.
  Result<std::string> Connect(int64_t user_id, const std::optional<std::string>& redir);

  // The start page (GET {app_url}/settings/calendars/google/start?state=..), for the signed-in
  // user: the state must be theirs (403 wrong_account otherwise, 400 invalid_state when unknown,
  // expired or used). Binds the state to this browser: a fresh secret whose hash the state row
  // keeps goes into the cookie `cookie_name`; /save finishes only with that cookie.
  struct StartResult {
    std::string google_url;  // Google's consent URL
    std::string cookie_name;
    std::string cookie_value;
  };
  Result<StartResult> StartConnect(int64_t session_user_id, const std::string& state);
  // The binding cookie of a state, and the Set-Cookie value that sets (value) or clears ("") it:
  // HttpOnly, SameSite=Lax, Path=/v2/calendars/google/save, 10 minutes, Secure on an https app_url.
  static std::string BindingCookieName(const std::string& state);
  std::string BindingCookieHeader(const std::string& state, const std::string& value) const;

  struct SaveResult {
    std::string redirect;  // non-empty: answer with a redirect there
    Json calendars;        // else: {"calendars":[..]}
  };
  // GET /v2/calendars/google/save: checks the browser binding (`binding_cookie`, the value of the
  // state's binding cookie; 403 connect_browser_mismatch without it, the state left unused),
  // consumes the state, exchanges the code, stores credential and calendar list. `google_error` is
  // Google's `error` parameter (the user denied access).
  Result<SaveResult> Save(const std::string& code, const std::string& state, const std::string& google_error,
                          const std::optional<std::string>& binding_cookie);

  Result<Json> ListCalendars(int64_t user_id);
  // GET /v2/calendars/busy-times: the whole answer (JSON text), data = [periods] and, when some
  // sources could not be read, failedSources = [{source, credentialId, code, message}]. When every
  // source failed, the first failure.
  Result<std::string> BusyTimes(int64_t user_id, const std::optional<std::string>& date_from,
                         const std::optional<std::string>& date_to, const std::optional<std::string>& time_zone);
  // The user's busy periods in [from, to) for the slots of their event types, within
  // busy_timeout, through the cache (busy_cache.hpp): a source that fails stands in with what it
  // said last, if that is kept, and is named in `failures` either way. `zone` places the all-day
  // events of feeds.
  CollectedBusy SlotBusy(int64_t user_id, time::Millis from, time::Millis to, const time::Zone& zone);
  // Every source of the user (Google calendars to check, ICS feeds) asked for [from, to) within
  // `budget`; each failure is logged and counted.
  CollectedBusy CollectBusy(int64_t user_id, time::Millis from, time::Millis to, const time::Zone& zone,
                            std::chrono::milliseconds budget);
  // Feed text parsed and kept (tests).
  size_t ics_cache_bytes() { return feed_cache_.kept_bytes(); }
  Result<Json> SaveIcsFeeds(int64_t user_id, const Json& body);
  Result<Json> SetDestination(int64_t user_id, const Json& body);
  Result<Json> GetEvent(int64_t user_id, const std::string& calendar, const std::string& event_uid);
  // Performs one calendar sync job against Google (insert, move or delete of the booking's event,
  // in the calendar it is in, else the destination calendar, else primary). Idempotent: the event
  // id is ours, so a job repeated after a lost answer or a crash never makes a second event.
  SyncWrite WriteBookingEvent(const SyncJob& job);

  // GET /v2/calendars/google/check: {connected, valid, reconnectRequired}. Asks Google (the
  // calendar list) when a usable credential is stored, refreshing it once if needed.
  Result<Json> CheckGoogle(int64_t user_id);
  // POST /v2/calendars/google/disconnect: revokes the refresh token at Google (best effort),
  // deletes the credential, its calendar list and a Google destination. Bookings are kept.
  // {disconnected: false} when nothing was connected.
  Result<Json> DisconnectGoogle(int64_t user_id);

 private:
  struct Credential {
    int64_t id = 0;  // 0: not stored yet (during the connect flow)
    int64_t user_id = 0;
    std::string access_token;
    std::string refresh_token;
    int64_t expires_at = 0;          // unix seconds; 0 unknown
    std::string stored_refresh_enc;  // the row's refresh_token_enc as loaded (identifies this version)
  };
  struct GoogleCalendar {
    int64_t credential_id = 0;
    std::string external_id;
    std::string name;
    bool primary = false;
    bool read_only = false;
    std::string time_zone;
  };
  // One ICS download: the transport result and, when it was a calendar, the parsed feed.
  struct IcsDownload {
    FetchResult fetch;
    std::optional<IcsCalendar> calendar;
    std::string why;             // why the body is not a calendar
    bool not_modified = false;   // 304 to a conditional request
    bool parse_timed_out = false;  // no share of the parse budget before the deadline
    size_t bytes = 0;            // the feed text's size
  };
  using Deadline = std::chrono::steady_clock::time_point;
  // How a collection of busy times waits for the refreshes it needs.
  struct Waits {
    Deadline deadline;                       // waits end by then
    Deadline expand_by;                      // feeds are expanded only until then
    std::chrono::milliseconds max_wait{0};   // and at most this long after a refresh started
    std::chrono::seconds fresh{0};           // a feed parse this recent is used without asking
    std::chrono::milliseconds refresh_budget{0};  // a refresh started now has this long
    bool shared_google = false;              // Google through a refresh (slots) rather than inline
    bool stand_ins = false;                  // a feed's last parse may stand in while it fails or refreshes
  };

  // google_credentials.cpp
  Result<std::optional<Credential>> LoadCredential(int64_t user_id);
  // Calls `call` with the access token; refreshes once on known expiry or on Google's 401.
  Result<GoogleCall> WithGoogle(Credential& cred, const std::function<GoogleCall(const std::string&)>& call);
  // Refreshes the access token; Google refusing the refresh token (invalid_grant) marks the
  // credential invalid and answers ReconnectRequired.
  Status RefreshCredential(Credential& cred);
  void MarkCredentialInvalid(const Credential& cred, const std::string& why);
  Status RequireEncryption() const;
  Status RequireGoogle() const;

  // calendar_list.cpp
  std::vector<GoogleCalendar> LoadCalendars(int64_t user_id);
  // The external id of the user's destination calendar, if one is set.
  std::optional<std::string> LoadDestination(int64_t user_id);
  Json CalendarJson(const GoogleCalendar& c, const std::optional<std::string>& destination) const;

  // event_writer.cpp
  // Where new events of the user go: the destination calendar, else the primary one.
  std::string TargetCalendar(int64_t user_id);

  // busy_times.cpp
  // The Google calendars to check, as one free/busy query.
  void CollectGoogleBusy(int64_t user_id, time::Millis from, time::Millis to, Deadline deadline, CollectedBusy& out);
  // Google through one refresh per user at a time (slots): waits as `w` says.
  void CollectSharedGoogleBusy(int64_t user_id, time::Millis from, time::Millis to, const Waits& w, CollectedBusy& out);
  void CollectIcsBusy(int64_t user_id, time::Millis from, time::Millis to, const time::Zone& zone, const Waits& w,
                      CollectedBusy& out);
  CollectedBusy Collect(int64_t user_id, time::Millis from, time::Millis to, const time::Zone& zone, const Waits& w);
  // One refresh of a feed (on the refresh pool): download, conditional when `validators` is set.
  IcsFeedCache::Download RefreshFeed(int64_t user_id, int64_t feed_id, const std::string& url,
                                     const std::optional<IcsFeedCache::Validators>& validators, Deadline deadline);
  void Failed(int64_t user_id, BusySourceError failure, CollectedBusy& out);

  // ics_fetcher.cpp
  // The time left for one download (at most the per-feed timeout; zero when the budget is spent).
  static std::chrono::milliseconds IcsTimeLeft(Deadline deadline);
  IcsDownload FetchIcs(const std::string& url, std::chrono::milliseconds timeout,
                       const IcsFeedCache::Validators* validators = nullptr);

  Database& db_;
  Logger& logger_;
  const GoogleApi& google_;
  CalendarOptions options_;
  CalendarMetrics& metrics_;
  BusyCache busy_cache_;
  ByteBudget parse_budget_{kIcsParseBytesAtOnce};
  MemoryTrimmer trimmer_{kTrimAfterBytes, kTrimWhenQuiet};
  std::atomic<int> slot_waiters_{0};
  // Google refreshes of slots: one per user at a time.
  struct GoogleFlight {
    Deadline started;
    time::Millis from = 0, to = 0;
    bool done = false;
    CollectedBusy busy;
  };
  std::mutex google_mu_;
  std::condition_variable google_cv_;
  std::map<int64_t, std::shared_ptr<GoogleFlight>> google_flights_;
  IcsFeedCache feed_cache_{refresh_pool_, options_.busy_cache_stale, kIcsCacheBytes};  // holds a reference only
  // Last: destroyed first, so that no refresh runs once the members it uses are gone.
  RefreshPool refresh_pool_{kRefreshThreads, kRefreshQueue};
};

}  // namespace rendezvous::calendar
