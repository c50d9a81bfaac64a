#include "calendar_migrations.hpp"

namespace rendezvous::calendar {
namespace {

constexpr const char* kMigration = R"sql(CREATE TABLE IF NOT EXISTS calendar_google_credentials (
  id BIGINT NOT NULL AUTO_INCREMENT,
  user_id BIGINT NOT NULL,
  access_token_enc TEXT NOT NULL,
  refresh_token_enc TEXT NOT NULL,
  access_expires_at BIGINT NOT NULL DEFAULT 0,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY ux_calendar_google_credentials_user (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS calendar_google_calendars (
  user_id BIGINT NOT NULL,
  external_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  credential_id BIGINT NOT NULL,
  name VARCHAR(255) NOT NULL,
  is_primary TINYINT(1) NOT NULL DEFAULT 0,
  read_only TINYINT(1) NOT NULL DEFAULT 0,
  time_zone VARCHAR(64) NOT NULL DEFAULT '',
  position INT NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, external_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS calendar_destinations (
  user_id BIGINT NOT NULL,
  integration VARCHAR(32) CHARACTER SET ascii NOT NULL,
  external_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS calendar_ics_feeds (
  id BIGINT NOT NULL AUTO_INCREMENT,
  user_id BIGINT NOT NULL,
  url_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  url_enc TEXT NOT NULL,
  name VARCHAR(255) NOT NULL DEFAULT '',
  time_zone VARCHAR(64) NOT NULL DEFAULT '',
  read_only TINYINT(1) NOT NULL DEFAULT 1,
  created_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY ux_calendar_ics_feeds_user_url (user_id, url_hash)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS calendar_connect_states (
  state_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  user_id BIGINT NOT NULL,
  redir VARCHAR(2048) NOT NULL DEFAULT '',
  created_at DATETIME(3) NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  used_at DATETIME(3) NULL,
  PRIMARY KEY (state_hash),
  KEY ix_calendar_connect_states_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci)sql";

// A credential Google refused to refresh (invalid_grant) is marked, not deleted: its routes answer
// 409 reconnect_required until the user connects again.
constexpr const char* kInvalidMarkMigration =
    "ALTER TABLE calendar_google_credentials ADD COLUMN invalid_at DATETIME(3) NULL";

// The connect flow finishes only in the browser that opened the start page: the state row holds
// the SHA-256 of the secret that page put in that browser's cookie.
constexpr const char* kBrowserBindingMigration =
    "ALTER TABLE calendar_connect_states ADD COLUMN binding_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin"
    " NOT NULL DEFAULT ''";

// Bookings in Google Calendar: which event a booking has, and the writes still to make.
constexpr const char* kSyncMigration = R"sql(CREATE TABLE IF NOT EXISTS calendar_booking_events (
  booking_uid VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  user_id BIGINT NOT NULL,
  event_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  calendar_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  created_at DATETIME(3) NOT NULL,
  PRIMARY KEY (booking_uid),
  KEY ix_calendar_booking_events_event (event_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS calendar_sync_jobs (
  id BIGINT NOT NULL AUTO_INCREMENT,
  event_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  booking_uid VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  user_id BIGINT NOT NULL,
  action VARCHAR(16) CHARACTER SET ascii NOT NULL,
  event_json MEDIUMTEXT NOT NULL,
  meet TINYINT(1) NOT NULL DEFAULT 0,
  status VARCHAR(16) CHARACTER SET ascii NOT NULL DEFAULT 'pending',
  attempts INT NOT NULL DEFAULT 0,
  next_attempt_at DATETIME(3) NOT NULL,
  last_error VARCHAR(1024) NOT NULL DEFAULT '',
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  KEY ix_calendar_sync_jobs_due (status, next_attempt_at),
  KEY ix_calendar_sync_jobs_event (event_id, status, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci)sql";

// Cal.com's destination calendar carries a numeric id: existing rows are numbered in place.
constexpr const char* kDestinationIdMigration =
    "ALTER TABLE calendar_destinations ADD COLUMN id BIGINT NOT NULL AUTO_INCREMENT,"
    " ADD UNIQUE KEY ux_calendar_destinations_id (id)";

}  // namespace

std::vector<Migration> CalendarMigrations() {
  return {
      Migration{1, "calendar credentials, calendars, destinations, ICS feeds, connect states", kMigration},
      Migration{2, "calendar_google_credentials.invalid_at", kInvalidMarkMigration},
      Migration{3, "calendar_connect_states.binding_hash", kBrowserBindingMigration},
      Migration{4, "calendar booking events and sync jobs", kSyncMigration},
      Migration{5, "calendar_destinations.id", kDestinationIdMigration}};
}

}  // namespace rendezvous::calendar
