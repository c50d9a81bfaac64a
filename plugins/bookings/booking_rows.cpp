#include "booking_rows.hpp"

#include <algorithm>
#include <map>

#include "schedule_rows.hpp"

namespace rendezvous::bookings {
namespace {

Millis TimeColumn(const DbRow& row, int col) {
  return time::ParseSql(row.String(col)).value_or(0);
}

}  // namespace

bool IsUid(const std::string& uid) {
  constexpr size_t kMaxUidChars = 64;
  if (uid.empty() || uid.size() > kMaxUidChars) return false;
  for (char c : uid) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

EventType EventTypeFromRow(const DbRow& row, bool with_metadata, bool with_fields) {
  EventType et;
  et.id = row.Int(1);
  et.owner_id = row.Int(2);
  EventTypeFields& f = et.fields;
  f.title = row.String(3);
  f.slug = row.String(4);
  f.length_minutes = static_cast<int>(row.Int(5));
  f.description = row.String(6);
  f.locations = Json::parse(row.String(7), nullptr, false);
  if (!f.locations.is_array()) f.locations = Json::array();
  f.requires_confirmation = row.Bool(8);
  f.minimum_booking_notice = static_cast<int>(row.Int(9));
  f.before_event_buffer = static_cast<int>(row.Int(10));
  f.after_event_buffer = static_cast<int>(row.Int(11));
  if (!row.IsNull(12)) f.slot_interval = static_cast<int>(row.Int(12));
  if (!row.IsNull(13)) f.schedule_id = row.Int(13);
  for (auto [col, limit] : {std::pair{14, &f.booking_limits.day}, std::pair{15, &f.booking_limits.week},
                            std::pair{16, &f.booking_limits.month}, std::pair{17, &f.booking_limits.year}}) {
    if (!row.IsNull(col)) *limit = static_cast<int>(row.Int(col));
  }
  f.disable_guests = row.Bool(18);
  f.lock_time_zone_toggle = row.Bool(19);
  f.forward_params_success_redirect = row.Bool(20);
  f.success_redirect_url = row.OptString(21);
  f.currency = row.String(22);
  if (with_metadata && !row.IsNull(kEventTypeColumnCount + 1)) {
    f.metadata = Json::parse(row.String(kEventTypeColumnCount + 1), nullptr, false);
    if (!f.metadata.is_object()) f.metadata = Json::object();
  }
  const int fields_col = kEventTypeColumnCount + (with_metadata ? 2 : 1);
  if (with_fields && !row.IsNull(fields_col)) {
    f.booking_fields = Json::parse(row.String(fields_col), nullptr, false);
    if (!f.booking_fields.is_array()) f.booking_fields = Json::array();
  }
  return et;
}

BookingRow BookingFromRow(const DbRow& rs) {
  BookingRow row;
  Booking& b = row.booking;
  b.id = rs.Int(1);
  b.uid = rs.String(2);
  b.event_type_id = rs.Int(3);
  b.host_id = rs.Int(4);
  b.title = rs.String(5);
  b.description = rs.String(6);
  b.status = ParseStatus(rs.String(7)).value_or(BookingStatus::kAccepted);
  b.start = TimeColumn(rs, 8);
  b.end = TimeColumn(rs, 9);
  b.duration = static_cast<int>(rs.Int(10));
  b.location = rs.OptString(11);
  b.metadata = Json::parse(rs.String(12), nullptr, false);
  if (!b.metadata.is_object()) b.metadata = Json::object();
  b.cancellation_reason = rs.OptString(13);
  b.rescheduled_from_uid = rs.OptString(14);
  b.rescheduled_to_uid = rs.OptString(15);
  b.host_absent = rs.Bool(16);
  b.created_at = TimeColumn(rs, 17);
  row.emit_completion = rs.Bool(18);
  if (!rs.IsNull(19)) {
    b.responses = Json::parse(rs.String(19), nullptr, false);
    if (!b.responses.is_object()) b.responses = Json::object();
  }
  return row;
}

// Ids come from the database, so they are inlined as numbers.
void LoadAttendees(DbConnection& conn, std::vector<BookingRow>& rows) {
  if (rows.empty()) return;
  std::map<int64_t, Booking*> by_id;
  std::string ids;
  for (BookingRow& r : rows) {
    by_id[r.booking.id] = &r.booking;
    r.booking.attendees.clear();
    ids += (ids.empty() ? "" : ",") + std::to_string(r.booking.id);
  }
  for (const DbRow& row : conn.QueryUnprepared(
           "SELECT booking_id, name, email, time_zone, absent FROM booking_attendees WHERE booking_id IN (" +
           ids + ") ORDER BY booking_id, position")) {
    auto it = by_id.find(row.Int(1));
    if (it == by_id.end()) continue;
    it->second->attendees.push_back({row.String(2), row.String(3), row.String(4), row.Bool(5)});
  }
}

// Ids come from the database, so they are inlined as numbers.
void LoadEventTypeSlugs(DbConnection& conn, std::vector<BookingRow>& rows) {
  if (rows.empty()) return;
  std::map<int64_t, std::string> slugs;
  std::string ids;
  for (const BookingRow& r : rows) {
    if (!slugs.emplace(r.booking.event_type_id, std::string()).second) continue;
    ids += (ids.empty() ? "" : ",") + std::to_string(r.booking.event_type_id);
  }
  for (const DbRow& row :
       conn.QueryUnprepared("SELECT id, slug FROM event_types WHERE id IN (" + ids + ")")) {
    slugs[row.Int(1)] = row.String(2);
  }
  for (BookingRow& r : rows) r.booking.event_type_slug = slugs[r.booking.event_type_id];
}

std::optional<EventType> LoadEventType(DbConnection& conn, int64_t owner_id, int64_t id, bool lock) {
  std::optional<DbRow> row =
      conn.QueryOne(std::string("SELECT ") + kEventTypeColumns + ", " + kEventTypeMetadataColumn + ", " +
                        kEventTypeFieldsColumn + " FROM event_types WHERE id = ? AND owner_id = ?" +
                        (lock ? " FOR UPDATE" : ""),
                    {id, owner_id});
  if (!row) return std::nullopt;
  return EventTypeFromRow(*row, true, true);
}

std::optional<BookingRow> LoadBooking(DbConnection& conn, int64_t host_id, const std::string& uid,
                                      bool lock) {
  if (!IsUid(uid)) return std::nullopt;
  std::optional<DbRow> row =
      conn.QueryOne(std::string("SELECT ") + kBookingColumns +
                        " FROM bookings WHERE uid = ? AND host_id = ?" + (lock ? " FOR UPDATE" : ""),
                    {uid, host_id});
  if (!row) return std::nullopt;
  std::vector<BookingRow> rows{BookingFromRow(*row)};
  LoadAttendees(conn, rows);
  LoadEventTypeSlugs(conn, rows);
  return std::move(rows[0]);
}

std::optional<EventType> FindEventType(DbConnection& conn, int64_t id) {
  std::optional<DbRow> row = conn.QueryOne(std::string("SELECT ") + kEventTypeColumns + ", " +
                                               kEventTypeFieldsColumn + " FROM event_types WHERE id = ?",
                                           {id});
  if (!row) return std::nullopt;
  return EventTypeFromRow(*row, false, true);
}

std::optional<int64_t> BookingHost(DbConnection& conn, const std::string& uid) {
  if (!IsUid(uid)) return std::nullopt;
  std::optional<DbRow> row = conn.QueryOne("SELECT host_id FROM bookings WHERE uid = ?", {uid});
  if (!row) return std::nullopt;
  return row->Int(1);
}

void InsertBooking(DbConnection& conn, Booking& b, bool emit_completion,
                   std::optional<Millis> recorded_longest) {
  const std::string now = time::FormatSql(b.created_at);
  b.id = conn.InsertReturning(
      "INSERT INTO bookings (uid, event_type_id, host_id, title, description, status, start_at, end_at,"
      " duration, location, metadata, rescheduled_from_uid, host_absent, emit_completion, created_at,"
      " updated_at, booking_fields_responses)"
      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)",
      {b.uid, b.event_type_id, b.host_id, b.title, b.description, StatusName(b.status),
       time::FormatSql(b.start), time::FormatSql(b.end), b.duration, b.location, b.metadata.dump(),
       b.rescheduled_from_uid, emit_completion, now, now,
       b.responses.empty() ? DbValue() : DbValue(b.responses.dump())});
  std::vector<std::vector<DbValue>> attendees;
  for (size_t i = 0; i < b.attendees.size(); ++i) {
    const Attendee& a = b.attendees[i];
    attendees.push_back({b.id, i, a.name, a.email, a.time_zone, a.absent});
  }
  conn.InsertRows("INSERT INTO booking_attendees (booking_id, position, name, email, time_zone, absent)",
                  attendees);
  // The longest booking the host has had bounds the conflict checks' reads (HostBusyBlocks). Kept
  // as the longest ever: a booking cancelled may be reopened.
  if (recorded_longest && b.end - b.start <= *recorded_longest) return;
  conn.Exec(
      "INSERT INTO booking_host_locks (host_id, changes, longest_ms) VALUES (?, 0, ?)"
      " ON DUPLICATE KEY UPDATE longest_ms = GREATEST(longest_ms, VALUES(longest_ms))",
      {b.host_id, b.end - b.start});
}

int64_t LockHost(DbConnection& conn, int64_t host_id) {
  // The new count comes back by RETURNING, else as LAST_INSERT_ID(expr).
  return conn.InsertReturning(
      "INSERT INTO booking_host_locks (host_id, changes) VALUES (?, LAST_INSERT_ID(1))"
      " ON DUPLICATE KEY UPDATE changes = LAST_INSERT_ID(changes + 1)",
      {host_id}, "changes", true);
}

namespace {

// The event types of the owner `owner` (an SQL expression of one parameter) with the owner's lock
// row: its version and its longest booking.
HostEventTypes ReadHostEventTypes(DbConnection& conn, std::string_view owner, int64_t param,
                                  int64_t event_type_id) {
  HostEventTypes out;
  for (const DbRow& row :
       conn.Query(std::string("SELECT ") + kEventTypeColumns +
                      ", l.changes, l.longest_ms, l.holds_until_ms FROM event_types LEFT JOIN "
                      "booking_host_locks l ON l.host_id = owner_id"
                      " WHERE owner_id = " +
                      std::string(owner),
                  {param})) {
    EventType et = EventTypeFromRow(row);
    const int before = et.fields.before_event_buffer;
    const int after = et.fields.after_event_buffer;
    out.buffers[et.id] = {before, after};
    out.version = row.IsNull(kEventTypeColumnCount + 1) ? 0 : row.Int(kEventTypeColumnCount + 1);
    out.recorded_longest = row.IsNull(kEventTypeColumnCount + 2) ? 0 : row.Int(kEventTypeColumnCount + 2);
    out.holds_until = row.IsNull(kEventTypeColumnCount + 3) ? 0 : row.Int(kEventTypeColumnCount + 3);
    out.reach.max_buffer = std::max({out.reach.max_buffer, before, after});
    out.reach.longest = std::max(
        {out.reach.longest, et.fields.length_minutes * time::kMillisPerMinute, out.recorded_longest});
    if (et.id == event_type_id) out.event_type = std::move(et);
  }
  return out;
}

}  // namespace

HostEventTypes LoadEventTypeWithBuffers(DbConnection& conn, int64_t id) {
  return ReadHostEventTypes(conn, "(SELECT owner_id FROM event_types WHERE id = ?)", id, id);
}

std::vector<BookedTime> HostBookedTimes(DbConnection& conn, int64_t host_id, TimeRange starts,
                                        int64_t except_id) {
  // Served by ix_bookings_host_busy alone, integers only, read without a row object each.
  std::vector<int64_t> cells;
  conn.QueryInts(
      "SELECT start_ms, end_ms, event_type_id, id FROM bookings"
      " WHERE host_id = ? AND status IN ('accepted', 'pending') AND start_ms >= ? AND start_ms < ? AND id <> "
      "?",
      {host_id, starts.start, starts.end, except_id}, cells);
  std::vector<BookedTime> out;
  out.reserve(cells.size() / 4);
  for (size_t i = 0; i + 4 <= cells.size(); i += 4)
    out.push_back({cells[i], cells[i + 1], cells[i + 2], cells[i + 3]});
  return out;
}

std::vector<BookedTime> HostHeldTimes(DbConnection& conn, int64_t host_id, TimeRange starts, Millis now,
                                      int64_t except_id) {
  std::vector<int64_t> cells;
  conn.QueryInts(
      "SELECT start_ms, end_ms, event_type_id, id FROM slot_reservations"
      " WHERE host_id = ? AND start_ms >= ? AND start_ms < ? AND until_ms > ? AND id <> ?",
      {host_id, starts.start, starts.end, now, except_id}, cells);
  std::vector<BookedTime> out;
  out.reserve(cells.size() / 4);
  for (size_t i = 0; i + 4 <= cells.size(); i += 4)
    out.push_back({cells[i], cells[i + 1], cells[i + 2], cells[i + 3]});
  return out;
}

std::vector<Millis> EventTypeBookedStarts(DbConnection& conn, int64_t event_type_id, TimeRange range,
                                          int64_t except_id) {
  std::vector<int64_t> starts;
  conn.QueryInts(
      "SELECT start_ms FROM bookings WHERE event_type_id = ? AND status IN ('accepted', 'pending')"
      " AND start_ms >= ? AND start_ms < ? AND id <> ? ORDER BY start_ms",
      {event_type_id, range.start, range.end, except_id}, starts);
  return starts;
}

HostEventTypes LoadHostEventTypes(DbConnection& conn, int64_t host_id, int64_t event_type_id) {
  // A booking belongs to one of the host's event types (they cannot be deleted while booked), so a
  // host with bookings has event types, and each row carries the host's longest booking.
  return ReadHostEventTypes(conn, "?", host_id, event_type_id);
}

std::vector<BusyBlock> HostBusyBlocks(DbConnection& conn, int64_t host_id, const HostEventTypes& host,
                                      Millis from, Millis to, int length_minutes, int64_t except_id) {
  return WithBuffers(
      HostBookedTimes(conn, host_id, ConflictStartRange(from, to, length_minutes, host.reach), except_id),
      host.buffers);
}

// A host's bookings are all of the host's own event types (an event type never changes owner), so
// the host's buffers cover them.
std::vector<BusyBlock> WithBuffers(const std::vector<BookedTime>& times, const EventTypeBuffers& buffers) {
  std::vector<BusyBlock> out;
  out.reserve(times.size());
  for (const BookedTime& t : times) {
    auto b = buffers.find(t.event_type_id);
    const auto [before, after] = b == buffers.end() ? std::pair<int, int>{0, 0} : b->second;
    out.push_back({t.start, t.end, before, after});
  }
  return out;
}

std::vector<DbValue> FieldValues(const EventTypeFields& f, std::initializer_list<DbValue> tail) {
  std::vector<DbValue> v{f.title,
                         f.slug,
                         f.length_minutes,
                         f.description,
                         f.locations.dump(),
                         f.requires_confirmation,
                         f.minimum_booking_notice,
                         f.before_event_buffer,
                         f.after_event_buffer,
                         f.slot_interval,
                         f.schedule_id,
                         f.booking_limits.day,
                         f.booking_limits.week,
                         f.booking_limits.month,
                         f.booking_limits.year,
                         f.disable_guests,
                         f.lock_time_zone_toggle,
                         f.forward_params_success_redirect,
                         f.success_redirect_url,
                         f.currency,
                         f.metadata.empty() ? DbValue() : DbValue(f.metadata.dump()),
                         f.booking_fields.empty() ? DbValue() : DbValue(f.booking_fields.dump())};
  v.insert(v.end(), tail.begin(), tail.end());
  return v;
}

}  // namespace rendezvous::bookings
