// The calendar plugin's logic over its tables (migration owner "calendar"): Google credentials
// (tokens AES-256-GCM encrypted), the user's Google calendar list, the destination calendar, ICS
// feeds (URLs encrypted too: private feed URLs are credentials) and the single-use connect states.
// Every change is one transaction. Google is reached through GoogleApi; an expired access token is
// refreshed once (on known expiry or on Google's 401). Thread-safe; may throw DatabaseUnavailable
// (the host answers 503).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "google_api.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/http.hpp"
#include "rendezvous/log.hpp"

namespace rendezvous::calendar {

// An error answer: HTTP status, error code, message, optional details.
struct ApiError {
  int status = 400;
  std::string code;
  std::string message;
  Json details = nullptr;
};

template <class T>
using Outcome = std::variant<T, ApiError>;

struct CalendarOptions {
  std::string base_url;
  std::string app_url;
  std::string encryption_key;               // raw 32 bytes; empty: connecting and saving feeds answer 503
  bool ics_allow_private_networks = false;  // plugins.calendar.ics_allow_private_networks
};

// Limits (documented in docs/calendar.md).
constexpr int kStateTtlSeconds = 600;
constexpr int64_t kMaxBusyRangeSeconds = 93LL * 86400;
constexpr size_t kMaxIcsUrlsPerRequest = 10;
constexpr size_t kMaxIcsFeedsPerUser = 50;
constexpr size_t kMaxIcsBytes = 2 << 20;
constexpr size_t kMaxUrlLength = 2048;
constexpr size_t kMaxEventUidLength = 1024;

class CalendarService {
 public:
  using IcsObserver = std::function<void(const std::string& outcome)>;
  // Seam for the bookings issue: the Google calendar id a booking reference of `user_id` names
  // for `event_uid` (searched before the destination and primary calendars).
  using ReferenceLookup =
      std::function<std::optional<std::string>(int64_t user_id, const std::string& event_uid)>;

  CalendarService(Database& db, Logger& logger, const GoogleApi& google, CalendarOptions options,
                  IcsObserver on_ics_fetch);

  static std::vector<Migration> Migrations();

  bool google_configured() const { return !google_.config().client_id.empty(); }
  bool encryption_configured() const { return options_.encryption_key.size() == 32; }
  void SetReferenceLookup(ReferenceLookup lookup) { reference_lookup_ = std::move(lookup); }

  // GET /v2/calendars/google/connect: the Google consent URL (a fresh state bound to the user).
  Outcome<std::string> Connect(int64_t user_id, const std::optional<std::string>& redir);

  struct SaveResult {
    std::string redirect;  // non-empty: answer with a redirect there
    Json calendars;        // else: {"calendars":[..]}
  };
  // GET /v2/calendars/google/save: consumes the state, exchanges the code, stores credential and
  // calendar list. `google_error` is Google's `error` parameter (the user denied access).
  Outcome<SaveResult> Save(const std::string& code, const std::string& state,
                           const std::string& google_error);

  Outcome<Json> ListCalendars(int64_t user_id);
  Outcome<Json> BusyTimes(int64_t user_id, const std::optional<std::string>& date_from,
                          const std::optional<std::string>& date_to,
                          const std::optional<std::string>& time_zone);
  Outcome<Json> SaveIcsFeeds(int64_t user_id, const Json& body);
  Outcome<Json> SetDestination(int64_t user_id, const Json& body);
  Outcome<Json> GetEvent(int64_t user_id, const std::string& calendar, const std::string& event_uid);

  // True when `url` is on the app or API origin (a safe `redir`).
  static bool IsAllowedRedirect(const std::string& url, const std::string& base_url,
                                const std::string& app_url);

 private:
  struct Credential {
    int64_t id = 0;
    std::string access_token;
    std::string refresh_token;
    int64_t expires_at = 0;  // unix seconds; 0 unknown
  };
  struct GoogleCalendar {
    int64_t credential_id = 0;
    std::string external_id;
    std::string name;
    bool primary = false;
    bool read_only = false;
    std::string time_zone;
  };

  Outcome<std::optional<Credential>> LoadCredential(int64_t user_id);
  std::vector<GoogleCalendar> LoadCalendars(int64_t user_id);
  // Calls `call` with the access token; refreshes once on known expiry or on Google's 401.
  Outcome<GoogleCall> WithGoogle(Credential& cred, const std::function<GoogleCall(const std::string&)>& call);
  std::optional<ApiError> RefreshCredential(Credential& cred);
  std::optional<ApiError> RequireEncryption() const;
  void CountIcsFetch(const FetchResult& result, bool parsed) const;
  Json CalendarJson(const GoogleCalendar& c, const std::optional<std::string>& destination) const;

  Database& db_;
  Logger& logger_;
  const GoogleApi& google_;
  CalendarOptions options_;
  IcsObserver on_ics_fetch_;
  ReferenceLookup reference_lookup_;
};

// The error answer for a failed Google call (502, or 504 on a timeout).
ApiError GoogleFailure(const GoogleCall& call, const std::string& what);

}  // namespace rendezvous::calendar
