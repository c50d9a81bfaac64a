#include "calendar_service.hpp"

namespace rendezvous::calendar {

CalendarService::CalendarService(Database& db, Logger& logger, const GoogleApi& google,
                                 CalendarOptions options, CalendarMetrics& metrics)
    : db_(db),
      logger_(logger),
      google_(google),
      options_(std::move(options)),
      metrics_(metrics),
      busy_cache_(options_.busy_cache_fresh, options_.busy_cache_stale) {}

Status CalendarService::RequireEncryption() const {
  if (encryption_configured()) return Status::Ok();
  return Status(ErrorCode::kUnavailable,
                "credential encryption is not configured on this server: the operator must set the variable named "
                "by security.encryption_key_env (default RENDEZVOUS_ENCRYPTION_KEY)")
      .WithReason("not_configured");
}

Status CalendarService::RequireGoogle() const {
  if (google_configured()) return Status::Ok();
  return Status(ErrorCode::kUnavailable,
                "Google Calendar is not configured on this server (plugins.calendar.google.client_id)")
      .WithReason("not_configured");
}

}  // namespace rendezvous::calendar
