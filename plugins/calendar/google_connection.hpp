// The Google connection of a user: the connect flow (a single-use state in
// calendar_connect_states, bound to the browser that started it; Google's consent; the code
// exchanged for the credential and the calendar list, stored together), checking the connection,
// and disconnecting it. The flow's member functions live in google_connect.cpp, checking and
// disconnecting in google_connection.cpp.
//
// Thread-safe; may throw DatabaseUnavailable. The references must outlive this object.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "busy_cache.hpp"
#include "calendar_options.hpp"
#include "google_api.hpp"
#include "google_credentials.hpp"
#include "json_fields.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::calendar {

class GoogleConnection {
 public:
  // `busy_cache` forgets the user's busy times when the connection changes.
  GoogleConnection(Database& db, Logger& logger, const GoogleApi& google, GoogleCredentials& credentials,
                   BusyCache& busy_cache, const CalendarOptions& options);

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
  // The name of a state's binding cookie.
  static std::string BindingCookieName(const std::string& state);

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

  // GET /v2/calendars/google/check: {connected, valid, reconnectRequired}. Asks Google (the
  // calendar list) when a usable credential is stored, refreshing it once if needed.
  Result<Json> Check(int64_t user_id);
  // POST /v2/calendars/google/disconnect: revokes the refresh token at Google (best effort),
  // deletes the credential, its calendar list and a Google destination. Bookings are kept.
  // Answers Cal.com's deleted credential {id, type, userId, teamId, appId, invalid} plus
  // {disconnected: true, revoked}. `credential_id` (Cal.com's body `id`), when given, must be the
  // user's Google credential (404 otherwise); without it, nothing connected answers
  // {disconnected: false, revoked: false}.
  Result<Json> Disconnect(int64_t user_id, std::optional<int64_t> credential_id = std::nullopt);

 private:
  Database& db_;
  Logger& logger_;
  const GoogleApi& google_;
  GoogleCredentials& credentials_;
  BusyCache& busy_cache_;
  const CalendarOptions options_;
};

}  // namespace rendezvous::calendar
