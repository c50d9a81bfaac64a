// The public booking flow of BookingFlow: slots, create (with idempotency keys), cancel,
// reschedule; the owner's reopen. Every write is a HostWrites change: one transaction that first
// takes the host's lock (LockHost), so two bookings of a host never overlap however many requests
// race; the booking's event is written in the same transaction. On a cluster with several writers,
// each instance sends one racer to the lock row, which is replicated to every node at once
// (ExecLock).
#include "booking_flow.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include "booking_events.hpp"
#include "booking_fields.hpp"
#include "booking_limits.hpp"
#include "booking_rows.hpp"
#include "rendezvous/crypto.hpp"
#include "reservation_requests.hpp"
#include "schedule_rows.hpp"

namespace rendezvous::bookings {
namespace {

constexpr Millis kIdempotencyWindow = time::kMillisPerDay;

// Counted under the host's lock, so racing bookings of the event type are counted one by one.
Status CheckLimits(DbConnection& conn, const User& host, const EventType& et, Millis start, int64_t except_id) {
  const BookingLimits& limits = et.fields.booking_limits;
  if (!limits.any()) return Status::Ok();
  const HostCalendar calendar = HostCalendarOf(host.time_zone, host.week_start);
  const std::vector<Millis> booked =
      EventTypeBookedStarts(conn, et.id, LimitedSpan(limits, start, start + 1, calendar), except_id);
  return CheckBookingLimits(limits, start, booked, calendar);
}

Status UnknownEventType() {
  return Status::Invalid("eventTypeId", "eventTypeId names no event type");
}

// A booking to be made: what the caller chose (attendees, start, metadata, location).
Booking Draft(const CreateRequest& r) {
  Booking b;
  b.start = r.start;
  b.attendees.push_back(r.attendee);
  for (const std::string& guest : r.guests) b.attendees.push_back({"", guest, r.attendee.time_zone, false});
  b.metadata = r.metadata;
  b.location = r.location;
  b.responses = r.responses;
  if (r.notes) b.description = *r.notes;
  return b;
}

}  // namespace

std::optional<Booking> BookingFlow::PeekBooking(int64_t host_id, const std::string& uid) {
  return db_.Run([&](DbConnection& conn) -> std::optional<Booking> {
    auto row = LoadBooking(conn, host_id, uid, false);
    if (!row) return std::nullopt;
    return row->booking;
  });
}

Result<User> BookingFlow::HostOf(const std::string& uid) {
  std::optional<int64_t> host_id = db_.Run([&](DbConnection& conn) { return BookingHost(conn, uid); });
  std::optional<User> host = host_id ? users_.FindUser(*host_id) : std::nullopt;
  if (!host) return Status::NotFound("booking not found");
  return *host;
}

Result<Json> BookingFlow::Slots(const SlotsQuery& q) {
  const auto started = std::chrono::steady_clock::now();
  // The host's version is read here, before its booked times: a change committed in between makes
  // the next list read them again.
  const HostEventTypes loaded =
      db_.Run([&](DbConnection& conn) { return LoadEventTypeWithBuffers(conn, q.event_type_id); });
  const std::optional<EventType>& et = loaded.event_type;
  std::optional<User> host = et ? users_.FindUser(et->owner_id) : std::nullopt;
  if (!host) return UnknownEventType();
  // No start is offered further ahead than a booking may be made.
  const Millis from = q.from;
  const Millis to = std::min(q.to, window_.Horizon(time::Now()) + 1);
  if (to <= from) return Json{{"data", Json::object()}};
  const SlotRules rules = RulesOf(*et);
  const BookingLimits& limits = et->fields.booking_limits;
  const HostCalendar calendar = limits.any() ? HostCalendarOf(host->time_zone, host->week_start) : HostCalendar{};
  std::vector<BusySourceFailure> failures;
  std::vector<BusyBlock> busy =
      window_.OutsideBusy(host->id, from, to + rules.length * time::kMillisPerMinute, &failures);
  const TimeRange window = GridWindow(from, to, rules);
  std::vector<Millis> limited;  // the event type's booked starts in its limited periods
  // Outside a database connection: a request may wait for another's read of the same range.
  const TimeRange starts = BookedStartRange(from, to);
  const std::vector<BookedTime> times = writes_->booked_times().Get(
      host->id, loaded.version, starts.start, starts.end,
      [&] { return db_.Run([&](DbConnection& conn) { return HostBookedTimes(conn, host->id, starts); }); });
  std::vector<BusyBlock> own = WithBuffers(times, loaded.buffers);
  busy.insert(busy.end(), own.begin(), own.end());
  // Open holds are read only while the host has one (its lock row says until when): they end
  // by the clock, so they are not kept with the booked times.
  const Millis now = time::Now();
  std::vector<BookedTime> held;
  Schedule schedule = db_.Run([&](DbConnection& conn) {
    if (limits.any()) limited = EventTypeBookedStarts(conn, et->id, LimitedSpan(limits, from, to, calendar));
    if (loaded.holds_until > now) held = HostHeldTimes(conn, host->id, starts, now);
    return ScheduleForEventType(conn, *host, et->fields.schedule_id);
  });
  std::vector<BusyBlock> holds = WithBuffers(held, loaded.buffers);
  busy.insert(busy.end(), holds.begin(), holds.end());
  const time::Zone zone = ZoneOf(schedule);
  std::vector<Millis> free =
      FreeSlots(WorkingIntervals(schedule, window.start, window.end), zone, from, to, now, rules, busy);
  if (limits.any()) free = WithinBookingLimits(limits, std::move(free), limited, calendar);
  Json answer = {{"data", SlotsByDate(free, q.zone)}};
  if (!failures.empty()) {
    Json unavailable = Json::array();
    for (const BusySourceFailure& f : failures) unavailable.push_back({{"source", f.source}, {"code", f.code}});
    answer["unavailableCalendars"] = std::move(unavailable);
  }
  if (metrics_) {
    metrics_->SlotsComputed(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  return answer;
}

Result<Booking> BookingFlow::Book(DbConnection& conn, const User& host, const EventType& et,
                                  const HostEventTypes& types, const CreateRequest& request,
                                  const std::vector<BusyBlock>& outside, const Booking* replaces,
                                  int64_t except_hold) {
  const SlotRules rules = RulesOf(et);
  const Schedule schedule = ScheduleForEventType(conn, host, et.fields.schedule_id);
  const TimeRange window = GridWindow(request.start, request.start + 1, rules);
  const Millis now = time::Now();
  std::vector<BusyBlock> busy = HostBusyBlocks(conn, host.id, types, request.start, request.start + 1,
                                               rules.length, replaces ? replaces->id : 0);
  if (types.holds_until > now) {
    std::vector<BusyBlock> held =
        HostHeldBlocks(conn, host.id, types, request.start, request.start + 1, now, except_hold);
    busy.insert(busy.end(), held.begin(), held.end());
  }
  busy.insert(busy.end(), outside.begin(), outside.end());
  if (Status refused = CheckBookable(WorkingIntervals(schedule, window.start, window.end), ZoneOf(schedule),
                                     request.start, now, rules, busy);
      !refused.ok()) {
    if (metrics_ && refused.reason() == "slot_unavailable" && Conflicts(request.start, rules, busy))
      metrics_->OverlapRefused(replaces ? "reschedule" : "create");
    return refused;
  }
  if (Status full = CheckLimits(conn, host, et, request.start, replaces ? replaces->id : 0); !full.ok()) return full;
  Booking b = Draft(request);
  if (replaces) {
    b.attendees = replaces->attendees;
    for (Attendee& a : b.attendees) a.absent = false;
    b.metadata = replaces->metadata;
    b.location = replaces->location;
    b.description = replaces->description;
    b.responses = replaces->responses;
    b.rescheduled_from_uid = replaces->uid;
  }
  if (!b.location) b.location = BookingLocation(et.fields.locations);
  b.uid = crypto::RandomToken(16);
  b.event_type_id = et.id;
  b.event_type_slug = et.fields.slug;
  b.host_id = host.id;
  b.title = BookingTitle(et.fields.title, host.name, b.attendees.front().name);
  b.status = et.fields.requires_confirmation ? BookingStatus::kPending : BookingStatus::kAccepted;
  b.duration = et.fields.length_minutes;
  b.end = b.start + static_cast<Millis>(b.duration) * time::kMillisPerMinute;
  b.created_at = now;
  InsertBooking(conn, b, true, types.recorded_longest);
  return b;
}

Result<Json> BookingFlow::Create(const CreateRequest& given,
                                 const std::optional<std::string>& idempotency_key,
                                 const std::string& body_hash) {
  std::optional<EventType> first =
      db_.Run([&](DbConnection& conn) { return FindEventType(conn, given.event_type_id); });
  std::optional<User> host = first ? users_.FindUser(first->owner_id) : std::nullopt;
  if (!host) return UnknownEventType();
  // The answers are judged by the questions as this request found them, before anything is written.
  Result<CheckedResponses> answers =
      CheckBookingResponses(first->fields.booking_fields, given.booking_fields_responses);
  if (!answers.ok()) return answers.status();
  CreateRequest request = given;
  request.responses = std::move(answers->answers);
  request.notes = std::move(answers->notes);
  if (Status far = window_.CheckHorizon(request.start); !far.ok()) return far;
  const std::vector<BusyBlock> outside = window_.OutsideBusy(
      host->id, request.start, request.start + first->fields.length_minutes * time::kMillisPerMinute);
  const std::string key_hash = idempotency_key ? crypto::Sha256Hex(*idempotency_key) : "";
  bool created = false;
  bool converted = false;
  Result<Json> out = writes_->Change(host->id, [&](HostChange& change) -> Result<Json> {
    created = false;
    converted = false;
    DbConnection& conn = change.conn();
    const HostEventTypes types = LoadHostEventTypes(conn, host->id, request.event_type_id);
    const std::optional<EventType>& et = types.event_type;
    if (!et) return UnknownEventType();
    const Millis now = time::Now();
    if (idempotency_key) {
      std::optional<DbRow> seen = conn.QueryOne(
          "SELECT k.body_hash, b.uid FROM booking_idempotency_keys k JOIN bookings b ON b.id = k.booking_id"
          " WHERE k.event_type_id = ? AND k.key_hash = ? AND k.created_at > ?",
          {et->id, key_hash, time::FormatSql(now - kIdempotencyWindow)});
      if (seen) {
        if (seen->String(1) != body_hash) {
          return Status(ErrorCode::kUnprocessable,
                        "this Idempotency-Key was used with another request body; use a new key for a new booking");
        }
        std::optional<BookingRow> earlier = LoadBooking(conn, host->id, seen->String(2), false);
        if (!earlier) return Status(ErrorCode::kInternal, "the booking of this Idempotency-Key is missing");
        return BookingJson(earlier->booking, *host);
      }
      conn.Exec("DELETE FROM booking_idempotency_keys WHERE event_type_id = ? AND key_hash = ?", {et->id, key_hash});
    }
    if (et->fields.disable_guests && !request.guests.empty()) {
      return Status::Invalid("guests", "guests are refused: the event type has disableGuests");
    }
    // The holder's reservation becomes the booking; a uid that names no open hold of this host
    // is no reservation (its slot is booked when it is free).
    int64_t hold = 0;
    if (request.reservation_uid && IsReservationUid(*request.reservation_uid) && types.holds_until > now) {
      std::optional<DbRow> row =
          conn.QueryOne("SELECT id FROM slot_reservations WHERE uid = ? AND host_id = ? AND until_ms > ?",
                        {*request.reservation_uid, host->id, now});
      if (row) hold = row->Int(1);
    }
    Result<Booking> b = Book(conn, *host, *et, types, request, outside, nullptr, hold);
    if (!b.ok()) return b.status();
    if (hold != 0) {
      conn.Exec("DELETE FROM slot_reservations WHERE id = ?", {hold});
      converted = true;
    }
    change.Booked(BookedTime{b->start, b->end, b->event_type_id, b->id});
    if (idempotency_key) {
      conn.Exec(
          "INSERT INTO booking_idempotency_keys (event_type_id, key_hash, body_hash, booking_id, created_at)"
          " VALUES (?, ?, ?, ?, ?)",
          {et->id, key_hash, body_hash, b->id, time::FormatSql(now)});
    }
    change.Publish("BOOKING_CREATED", now, EventPayload(*b, *host, *et));
    created = true;
    return BookingJson(*b, *host);
  });
  if (created) {
    if (metrics_ && out.ok()) metrics_->Created((*out).value("status", ""));
    if (metrics_ && out.ok() && converted) metrics_->ReservationEnded("converted");
  }
  return out;
}

size_t BookingFlow::ForgetIdempotencyKeys(Millis now, size_t limit) {
  return db_.Run([&](DbConnection& conn) {
    return static_cast<size_t>(conn.Exec("DELETE FROM booking_idempotency_keys WHERE created_at <= ? LIMIT ?",
                                         {time::FormatSql(now - kIdempotencyWindow), limit}));
  });
}

Result<Json> BookingFlow::Cancel(const std::string& uid, const std::optional<std::string>& reason) {
  Result<User> host = HostOf(uid);
  if (!host.ok()) return host.status();
  return Change(*host, uid, BookingAction::kCancel, reason, nullptr);
}

Result<Json> BookingFlow::Reschedule(const std::string& uid, const RescheduleRequest& request) {
  Result<User> host = HostOf(uid);
  if (!host.ok()) return host.status();
  if (Status far = window_.CheckHorizon(request.start); !far.ok()) return far;
  std::optional<Booking> before = PeekBooking(host->id, uid);
  if (!before) return Status::NotFound("booking not found");
  const std::vector<BusyBlock> outside =
      window_.OutsideBusy(host->id, request.start, request.start + before->duration * time::kMillisPerMinute);
  Result<Json> out = writes_->Change(host->id, [&](HostChange& change) -> Result<Json> {
    DbConnection& conn = change.conn();
    auto row = LoadBooking(conn, host->id, uid, true);
    if (!row) return Status::NotFound("booking not found");
    Booking& old = row->booking;
    const Millis now = time::Now();
    if (Status refused = CheckTransition(old.status, BookingAction::kReschedule, old.start <= now, old.end <= now);
        !refused.ok()) {
      return refused;
    }
    const HostEventTypes types = LoadHostEventTypes(conn, host->id, old.event_type_id);
    const std::optional<EventType>& et = types.event_type;
    if (!et) return Status(ErrorCode::kInternal, "the booking's event type is missing");
    CreateRequest draft;
    draft.start = request.start;
    Result<Booking> fresh = Book(conn, *host, *et, types, draft, outside, &old);
    if (!fresh.ok()) return fresh.status();
    change.Booked(BookedTime{fresh->start, fresh->end, fresh->event_type_id, fresh->id});
    change.Freed(old.id);
    old.status = StatusAfter(old.status, BookingAction::kReschedule);
    old.rescheduled_to_uid = fresh->uid;
    old.cancellation_reason = request.reason;
    conn.Exec(
        "UPDATE bookings SET status = ?, rescheduled_to_uid = ?, cancellation_reason = ?, updated_at = ? "
        "WHERE id = ?",
        {StatusName(old.status), old.rescheduled_to_uid, old.cancellation_reason, time::FormatSql(now),
         old.id});
    change.Publish("BOOKING_RESCHEDULED", now, RescheduledPayload(*fresh, old, *host, *et));
    return BookingJson(*fresh, *host);
  });
  if (metrics_ && out.ok()) metrics_->Transitioned(BookingAction::kReschedule);
  return out;
}

Result<Json> BookingFlow::Reopen(const User& host, const std::string& uid) {
  std::optional<Booking> before = PeekBooking(host.id, uid);
  if (!before) return Status::NotFound("booking not found");
  const std::vector<BusyBlock> outside = window_.OutsideBusy(host.id, before->start, before->end);
  Result<Json> out = writes_->Change(host.id, [&](HostChange& change) -> Result<Json> {
    DbConnection& conn = change.conn();
    auto row = LoadBooking(conn, host.id, uid, true);
    if (!row) return Status::NotFound("booking not found");
    Booking& b = row->booking;
    const Millis now = time::Now();
    if (Status refused = CheckTransition(b.status, BookingAction::kReopen, b.start <= now, b.end <= now); !refused.ok()) {
      return refused;
    }
    if (b.rescheduled_to_uid) {
      return Status::Conflict("the booking was rescheduled to " + *b.rescheduled_to_uid + "; it cannot be reopened");
    }
    if (Status far = window_.CheckHorizon(b.start); !far.ok()) return far;
    const HostEventTypes types = LoadHostEventTypes(conn, host.id, b.event_type_id);
    const std::optional<EventType>& et = types.event_type;
    if (!et) return Status(ErrorCode::kInternal, "the booking's event type is missing");
    SlotRules rules = RulesOf(*et);
    rules.length = b.duration;
    std::vector<BusyBlock> busy =
        HostBusyBlocks(conn, host.id, types, b.start, b.start + 1, rules.length, b.id);
    if (types.holds_until > now) {
      std::vector<BusyBlock> held = HostHeldBlocks(conn, host.id, types, b.start, b.start + 1, now);
      busy.insert(busy.end(), held.begin(), held.end());
    }
    busy.insert(busy.end(), outside.begin(), outside.end());
    if (Conflicts(b.start, rules, busy)) {
      if (metrics_) metrics_->OverlapRefused("reopen");
      return Status::Conflict("the booking's time is no longer free").WithReason("slot_unavailable");
    }
    if (Status full = CheckLimits(conn, host, *et, b.start, b.id); !full.ok()) return full;
    b.status = et->fields.requires_confirmation ? BookingStatus::kPending : BookingStatus::kAccepted;
    b.cancellation_reason.reset();
    change.Booked(BookedTime{b.start, b.end, b.event_type_id, b.id});
    conn.Exec("UPDATE bookings SET status = ?, cancellation_reason = NULL, updated_at = ? WHERE id = ?",
              {StatusName(b.status), time::FormatSql(now), b.id});
    change.Publish("BOOKING_REOPENED", now, EventPayload(b, host, *et));
    return BookingJson(b, host);
  });
  if (metrics_ && out.ok()) metrics_->Transitioned(BookingAction::kReopen);
  return out;
}

}  // namespace rendezvous::bookings
