#include "booking_service.hpp"

#include <map>

#include "booking_events.hpp"
#include "booking_rows.hpp"
#include "rendezvous/crypto.hpp"
#include "schedule_rows.hpp"

namespace rendezvous::bookings {
namespace {

Status NotFoundEventType() {
  return Status::NotFound("event type not found");
}
Status NotFoundBooking() {
  return Status::NotFound("booking not found");
}
Status DuplicateSlug(const std::string& slug) {
  return Status::Conflict("you already have an event type with the slug \"" + slug + "\"");
}
// A named schedule must be the owner's; its row is share-locked so it cannot be deleted before the
// event type naming it commits.
Status CheckSchedule(DbConnection& conn, int64_t owner_id, const std::optional<int64_t>& schedule_id) {
  if (!schedule_id || LoadSchedule(conn, owner_id, *schedule_id, ScheduleLock::kShare)) return Status::Ok();
  return FieldInvalid("scheduleId", "must be the id of one of your schedules, or null for your default");
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
  return BookingMigrations();
}

Json BookingService::ListEventTypes(int64_t owner_id) {
  return db_.Run([&](DbConnection& conn) {
    Json out = Json::array();
    for (const DbRow& row : conn.Query(std::string("SELECT ") + kEventTypeColumns +
                                           " FROM event_types WHERE owner_id = ? ORDER BY id LIMIT " +
                                           std::to_string(kMaxEventTypesPerUser),
                                       {owner_id})) {
      out.push_back(EventTypeJson(EventTypeFromRow(row)));
    }
    return out;
  });
}

Result<Json> BookingService::GetEventType(int64_t owner_id, int64_t id) {
  return db_.Run([&](DbConnection& conn) -> Result<Json> {
    auto et = LoadEventType(conn, owner_id, id, false);
    if (!et) return NotFoundEventType();
    return EventTypeJson(*et);
  });
}

Result<Json> BookingService::CreateEventType(int64_t owner_id, const EventTypeFields& fields) {
  return db_.Transaction([&](DbConnection& conn) -> Result<Json> {
    std::optional<DbRow> count = conn.QueryOne("SELECT COUNT(*) FROM event_types WHERE owner_id = ?", {owner_id});
    if (count && count->Int(1) >= kMaxEventTypesPerUser) {
      return Status::Conflict("you have " + std::to_string(kMaxEventTypesPerUser) +
                              " event types, the most allowed");
    }
    if (Status e = CheckSchedule(conn, owner_id, fields.schedule_id); !e.ok()) return e;
    const std::string now = time::FormatSql(time::Now());
    std::vector<DbValue> values{owner_id};
    const std::vector<DbValue> rest = FieldValues(fields, {now, now});
    values.insert(values.end(), rest.begin(), rest.end());
    try {
      conn.Exec(
          "INSERT INTO event_types (owner_id, title, slug, length_minutes, description, locations,"
          " requires_confirmation, minimum_booking_notice, before_event_buffer, after_event_buffer, "
          "slot_interval, schedule_id, limit_day, limit_week, limit_month, limit_year,"
          " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          values);
    } catch (const DuplicateKey&) {
      return DuplicateSlug(fields.slug);
    }
    EventType et{conn.LastInsertId(), owner_id, fields};
    return EventTypeJson(et);
  });
}

Result<Json> BookingService::UpdateEventType(int64_t owner_id, int64_t id, const Json& patch) {
  return db_.Transaction([&](DbConnection& conn) -> Result<Json> {
    auto et = LoadEventType(conn, owner_id, id, true);
    if (!et) return NotFoundEventType();
    if (Status e = ApplyEventTypePatch(patch, et->fields); !e.ok()) return e;
    if (patch.contains("scheduleId")) {
      if (Status e = CheckSchedule(conn, owner_id, et->fields.schedule_id); !e.ok()) return e;
    }
    try {
      conn.Exec(
          "UPDATE event_types SET title = ?, slug = ?, length_minutes = ?, description = ?, locations = ?,"
          " requires_confirmation = ?, minimum_booking_notice = ?, before_event_buffer = ?, "
          "after_event_buffer "
          "= ?,"
          " slot_interval = ?, schedule_id = ?, limit_day = ?, limit_week = ?, limit_month = ?, limit_year = ?,"
          " updated_at = ? WHERE id = ?",
          FieldValues(et->fields, {time::FormatSql(time::Now()), id}));
    } catch (const DuplicateKey&) {
      return DuplicateSlug(et->fields.slug);
    }
    return EventTypeJson(*et);
  });
}

Result<Json> BookingService::DeleteEventType(int64_t owner_id, int64_t id) {
  return db_.Transaction([&](DbConnection& conn) -> Result<Json> {
    auto et = LoadEventType(conn, owner_id, id, true);
    if (!et) return NotFoundEventType();
    if (conn.QueryOne("SELECT 1 FROM bookings WHERE event_type_id = ? LIMIT 1", {id})) {
      return Status::Conflict("the event type has bookings; it cannot be deleted");
    }
    conn.Exec("DELETE FROM event_types WHERE id = ?", {id});
    return EventTypeJson(*et);
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
  std::vector<DbValue> params{host.id};
  for (BookingStatus s : query.statuses) params.emplace_back(StatusName(s));
  if (query.after_start) params.emplace_back(time::FormatSql(*query.after_start));
  if (query.before_end) params.emplace_back(time::FormatSql(*query.before_end));
  if (query.event_type_id) params.emplace_back(*query.event_type_id);
  return db_.Transaction([&](DbConnection& conn) {
    std::optional<DbRow> count = conn.QueryOne("SELECT COUNT(*) FROM bookings" + where, params);
    const int64_t total = count ? count->Int(1) : 0;
    std::vector<BookingRow> rows;
    if (query.skip < total) {
      std::vector<DbValue> page = params;
      page.emplace_back(query.take);
      page.emplace_back(query.skip);
      for (const DbRow& row : conn.Query(std::string("SELECT ") + kBookingColumns + " FROM bookings" + where +
                                             " ORDER BY start_at, id LIMIT ? OFFSET ?",
                                         page)) {
        rows.push_back(BookingFromRow(row));
      }
      LoadAttendees(conn, rows);
    }
    Json data = Json::array();
    for (const BookingRow& r : rows) data.push_back(BookingJson(r.booking, host));
    return Json{{"data", std::move(data)},
                {"pagination", {{"total", total}, {"skip", query.skip}, {"take", query.take}}}};
  });
}

Result<Json> BookingService::GetBooking(const User& host, const std::string& uid) {
  return db_.Run([&](DbConnection& conn) -> Result<Json> {
    auto row = LoadBooking(conn, host.id, uid, false);
    if (!row) return NotFoundBooking();
    return BookingJson(row->booking, host);
  });
}

Result<Json> BookingService::Confirm(const User& host, const std::string& uid) {
  return Change(host, uid, BookingAction::kConfirm, std::nullopt, nullptr);
}

Result<Json> BookingService::Decline(const User& host, const std::string& uid,
                                     const std::optional<std::string>& reason) {
  return Change(host, uid, BookingAction::kDecline, reason, nullptr);
}

Result<Json> BookingService::MarkAbsent(const User& host, const std::string& uid, const AbsentMarks& marks) {
  return Change(host, uid, BookingAction::kMarkAbsent, std::nullopt, &marks);
}

Result<Json> BookingService::Change(const User& host, const std::string& uid, BookingAction action,
                                    const std::optional<std::string>& reason, const AbsentMarks* marks) {
  bool published = false;
  BookedChange change;
  Result<Json> out = db_.Transaction([&](DbConnection& conn) -> Result<Json> {
    published = false;
    change = {};
    change.version = LockHost(conn, host.id);  // the host's booked times may change
    auto row = LoadBooking(conn, host.id, uid, true);
    if (!row) return NotFoundBooking();
    Booking& b = row->booking;
    const Millis now = time::Now();
    if (Status refused = CheckTransition(b.status, action, b.start <= now, b.end <= now); !refused.ok()) {
      return refused;
    }
    bool emit = true;
    if (action == BookingAction::kMarkAbsent) {
      Result<bool> marked_absent = ApplyAbsentMarks(*marks, b);
      if (!marked_absent.ok()) return marked_absent.status();
      emit = *marked_absent;
      for (const Attendee& a : b.attendees) {
        conn.Exec("UPDATE booking_attendees SET absent = ? WHERE booking_id = ? AND email = ?",
                  {a.absent, b.id, a.email});
      }
    }
    if (action == BookingAction::kDecline || action == BookingAction::kCancel) b.cancellation_reason = reason;
    b.status = StatusAfter(b.status, action);
    if (!BlocksTime(b.status)) change.removed = b.id;
    conn.Exec(
        "UPDATE bookings SET status = ?, cancellation_reason = ?, host_absent = ?, updated_at = ? WHERE id = "
        "?",
        {StatusName(b.status), b.cancellation_reason, b.host_absent, time::FormatSql(now), b.id});
    if (emit) {
      std::optional<EventType> et = FindEventType(conn, b.event_type_id);
      if (!et) return Status(ErrorCode::kInternal, "the booking's event type is missing");
      outbox_.Publish(conn, kOutboxTopic, TriggerFor(action),
                      EventEnvelope(TriggerFor(action), now, EventPayload(b, host, *et)));
      published = true;
    }
    return BookingJson(b, host);
  });
  Applied(host.id, change);
  if (published) outbox_.Notify();
  if (metrics_ && out.ok()) metrics_->Transitioned(action);
  return out;
}

namespace {
constexpr Millis kLatestImportStart = 253370764800000;  // 9999-01-01T00:00:00Z
}  // namespace

Status BookingService::CheckHorizon(Millis start) const {
  if (start <= time::Now() + static_cast<Millis>(max_days_ahead_) * time::kMillisPerDay) return Status::Ok();
  return Status::Invalid("start", "start is more than " + std::to_string(max_days_ahead_) +
                                      " days ahead; bookings can be made at most that far in advance");
}

void BookingService::Applied(int64_t host_id, const BookedChange& change) {
  if (change.version != 0) booked_times_.Apply(host_id, change.version, change.added, change.removed);
}

Result<Json> BookingService::Import(const ImportRequest& r) {
  std::optional<User> user = identity_.FindUser(r.user_id);
  if (!user) return Status::NotFound("user " + std::to_string(r.user_id) + " not found");
  // Imports bring over what another system holds, far-future bookings included: max_days_ahead is
  // the public API's rule. Only a start whose booking could end past the year 9999 is refused.
  if (r.start >= kLatestImportStart) {
    return Status::Invalid("start", "--start must be before 9999-01-01T00:00:00Z");
  }
  BookedChange change;
  Result<Json> out = db_.Transaction([&](DbConnection& conn) -> Result<Json> {
    change = {};
    change.version = LockHost(conn, r.user_id);
    auto et = LoadEventType(conn, r.user_id, r.event_type_id, true);
    if (!et) {
      return Status::NotFound("event type " + std::to_string(r.event_type_id) +
                              " not found among the event types of user " + std::to_string(r.user_id));
    }
    const Millis now = time::Now();
    Booking b;
    b.uid = crypto::RandomToken(16);
    b.event_type_id = et->id;
    b.host_id = r.user_id;
    b.title = BookingTitle(et->fields.title, user->name, r.attendee_name);
    b.status = r.status;
    b.start = r.start;
    b.duration = et->fields.length_minutes;
    b.end = r.start + static_cast<Millis>(b.duration) * time::kMillisPerMinute;
    b.attendees.push_back({r.attendee_name, r.attendee_email, "UTC", false});
    b.location = BookingLocation(et->fields.locations);
    b.created_at = now;
    const bool emit_completion = !(b.status == BookingStatus::kAccepted && b.end <= now);
    InsertBooking(conn, b, emit_completion);
    if (BlocksTime(b.status)) change.added = BookedTime{b.start, b.end, b.event_type_id, b.id};
    return BookingJson(b, *user);
  });
  Applied(r.user_id, change);
  return out;
}

size_t BookingService::CompleteEnded(Millis now, size_t batch) {
  const std::string cutoff = time::FormatSql(now);
  // Hosts are looked up before the transaction so it never waits for a second connection.
  std::map<int64_t, User> hosts;
  db_.Run([&](DbConnection& conn) {
    for (const DbRow& row : conn.Query(
             "SELECT DISTINCT host_id FROM (SELECT host_id FROM bookings WHERE status = 'accepted' AND end_at <= ?"
             " ORDER BY end_at, id LIMIT ?) AS due",
             {cutoff, batch})) {
      hosts[row.Int(1)] = User{};
    }
  });
  if (hosts.empty()) return 0;
  for (auto& [id, user] : hosts) user = HostOrPlaceholder(identity_, id);

  size_t published = 0;
  const size_t completed = db_.Transaction([&](DbConnection& conn) {
    published = 0;
    std::vector<BookingRow> rows;
    for (const DbRow& row : conn.Query(std::string("SELECT ") + kBookingColumns +
                                           " FROM bookings WHERE status = 'accepted' AND end_at <= ? ORDER BY "
                                           "end_at, id LIMIT ? FOR UPDATE SKIP LOCKED",
                                       {cutoff, batch})) {
      rows.push_back(BookingFromRow(row));
    }
    LoadAttendees(conn, rows);
    std::map<int64_t, std::optional<EventType>> event_types;
    for (const BookingRow& row : rows) {
      if (!event_types.count(row.booking.event_type_id)) {
        event_types[row.booking.event_type_id] = FindEventType(conn, row.booking.event_type_id);
      }
    }
    const std::string updated_at = time::FormatSql(time::Now());
    size_t n = 0;
    for (BookingRow& row : rows) {
      Booking& b = row.booking;
      if (!CheckTransition(b.status, BookingAction::kComplete, true, b.end <= now).ok()) continue;
      auto host = hosts.find(b.host_id);
      const std::optional<EventType>& et = event_types[b.event_type_id];
      // A host not looked up above (a row that became due in between) waits for the next pass.
      if (row.emit_completion && (host == hosts.end() || !et)) continue;
      b.status = StatusAfter(b.status, BookingAction::kComplete);
      conn.Exec("UPDATE bookings SET status = ?, updated_at = ? WHERE id = ?",
                {StatusName(b.status), updated_at, b.id});
      ++n;
      if (!row.emit_completion) continue;
      const char* trigger = TriggerFor(BookingAction::kComplete);
      outbox_.Publish(conn, kOutboxTopic, trigger, EventEnvelope(trigger, time::Now(), EventPayload(b, host->second, *et)));
      ++published;
    }
    return n;
  });
  if (published > 0) outbox_.Notify();
  if (metrics_ && completed > 0) metrics_->Transitioned(BookingAction::kComplete, completed);
  return completed;
}

}  // namespace rendezvous::bookings
