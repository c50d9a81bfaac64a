#include "booking_migrations.hpp"

namespace rendezvous::bookings {
namespace {

constexpr const char* kEventTypesMigration = R"sql(CREATE TABLE IF NOT EXISTS event_types (
  id BIGINT NOT NULL AUTO_INCREMENT,
  owner_id BIGINT NOT NULL,
  title VARCHAR(255) NOT NULL,
  slug VARCHAR(100) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  length_minutes INT NOT NULL,
  description TEXT NOT NULL,
  locations TEXT NOT NULL,
  requires_confirmation TINYINT(1) NOT NULL DEFAULT 0,
  minimum_booking_notice INT NOT NULL DEFAULT 0,
  before_event_buffer INT NOT NULL DEFAULT 0,
  after_event_buffer INT NOT NULL DEFAULT 0,
  slot_interval INT NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_event_types_owner_slug (owner_id, slug)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS bookings (
  id BIGINT NOT NULL AUTO_INCREMENT,
  uid VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  event_type_id BIGINT NOT NULL,
  host_id BIGINT NOT NULL,
  title VARCHAR(800) NOT NULL,
  description TEXT NOT NULL,
  status VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  start_at DATETIME(3) NOT NULL,
  end_at DATETIME(3) NOT NULL,
  duration INT NOT NULL,
  location VARCHAR(2048) NULL,
  metadata TEXT NOT NULL,
  cancellation_reason TEXT NULL,
  rescheduled_from_uid VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
  rescheduled_to_uid VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
  host_absent TINYINT(1) NOT NULL DEFAULT 0,
  emit_completion TINYINT(1) NOT NULL DEFAULT 1,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_bookings_uid (uid),
  KEY ix_bookings_host_start (host_id, start_at, id),
  KEY ix_bookings_host_status_start (host_id, status, start_at, id),
  KEY ix_bookings_event_type_start (event_type_id, start_at),
  KEY ix_bookings_status_end (status, end_at),
  CONSTRAINT fk_bookings_event_type FOREIGN KEY (event_type_id) REFERENCES event_types (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS booking_attendees (
  id BIGINT NOT NULL AUTO_INCREMENT,
  booking_id BIGINT NOT NULL,
  position INT NOT NULL,
  name VARCHAR(255) NOT NULL,
  email VARCHAR(320) NOT NULL,
  time_zone VARCHAR(64) NOT NULL,
  absent TINYINT(1) NOT NULL DEFAULT 0,
  PRIMARY KEY (id),
  UNIQUE KEY uq_booking_attendees_position (booking_id, position),
  KEY ix_booking_attendees_email (email(191)),
  CONSTRAINT fk_booking_attendees_booking FOREIGN KEY (booking_id) REFERENCES bookings (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci)sql";

// The per-host lock of the booking flow, the Idempotency-Key record of public creates (the key's
// SHA-256, the body's, and the booking made; kept 24 hours), and the references other plugins
// record for a booking.
constexpr const char* kPublicFlowMigration = R"sql(CREATE TABLE IF NOT EXISTS booking_host_locks (
  host_id BIGINT NOT NULL,
  changes BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (host_id)
) ENGINE=InnoDB;
CREATE TABLE IF NOT EXISTS booking_idempotency_keys (
  event_type_id BIGINT NOT NULL,
  key_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  body_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  booking_id BIGINT NOT NULL,
  created_at DATETIME(3) NOT NULL,
  PRIMARY KEY (event_type_id, key_hash),
  KEY ix_booking_idempotency_created (created_at),
  CONSTRAINT fk_booking_idempotency_booking FOREIGN KEY (booking_id) REFERENCES bookings (id) ON DELETE CASCADE
) ENGINE=InnoDB;
CREATE TABLE IF NOT EXISTS booking_references (
  id BIGINT NOT NULL AUTO_INCREMENT,
  booking_id BIGINT NOT NULL,
  type VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  event_uid VARCHAR(1024) NOT NULL,
  calendar_id VARCHAR(1024) NULL,
  created_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  KEY ix_booking_references_booking (booking_id, id),
  CONSTRAINT fk_booking_references_booking FOREIGN KEY (booking_id) REFERENCES bookings (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci)sql";

// default_owner_id is the owner's id on the owner's default schedule and NULL on the others: the
// unique key allows one default per owner however requests race. Availability and overrides are
// stored as the API writes them. Event types do not reference schedules with a foreign key: a
// schedule named by event types cannot be deleted (the service checks), and a reader falls back
// to the default should one ever be missing.
constexpr const char* kSchedulesMigration = R"sql(CREATE TABLE IF NOT EXISTS schedules (
  id BIGINT NOT NULL AUTO_INCREMENT,
  owner_id BIGINT NOT NULL,
  name VARCHAR(255) NOT NULL,
  time_zone VARCHAR(64) NOT NULL,
  default_owner_id BIGINT NULL,
  availability MEDIUMTEXT NOT NULL,
  overrides MEDIUMTEXT NOT NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  KEY ix_schedules_owner (owner_id, id),
  UNIQUE KEY uq_schedules_default (default_owner_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
ALTER TABLE event_types ADD COLUMN IF NOT EXISTS schedule_id BIGINT NULL AFTER slot_interval;
ALTER TABLE event_types ADD KEY IF NOT EXISTS ix_event_types_schedule (schedule_id))sql";

// A booking's start and end as epoch milliseconds, kept by the server on every write (so the busy
// read compares and returns plain integers from its index, no date arithmetic per row), and the
// rule that a booking ends after it starts. Rows written before that rule (an end that overflowed
// past the year 9999) get the latest end a DATETIME holds and, while they still block time, are
// cancelled saying why. Event types gain their booking limits per period (NULL: none).
constexpr const char* kTimesMigration = R"sql(UPDATE bookings SET end_at = '9999-12-31 23:59:59.999',
  cancellation_reason = IF(status IN ('accepted', 'pending'), 'its end was not after its start', cancellation_reason),
  status = IF(status IN ('accepted', 'pending'), 'cancelled', status) WHERE end_at <= start_at;
ALTER TABLE bookings
  ADD COLUMN start_ms BIGINT AS (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', start_at) DIV 1000) PERSISTENT,
  ADD COLUMN end_ms BIGINT AS (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', end_at) DIV 1000) PERSISTENT,
  ADD CONSTRAINT ck_bookings_end_after_start CHECK (end_at > start_at),
  DROP KEY ix_bookings_host_busy,
  ADD KEY ix_bookings_host_busy (host_id, status, start_ms, end_ms, event_type_id),
  ADD KEY ix_bookings_event_type_limits (event_type_id, status, start_ms);
ALTER TABLE event_types
  ADD COLUMN limit_day INT NULL, ADD COLUMN limit_week INT NULL, ADD COLUMN limit_month INT NULL,
  ADD COLUMN limit_year INT NULL)sql";

// The longest booking each host has had: it bounds the bookings a conflict check reads
// (HostBusyBlocks), where a day was assumed before. Hosts with bookings and no lock row yet get one
// (no changes counted).
constexpr const char* kLongestMigration =
    R"sql(ALTER TABLE booking_host_locks ADD COLUMN longest_ms BIGINT NOT NULL DEFAULT 0;
INSERT INTO booking_host_locks (host_id, changes, longest_ms)
  SELECT host_id, 0, MAX(end_ms - start_ms) FROM bookings GROUP BY host_id
  ON DUPLICATE KEY UPDATE longest_ms = VALUES(longest_ms))sql";

// Cal.com's event type settings (DESIGN §10); existing event types get Cal.com's defaults. A NULL
// metadata is the empty object.
constexpr const char* kSettingsMigration = R"sql(ALTER TABLE event_types
  ADD COLUMN disable_guests TINYINT(1) NOT NULL DEFAULT 0,
  ADD COLUMN lock_time_zone_toggle TINYINT(1) NOT NULL DEFAULT 0,
  ADD COLUMN forward_params_success_redirect TINYINT(1) NOT NULL DEFAULT 1,
  ADD COLUMN success_redirect_url VARCHAR(2048) CHARACTER SET ascii COLLATE ascii_bin NULL,
  ADD COLUMN currency CHAR(3) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT 'usd',
  ADD COLUMN metadata TEXT NULL)sql";

// The bookings list's attendeeName filter (GET /v2/bookings): attendees by name, as by e-mail.
// Without it the filter reads every attendee of every host.
constexpr const char* kAttendeeNameMigration =
    "ALTER TABLE booking_attendees ADD KEY IF NOT EXISTS ix_booking_attendees_name (name(191))";

// Booking questions (DESIGN §10): an event type's custom fields (NULL: the default fields alone)
// and a booking's answers to them (NULL: none).
constexpr const char* kBookingFieldsMigration =
    R"sql(ALTER TABLE event_types ADD COLUMN booking_fields TEXT NULL;
ALTER TABLE bookings ADD COLUMN booking_fields_responses MEDIUMTEXT NULL)sql";

// Slot reservations (holds): a slot of an event type held for its holder (the uid is the proof)
// until `until_ms` (epoch ms), made from `address`. The host's lock row carries the latest end of
// the host's holds (`holds_until_ms`), so a slots list of a host without an open hold reads none.
constexpr const char* kReservationsMigration = R"sql(CREATE TABLE IF NOT EXISTS slot_reservations (
  id BIGINT NOT NULL AUTO_INCREMENT,
  uid VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  event_type_id BIGINT NOT NULL,
  host_id BIGINT NOT NULL,
  start_ms BIGINT NOT NULL,
  end_ms BIGINT NOT NULL,
  minutes INT NOT NULL,
  until_ms BIGINT NOT NULL,
  address VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_slot_reservations_uid (uid),
  KEY ix_slot_reservations_host (host_id, start_ms, until_ms),
  KEY ix_slot_reservations_address (address, until_ms),
  KEY ix_slot_reservations_until (until_ms),
  CONSTRAINT fk_slot_reservations_event_type FOREIGN KEY (event_type_id) REFERENCES event_types (id)
    ON DELETE CASCADE
) ENGINE=InnoDB;
ALTER TABLE booking_host_locks ADD COLUMN IF NOT EXISTS holds_until_ms BIGINT NOT NULL DEFAULT 0)sql";
// Every user gets a stored default schedule (DESIGN §9, §10): users without one — every user who
// stored no schedule, whose slots came from the implicit default — get a schedule of exactly that
// default (Monday–Friday 09:00–17:00 in the user's time zone, "Working hours"), stored as the
// schedule service writes it, so their slots stay as they were. Users who have a default keep it.
// The users table is the core's (identity migrations run before any plugin's); without it (the
// plugin's migrations alone, in tests) there is nobody to give one. Runs again safely: users who
// have a default are skipped, and one stored meanwhile by a running instance wins (IGNORE).
constexpr const char* kDefaultSchedulesMigration =
    R"sql(DROP PROCEDURE IF EXISTS bookings_create_default_schedules;
CREATE PROCEDURE bookings_create_default_schedules()
BEGIN
  IF EXISTS (SELECT 1 FROM information_schema.tables
             WHERE table_schema = DATABASE() AND table_name = 'users') THEN
    INSERT IGNORE INTO schedules (owner_id, name, time_zone, default_owner_id, availability, overrides,
                                  created_at, updated_at)
      SELECT u.id, 'Working hours', u.time_zone, u.id,
             '[{"days":["Monday","Tuesday","Wednesday","Thursday","Friday"],"endTime":"17:00","startTime":"09:00"}]',
             '[]', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)
      FROM users u
      WHERE NOT EXISTS (SELECT 1 FROM schedules s WHERE s.default_owner_id = u.id)
      ORDER BY u.id;
  END IF;
