#include "booking_service.hpp"

#include <cppconn/connection.h>
#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>

#include <map>
#include <memory>
#include <set>

#include "rendezvous/crypto.hpp"

namespace rendezvous::bookings {
namespace {

constexpr int kDuplicateKey = 1062;
constexpr size_t kMaxUidChars = 64;

constexpr const char* kMigration = R"sql(CREATE TABLE IF NOT EXISTS event_types (
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

constexpr const char* kEventTypeColumns =
    "id, owner_id, title, slug, length_minutes, description, locations, requires_confirmation, "
    "minimum_booking_notice, before_event_buffer, after_event_buffer, slot_interval";

constexpr const char* kBookingColumns =
    "id, uid, event_type_id, host_id, title, description, status, start_at, end_at, duration, location, "
    "metadata, cancellation_reason, rescheduled_from_uid, rescheduled_to_uid, host_absent, created_at, "
    "emit_completion";

EventType EventTypeFromRow(sql::ResultSet& rs) {
  EventType et;
  et.id = rs.getInt64(1);
  et.owner_id = rs.getInt64(2);
  EventTypeFields& f = et.fields;
  f.title = rs.getString(3);
  f.slug = rs.getString(4);
  f.length_minutes = rs.getInt(5);
  f.description = rs.getString(6);
  f.locations = Json::parse(std::string(rs.getString(7)), nullptr, false);
  if (!f.locations.is_array()) f.locations = Json::array();
  f.requires_confirmation = rs.getBoolean(8);
  f.minimum_booking_notice = rs.getInt(9);
  f.before_event_buffer = rs.getInt(10);
  f.after_event_buffer = rs.getInt(11);
  if (!rs.isNull(12)) f.slot_interval = rs.getInt(12);
  return et;
}

std::optional<std::string> OptionalString(sql::ResultSet& rs, int col) {
  if (rs.isNull(col)) return std::nullopt;
  return std::string(rs.getString(col));
}

Millis TimeColumn(sql::ResultSet& rs, int col) {
  return ParseSqlTime(std::string(rs.getString(col))).value_or(0);
}

struct BookingRow {
  Booking booking;
  bool emit_completion = true;
};

BookingRow BookingFromRow(sql::ResultSet& rs) {
  BookingRow row;
  Booking& b = row.booking;
  b.id = rs.getInt64(1);
  b.uid = rs.getString(2);
  b.event_type_id = rs.getInt64(3);
  b.host_id = rs.getInt64(4);
  b.title = rs.getString(5);
  b.description = rs.getString(6);
  b.status = ParseStatus(std::string(rs.getString(7))).value_or(BookingStatus::kAccepted);
  b.start = TimeColumn(rs, 8);
  b.end = TimeColumn(rs, 9);
  b.duration = rs.getInt(10);
  b.location = OptionalString(rs, 11);
  b.metadata = Json::parse(std::string(rs.getString(12)), nullptr, false);
  if (!b.metadata.is_object()) b.metadata = Json::object();
  b.cancellation_reason = OptionalString(rs, 13);
  b.rescheduled_from_uid = OptionalString(rs, 14);
  b.rescheduled_to_uid = OptionalString(rs, 15);
  b.host_absent = rs.getBoolean(16);
  b.created_at = TimeColumn(rs, 17);
  row.emit_completion = rs.getBoolean(18);
  return row;
}

// Fills the attendees of `rows` (ids come from the database, so they are inlined as numbers).
void LoadAttendees(DbConnection& conn, std::vector<BookingRow>& rows) {
  if (rows.empty()) return;
  std::map<int64_t, Booking*> by_id;
  std::string ids;
  for (BookingRow& r : rows) {
    by_id[r.booking.id] = &r.booking;
    r.booking.attendees.clear();
    ids += (ids.empty() ? "" : ",") + std::to_string(r.booking.id);
  }
  std::unique_ptr<sql::Statement> st(conn.Raw().createStatement());
  std::unique_ptr<sql::ResultSet> rs(st->executeQuery(
      "SELECT booking_id, name, email, time_zone, absent FROM booking_attendees WHERE booking_id IN (" + ids +
      ") ORDER BY booking_id, position"));
  while (rs->next()) {
    auto it = by_id.find(rs->getInt64(1));
    if (it == by_id.end()) continue;
    it->second->attendees.push_back({std::string(rs->getString(2)), std::string(rs->getString(3)),
                                     std::string(rs->getString(4)), rs->getBoolean(5)});
  }
}

std::optional<EventType> LoadEventType(DbConnection& conn, int64_t owner_id, int64_t id, bool lock) {
  auto& q = conn.Prepare(std::string("SELECT ") + kEventTypeColumns +
                         " FROM event_types WHERE id = ? AND owner_id = ?" + (lock ? " FOR UPDATE" : ""));
  q.setInt64(1, id);
  q.setInt64(2, owner_id);
  std::unique_ptr<sql::ResultSet> rs(q.executeQuery());
  if (!rs->next()) return std::nullopt;
  return EventTypeFromRow(*rs);
}

bool IsUid(const std::string& uid) {
  if (uid.empty() || uid.size() > kMaxUidChars) return false;
  for (char c : uid) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

std::optional<BookingRow> LoadBooking(DbConnection& conn, int64_t host_id, const std::string& uid,
                                      bool lock) {
  if (!IsUid(uid)) return std::nullopt;
  auto& q = conn.Prepare(std::string("SELECT ") + kBookingColumns +
                         " FROM bookings WHERE uid = ? AND host_id = ?" + (lock ? " FOR UPDATE" : ""));
  q.setString(1, uid);
  q.setInt64(2, host_id);
  std::unique_ptr<sql::ResultSet> rs(q.executeQuery());
  if (!rs->next()) return std::nullopt;
  std::vector<BookingRow> rows{BookingFromRow(*rs)};
  LoadAttendees(conn, rows);
  return std::move(rows[0]);
}

void BindFields(sql::PreparedStatement& q, int first, const EventTypeFields& f) {
  q.setString(first, f.title);
  q.setString(first + 1, f.slug);
  q.setInt(first + 2, f.length_minutes);
  q.setString(first + 3, f.description);
  q.setString(first + 4, f.locations.dump());
  q.setBoolean(first + 5, f.requires_confirmation);
  q.setInt(first + 6, f.minimum_booking_notice);
  q.setInt(first + 7, f.before_event_buffer);
  q.setInt(first + 8, f.after_event_buffer);
  if (f.slot_interval) {
    q.setInt(first + 9, *f.slot_interval);
  } else {
    q.setNull(first + 9, 0);
  }
}

void SetOptional(sql::PreparedStatement& q, int index, const std::optional<std::string>& v) {
  if (v) {
    q.setString(index, *v);
  } else {
    q.setNull(index, 0);
  }
}

Outcome NotFoundEventType() {
  return Outcome::Fail(ErrorCode::kNotFound, "event type not found");
}
Outcome NotFoundBooking() {
  return Outcome::Fail(ErrorCode::kNotFound, "booking not found");
}
Outcome DuplicateSlug(const std::string& slug) {
  return Outcome::Fail(ErrorCode::kConflict, "you already have an event type with the slug \"" + slug + "\"");
}

User HostOrPlaceholder(Identity& identity, int64_t id) {
  if (auto u = identity.FindUser(id)) return *u;
  User placeholder;
  placeholder.id = id;
  return placeholder;
}

}  // namespace

BookingService::BookingService(Database& db, Outbox& outbox, Identity& identity, Logger& logger)
    : db_(db), outbox_(outbox), identity_(identity), logger_(logger) {}

std::vector<Migration> BookingService::Migrations() {
  return {Migration{1, "event_types, bookings, booking_attendees", kMigration}};
}

Json BookingService::ListEventTypes(int64_t owner_id) {
  return db_.Run([&](DbConnection& conn) {
    auto& q = conn.Prepare(std::string("SELECT ") + kEventTypeColumns +
                           " FROM event_types WHERE owner_id = ? ORDER BY id LIMIT " +
                           std::to_string(kMaxEventTypesPerUser));
    q.setInt64(1, owner_id);
    std::unique_ptr<sql::ResultSet> rs(q.executeQuery());
    Json out = Json::array();
    while (rs->next()) out.push_back(EventTypeJson(EventTypeFromRow(*rs)));
    return out;
  });
}

Outcome BookingService::GetEventType(int64_t owner_id, int64_t id) {
  return db_.Run([&](DbConnection& conn) {
    auto et = LoadEventType(conn, owner_id, id, false);
    return et ? Outcome::Ok(EventTypeJson(*et)) : NotFoundEventType();
  });
}

Outcome BookingService::CreateEventType(int64_t owner_id, const EventTypeFields& fields) {
  return db_.Transaction([&](DbConnection& conn) {
    auto& count = conn.Prepare("SELECT COUNT(*) FROM event_types WHERE owner_id = ?");
    count.setInt64(1, owner_id);
    std::unique_ptr<sql::ResultSet> rs(count.executeQuery());
    if (rs->next() && rs->getInt64(1) >= kMaxEventTypesPerUser) {
      return Outcome::Fail(ErrorCode::kConflict, "you have " + std::to_string(kMaxEventTypesPerUser) +
                                                     " event types, the most allowed");
    }
    const std::string now = FormatSqlTime(NowMillis());
    auto& q = conn.Prepare(
        "INSERT INTO event_types (owner_id, title, slug, length_minutes, description, locations,"
        " requires_confirmation, minimum_booking_notice, before_event_buffer, after_event_buffer, "
        "slot_interval,"
        " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    q.setInt64(1, owner_id);
    BindFields(q, 2, fields);
    q.setString(12, now);
    q.setString(13, now);
    try {
      q.executeUpdate();
    } catch (const sql::SQLException& e) {
      if (e.getErrorCode() == kDuplicateKey) return DuplicateSlug(fields.slug);
      throw;
    }
    EventType et{conn.LastInsertId(), owner_id, fields};
    return Outcome::Ok(EventTypeJson(et));
  });
}

Outcome BookingService::UpdateEventType(int64_t owner_id, int64_t id, const Json& patch) {
  return db_.Transaction([&](DbConnection& conn) {
    auto et = LoadEventType(conn, owner_id, id, true);
    if (!et) return NotFoundEventType();
    if (auto e = ApplyEventTypePatch(patch, et->fields)) return Outcome::Invalid(*e);
    auto& q = conn.Prepare(
        "UPDATE event_types SET title = ?, slug = ?, length_minutes = ?, description = ?, locations = ?,"
        " requires_confirmation = ?, minimum_booking_notice = ?, before_event_buffer = ?, after_event_buffer "
        "= ?,"
        " slot_interval = ?, updated_at = ? WHERE id = ?");
    BindFields(q, 1, et->fields);
    q.setString(11, FormatSqlTime(NowMillis()));
    q.setInt64(12, id);
    try {
      q.executeUpdate();
    } catch (const sql::SQLException& e) {
      if (e.getErrorCode() == kDuplicateKey) return DuplicateSlug(et->fields.slug);
      throw;
    }
    return Outcome::Ok(EventTypeJson(*et));
  });
}

Outcome BookingService::DeleteEventType(int64_t owner_id, int64_t id) {
  return db_.Transaction([&](DbConnection& conn) {
    auto et = LoadEventType(conn, owner_id, id, true);
    if (!et) return NotFoundEventType();
    auto& used = conn.Prepare("SELECT 1 FROM bookings WHERE event_type_id = ? LIMIT 1");
    used.setInt64(1, id);
    std::unique_ptr<sql::ResultSet> rs(used.executeQuery());
    if (rs->next()) {
      return Outcome::Fail(ErrorCode::kConflict, "the event type has bookings; it cannot be deleted");
    }
    auto& del = conn.Prepare("DELETE FROM event_types WHERE id = ?");
    del.setInt64(1, id);
    del.executeUpdate();
    return Outcome::Ok(EventTypeJson(*et));
  });
}

Json BookingService::ListBookings(const User& host, const ListQuery& query) {
  std::string where = " WHERE host_id = ?";
  if (!query.statuses.empty()) {
    where += " AND status IN (";
    for (size_t i = 0; i < query.statuses.size(); ++i) where += i ? ", ?" : "?";
    where += ")";
  }
  if (query.after_start) where += " AND start_at >= ?";
  if (query.before_end) where += " AND end_at <= ?";
  if (query.event_type_id) where += " AND event_type_id = ?";
  auto bind = [&](sql::PreparedStatement& q) {
    int i = 1;
    q.setInt64(i++, host.id);
    for (BookingStatus s : query.statuses) q.setString(i++, std::string(StatusName(s)));
    if (query.after_start) q.setString(i++, FormatSqlTime(*query.after_start));
    if (query.before_end) q.setString(i++, FormatSqlTime(*query.before_end));
    if (query.event_type_id) q.setInt64(i++, *query.event_type_id);
    return i;
  };
  return db_.Transaction([&](DbConnection& conn) {
    auto& count = conn.Prepare("SELECT COUNT(*) FROM bookings" + where);
    bind(count);
    std::unique_ptr<sql::ResultSet> crs(count.executeQuery());
    const int64_t total = crs->next() ? crs->getInt64(1) : 0;
    std::vector<BookingRow> rows;
    if (query.skip < total) {
      auto& q = conn.Prepare(std::string("SELECT ") + kBookingColumns + " FROM bookings" + where +
                             " ORDER BY start_at, id LIMIT ? OFFSET ?");
      int i = bind(q);
      q.setInt(i++, query.take);
      q.setInt64(i, query.skip);
      std::unique_ptr<sql::ResultSet> rs(q.executeQuery());
      while (rs->next()) rows.push_back(BookingFromRow(*rs));
      LoadAttendees(conn, rows);
    }
    Json data = Json::array();
    for (const BookingRow& r : rows) data.push_back(BookingJson(r.booking, host));
    return Json{{"data", std::move(data)},
                {"pagination", {{"total", total}, {"skip", query.skip}, {"take", query.take}}}};
  });
}

Outcome BookingService::GetBooking(const User& host, const std::string& uid) {
  return db_.Run([&](DbConnection& conn) {
    auto row = LoadBooking(conn, host.id, uid, false);
    return row ? Outcome::Ok(BookingJson(row->booking, host)) : NotFoundBooking();
  });
}

Outcome BookingService::Confirm(const User& host, const std::string& uid) {
  return Change(host, uid, BookingAction::kConfirm, std::nullopt, nullptr);
}

Outcome BookingService::Decline(const User& host, const std::string& uid,
                                const std::optional<std::string>& reason) {
  return Change(host, uid, BookingAction::kDecline, reason, nullptr);
}

Outcome BookingService::MarkAbsent(const User& host, const std::string& uid, const AbsentMarks& marks) {
  return Change(host, uid, BookingAction::kMarkAbsent, std::nullopt, &marks);
}

Outcome BookingService::Change(const User& host, const std::string& uid, BookingAction action,
                               const std::optional<std::string>& reason, const AbsentMarks* marks) {
  bool published = false;
  Outcome out = db_.Transaction([&](DbConnection& conn) {
    published = false;
    auto row = LoadBooking(conn, host.id, uid, true);
    if (!row) return NotFoundBooking();
    Booking& b = row->booking;
    const Millis now = NowMillis();
    if (auto why = CheckTransition(b.status, action, b.start <= now, b.end <= now)) {
      return Outcome::Fail(ErrorCode::kConflict, *why);
    }
    bool emit = true;
    if (action == BookingAction::kMarkAbsent) {
      if (auto e = ApplyAbsentMarks(*marks, b, emit)) return Outcome::Invalid(*e);
      for (const Attendee& a : b.attendees) {
        auto& q = conn.Prepare("UPDATE booking_attendees SET absent = ? WHERE booking_id = ? AND email = ?");
        q.setBoolean(1, a.absent);
        q.setInt64(2, b.id);
        q.setString(3, a.email);
        q.executeUpdate();
      }
    }
    if (action == BookingAction::kDecline) b.cancellation_reason = reason;
    b.status = StatusAfter(b.status, action);
    auto& q = conn.Prepare(
        "UPDATE bookings SET status = ?, cancellation_reason = ?, host_absent = ?, updated_at = ? WHERE id = "
        "?");
    q.setString(1, std::string(StatusName(b.status)));
    SetOptional(q, 2, b.cancellation_reason);
    q.setBoolean(3, b.host_absent);
    q.setString(4, FormatSqlTime(now));
    q.setInt64(5, b.id);
    q.executeUpdate();
    Json json = BookingJson(b, host);
    if (emit) {
      outbox_.Publish(conn, kOutboxTopic, TriggerFor(action), EventEnvelope(TriggerFor(action), now, json));
      published = true;
    }
    return Outcome::Ok(std::move(json));
  });
  if (published) outbox_.Notify();
  return out;
}

Outcome BookingService::Import(const ImportRequest& r) {
  std::optional<User> user = identity_.FindUser(r.user_id);
  if (!user) return Outcome::Fail(ErrorCode::kNotFound, "user " + std::to_string(r.user_id) + " not found");
  return db_.Transaction([&](DbConnection& conn) {
    auto et = LoadEventType(conn, r.user_id, r.event_type_id, true);
    if (!et) {
      return Outcome::Fail(ErrorCode::kNotFound, "event type " + std::to_string(r.event_type_id) +
                                                     " not found among the event types of user " +
                                                     std::to_string(r.user_id));
    }
    const Millis now = NowMillis();
    Booking b;
    b.uid = crypto::RandomToken(16);
    b.event_type_id = et->id;
    b.host_id = r.user_id;
    b.title = BookingTitle(et->fields.title, user->name, r.attendee_name);
    b.status = r.status;
    b.start = r.start;
    b.duration = et->fields.length_minutes;
    b.end = r.start + static_cast<Millis>(b.duration) * 60000;
    b.attendees.push_back({r.attendee_name, r.attendee_email, "UTC", false});
    b.location = BookingLocation(et->fields.locations);
    b.created_at = now;
    const bool emit_completion = !(b.status == BookingStatus::kAccepted && b.end <= now);
    auto& q = conn.Prepare(
        "INSERT INTO bookings (uid, event_type_id, host_id, title, description, status, start_at, end_at, "
        "duration,"
        " location, metadata, host_absent, emit_completion, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)");
    q.setString(1, b.uid);
    q.setInt64(2, b.event_type_id);
    q.setInt64(3, b.host_id);
    q.setString(4, b.title);
    q.setString(5, b.description);
    q.setString(6, std::string(StatusName(b.status)));
    q.setString(7, FormatSqlTime(b.start));
    q.setString(8, FormatSqlTime(b.end));
    q.setInt(9, b.duration);
    SetOptional(q, 10, b.location);
    q.setString(11, b.metadata.dump());
    q.setBoolean(12, emit_completion);
    q.setString(13, FormatSqlTime(now));
    q.setString(14, FormatSqlTime(now));
    q.executeUpdate();
    b.id = conn.LastInsertId();
    for (size_t i = 0; i < b.attendees.size(); ++i) {
      const Attendee& a = b.attendees[i];
      auto& qa = conn.Prepare(
          "INSERT INTO booking_attendees (booking_id, position, name, email, time_zone, absent) VALUES (?, "
          "?, ?, ?, ?, ?)");
      qa.setInt64(1, b.id);
      qa.setInt(2, static_cast<int>(i));
      qa.setString(3, a.name);
      qa.setString(4, a.email);
      qa.setString(5, a.time_zone);
      qa.setBoolean(6, a.absent);
      qa.executeUpdate();
    }
    return Outcome::Ok(BookingJson(b, *user));
  });
}

size_t BookingService::CompleteEnded(Millis now, size_t batch) {
  const std::string cutoff = FormatSqlTime(now);
  // Hosts are looked up before the transaction so it never waits for a second connection.
  std::map<int64_t, User> hosts;
  db_.Run([&](DbConnection& conn) {
    auto& q = conn.Prepare(
        "SELECT DISTINCT host_id FROM (SELECT host_id FROM bookings WHERE status = 'accepted' AND end_at <= ?"
        " ORDER BY end_at, id LIMIT ?) AS due");
    q.setString(1, cutoff);
    q.setInt64(2, static_cast<int64_t>(batch));
    std::unique_ptr<sql::ResultSet> rs(q.executeQuery());
    while (rs->next()) hosts[rs->getInt64(1)] = User{};
  });
  if (hosts.empty()) return 0;
  for (auto& [id, user] : hosts) user = HostOrPlaceholder(identity_, id);

  size_t published = 0;
  const size_t completed = db_.Transaction([&](DbConnection& conn) {
    published = 0;
    auto& q =
        conn.Prepare(std::string("SELECT ") + kBookingColumns +
                     " FROM bookings WHERE status = 'accepted' AND end_at <= ? ORDER BY end_at, id LIMIT ?"
                     " FOR UPDATE SKIP LOCKED");
    q.setString(1, cutoff);
    q.setInt64(2, static_cast<int64_t>(batch));
    std::vector<BookingRow> rows;
    {
      std::unique_ptr<sql::ResultSet> rs(q.executeQuery());
      while (rs->next()) rows.push_back(BookingFromRow(*rs));
    }
    LoadAttendees(conn, rows);
    const std::string updated_at = FormatSqlTime(NowMillis());
    size_t n = 0;
    for (BookingRow& row : rows) {
      Booking& b = row.booking;
      if (CheckTransition(b.status, BookingAction::kComplete, true, b.end <= now)) continue;
      auto host = hosts.find(b.host_id);
      // A host not looked up above (a row that became due in between) waits for the next pass.
      if (row.emit_completion && host == hosts.end()) continue;
      b.status = StatusAfter(b.status, BookingAction::kComplete);
      auto& u = conn.Prepare("UPDATE bookings SET status = ?, updated_at = ? WHERE id = ?");
      u.setString(1, std::string(StatusName(b.status)));
      u.setString(2, updated_at);
      u.setInt64(3, b.id);
      u.executeUpdate();
      ++n;
      if (!row.emit_completion) continue;
      const char* trigger = TriggerFor(BookingAction::kComplete);
      outbox_.Publish(conn, kOutboxTopic, trigger,
                      EventEnvelope(trigger, NowMillis(), BookingJson(b, host->second)));
      ++published;
    }
    return n;
  });
  if (published > 0) outbox_.Notify();
  return completed;
}

}  // namespace rendezvous::bookings
