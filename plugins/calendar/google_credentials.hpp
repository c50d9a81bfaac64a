// A user's Google credential (table calendar_google_credentials, tokens AES-256-GCM encrypted):
// loading it, calling Google with its access token — refreshed once, on known expiry or on
// Google's 401 — and marking it invalid when Google refuses its refresh token (counted in
// calendar_reconnects_required_total; its user must connect again).
//
// Thread-safe; may throw DatabaseUnavailable. `google` and `metrics` must outlive this object.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "calendar_metrics.hpp"
#include "google_api.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::calendar {

struct GoogleCredential {
  int64_t id = 0;  // 0: not stored yet (during the connect flow)
  int64_t user_id = 0;
  std::string access_token;
  std::string refresh_token;
  int64_t expires_at = 0;          // unix seconds; 0 unknown
  std::string stored_refresh_enc;  // the row's refresh_token_enc as loaded (identifies this version)
};

class GoogleCredentials {
 public:
  GoogleCredentials(Database& db, Logger& logger, const GoogleApi& google, std::string encryption_key,
                    CalendarMetrics& metrics);

  bool google_configured() const { return !google_.config().client_id.empty(); }
  // 503 not_configured while plugins.calendar.google.client_id is empty.
  Status RequireGoogle() const;

  // The user's credential, none when the user has not connected Google; 409 reconnect_required
  // when it was marked invalid or cannot be decrypted.
  Result<std::optional<GoogleCredential>> Load(int64_t user_id);
  // Calls `call` with the access token; refreshes once on known expiry or on Google's 401.
  Result<GoogleCall> WithGoogle(GoogleCredential& cred,
                                const std::function<GoogleCall(const std::string&)>& call);
  // Refreshes the access token (and stores it, unless `cred` is not stored yet); Google refusing
  // the refresh token (invalid_grant) marks the credential invalid and answers ReconnectRequired.
  Status Refresh(GoogleCredential& cred);
  // Marks the stored credential `cred` invalid, unless a newer connect replaced it meanwhile.
  void MarkInvalid(const GoogleCredential& cred, const std::string& why);

 private:
  Database& db_;
  Logger& logger_;
  const GoogleApi& google_;
  const std::string encryption_key_;
  CalendarMetrics& metrics_;
};

}  // namespace rendezvous::calendar