END;
CALL bookings_create_default_schedules();
DROP PROCEDURE IF EXISTS bookings_create_default_schedules)sql";

}  // namespace

std::vector<Migration> BookingMigrations() {
  return {
      Migration{1, "event_types, bookings, booking_attendees", kEventTypesMigration},
      Migration{2, "booking_host_locks, booking_idempotency_keys, booking_references", kPublicFlowMigration},
      Migration{3, "schedules, event_types.schedule_id", kSchedulesMigration},
      Migration{4, "bookings busy-time index",
                "ALTER TABLE bookings ADD KEY ix_bookings_host_busy (host_id, status, start_at, end_at, "
                "event_type_id)"},
      Migration{5, "bookings times in epoch milliseconds, end after start; event type booking limits",
                kTimesMigration},
      Migration{6, "booking_host_locks.longest_ms", kLongestMigration},
      Migration{7, "event_types: Cal.com's settings", kSettingsMigration},
      Migration{8, "event_types.booking_fields, bookings.booking_fields_responses", kBookingFieldsMigration},
      Migration{9, "a default schedule for every user", kDefaultSchedulesMigration},
      Migration{10, "slot_reservations, booking_host_locks.holds_until_ms", kReservationsMigration},
      Migration{11, "booking_attendees by name", kAttendeeNameMigration}};
}

}  // namespace rendezvous::bookings
