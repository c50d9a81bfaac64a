// Slot reservations: ReservationFlow (reservation_flow.hpp).
#include "reservation_flow.hpp"

#include <algorithm>

#include "booking_rows.hpp"
#include "rendezvous/crypto.hpp"
#include "schedule_rows.hpp"

namespace rendezvous::bookings {
namespace {

constexpr const char* kHoldColumns = "id, uid, event_type_id, host_id, start_ms, end_ms, minutes, until_ms";

SlotReservation HoldFromRow(const DbRow& row) {
  return SlotReservation{
      row.Int(1), row.String(2), row.Int(3), row.Int(4), row.Int(5), row.Int(6), static_cast<int>(row.Int(7)),
      row.Int(8)};
}

// The open hold `uid` (locked when `lock`); nullopt when there is none or it ended at `now`.
std::optional<SlotReservation> LoadHold(DbConnection& conn, const std::string& uid, Millis now, bool lock) {
  if (!IsReservationUid(uid)) return std::nullopt;
  std::optional<DbRow> row = conn.QueryOne(std::string("SELECT ") + kHoldColumns +
                                               " FROM slot_reservations WHERE uid = ? AND until_ms > ?" +
                                               (lock ? " FOR UPDATE" : ""),
                                           {uid, now});
  if (!row) return std::nullopt;
  return HoldFromRow(*row);
}

Status KeepsItsEventType() {
  return Status::Invalid("eventTypeId",
                         "a reservation keeps its event type: eventTypeId must be the reservation's");
}

Status HoldNotFound() {
  return Status::NotFound("reservation not found: it never existed, ended, was deleted or became a booking");
}

// A booking's refusal of a start, said of slotStart.
Status AsSlotStart(Status refused) {
  if (refused.code() != ErrorCode::kInvalid || refused.field() != "start") return refused;
  std::string message = refused.message();
  if (message.rfind("start", 0) == 0) message = "slotStart" + message.substr(5);
  return Status::Invalid("slotStart", message);
}

// Whether a hold of `et` at `start` may be taken now: on the grid, in the future, past the
// notice, and free of the host's bookings, other holds (but `except_hold`) and `outside`.
Status CheckHoldable(DbConnection& conn, const User& host, const EventType& et, const HostEventTypes& types,
                     Millis start, Millis now, const std::vector<BusyBlock>& outside, int64_t except_hold) {
  const SlotRules rules = RulesOf(et);
  const Schedule schedule = ScheduleForEventType(conn, host, et.fields.schedule_id);
  const TimeRange window = GridWindow(start, start + 1, rules);
  std::vector<BusyBlock> busy = HostBusyBlocks(conn, host.id, types, start, start + 1, rules.length);
  if (types.holds_until > now) {
    std::vector<BusyBlock> held = HostHeldBlocks(conn, host.id, types, start, start + 1, now, except_hold);
    busy.insert(busy.end(), held.begin(), held.end());
  }
  busy.insert(busy.end(), outside.begin(), outside.end());
  return AsSlotStart(CheckBookable(WorkingIntervals(schedule, window.start, window.end), ZoneOf(schedule),
                                   start, now, rules, busy));
}

// The host's holds last at least until `until`.
void RaiseHoldsUntil(DbConnection& conn, int64_t host_id, Millis until) {
  conn.Exec("UPDATE booking_host_locks SET holds_until_ms = GREATEST(holds_until_ms, ?) WHERE host_id = ?",
            {until, host_id});
}

}  // namespace

ReservationFlow::ReservationFlow(Database& db, std::shared_ptr<HostWrites> writes, UserDirectory& users)
    : db_(db), writes_(std::move(writes)), users_(users) {}

Result<ReservationFlow::Target> ReservationFlow::Check(const ReserveRequest& request, const Caller& caller,
                                                       std::optional<int64_t> holder) {
  std::optional<EventType> et =
      db_.Run([&](DbConnection& conn) { return FindEventType(conn, request.event_type_id); });
  std::optional<User> host = et ? users_.FindUser(et->owner_id) : std::nullopt;
  if (!host) return Status::Invalid("eventTypeId", "eventTypeId names no event type");
  Target target{*et, *host, settings_.minutes, {}};
  if (request.reservation_minutes) {
    if (!caller.user_id) {
      return Status(ErrorCode::kUnauthenticated,
                    "reservationDuration may be set only with the event type owner's credentials");
    }
    if (*caller.user_id != et->owner_id) {
      return Status(ErrorCode::kForbidden, "reservationDuration may be set only by the event type's owner");
    }
    target.minutes = *request.reservation_minutes;
  }
  if (request.slot_duration && *request.slot_duration != et->fields.length_minutes) {
    return Status::Invalid("slotDuration", "slotDuration must be the event type's length, " +
                                               std::to_string(et->fields.length_minutes) + " minutes");
  }
  if (Status far = window_.CheckHorizon(request.slot_start); !far.ok()) {
    return Status::Invalid("slotStart", "slotStart" + far.message().substr(5));
  }
  if (holder && *holder != host->id) return KeepsItsEventType();
  const Millis length = et->fields.length_minutes * time::kMillisPerMinute;
  target.outside = window_.OutsideBusy(host->id, request.slot_start, request.slot_start + length);
  return target;
}

Result<User> ReservationFlow::HostOf(const std::string& uid) {
  std::optional<SlotReservation> hold =
      db_.Run([&](DbConnection& conn) { return LoadHold(conn, uid, time::Now(), false); });
  std::optional<User> host = hold ? users_.FindUser(hold->host_id) : std::nullopt;
  if (!host) return HoldNotFound();
  return *host;
}

Status ReservationFlow::Place(DbConnection& conn, const Target& target, const ReserveRequest& request,
                              Millis now, SlotReservation& hold) {
  const HostEventTypes types = LoadHostEventTypes(conn, target.host.id, target.event_type.id);
  if (!types.event_type) return Status::Invalid("eventTypeId", "eventTypeId names no event type");
  if (Status refused = CheckHoldable(conn, target.host, *types.event_type, types, request.slot_start, now,
                                     target.outside, hold.id);
      !refused.ok()) {
    return refused;
  }
  hold.start = request.slot_start;
  hold.end = request.slot_start + types.event_type->fields.length_minutes * time::kMillisPerMinute;
  hold.minutes = target.minutes;
  hold.until = now + hold.minutes * time::kMillisPerMinute;
  return Status::Ok();
}

Result<Json> ReservationFlow::Reserve(const ReserveRequest& request, const Caller& caller) {
  Result<Target> target = Check(request, caller);
  if (!target.ok()) return target.status();
  const User& host = target->host;
  Result<Json> out = writes_->Change(host.id, [&](HostChange& change) -> Result<Json> {
    DbConnection& conn = change.conn();
    const Millis now = time::Now();
    SlotReservation hold;
    if (Status refused = Place(conn, *target, request, now, hold); !refused.ok()) return refused;
    // The address's open holds, locked so that its racing requests count one after the other.
    std::vector<int64_t> open;
    conn.QueryInts("SELECT until_ms FROM slot_reservations WHERE address = ? AND until_ms > ? FOR UPDATE",
                   {caller.address, now}, open);
    if (open.size() >= static_cast<size_t>(settings_.per_address)) {
      const Millis first_end = *std::min_element(open.begin(), open.end());
      const int retry = static_cast<int>((first_end - now + 999) / 1000);
      return Status::RateLimited("this address holds " + std::to_string(open.size()) +
                                     " open reservations, the most it may; book, delete or let one expire",
                                 std::max(retry, 1));
    }
    hold.uid = crypto::RandomToken(16);
    hold.event_type_id = target->event_type.id;
    hold.host_id = host.id;
    hold.id = conn.InsertReturning(
        "INSERT INTO slot_reservations (uid, event_type_id, host_id, start_ms, end_ms, minutes, until_ms, "
        "address,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        {hold.uid, hold.event_type_id, hold.host_id, hold.start, hold.end, hold.minutes, hold.until,
         caller.address, time::FormatSql(now)});
    RaiseHoldsUntil(conn, host.id, hold.until);
    return ReservationJson(hold);
  });
  if (metrics_ && out.ok()) metrics_->ReservationMade();
  return out;
}

Result<Json> ReservationFlow::Get(const std::string& uid) {
  std::optional<SlotReservation> hold =
      db_.Run([&](DbConnection& conn) { return LoadHold(conn, uid, time::Now(), false); });
  if (!hold) return HoldNotFound();
  return ReservationJson(*hold);
}

Result<Json> ReservationFlow::Update(const std::string& uid, const ReserveRequest& request,
                                     const Caller& caller) {
  Result<User> holder_host = HostOf(uid);
  if (!holder_host.ok()) return holder_host.status();
  Result<Target> target = Check(request, caller, holder_host->id);
  if (!target.ok()) return target.status();
  const EventType& et = target->event_type;
  const User& host = target->host;
  return writes_->Change(host.id, [&](HostChange& change) -> Result<Json> {
    DbConnection& conn = change.conn();
    const Millis now = time::Now();
    std::optional<SlotReservation> hold = LoadHold(conn, uid, now, true);
    if (!hold || hold->host_id != host.id) return HoldNotFound();
    if (hold->event_type_id != et.id) return KeepsItsEventType();
    if (Status refused = Place(conn, *target, request, now, *hold); !refused.ok()) return refused;
    conn.Exec("UPDATE slot_reservations SET start_ms = ?, end_ms = ?, minutes = ?, until_ms = ? WHERE id = ?",
              {hold->start, hold->end, hold->minutes, hold->until, hold->id});
    RaiseHoldsUntil(conn, host.id, hold->until);
    return ReservationJson(*hold);
  });
}

Status ReservationFlow::Delete(const std::string& uid) {
  Result<User> host = HostOf(uid);
  if (!host.ok()) return host.status();
  Status out = writes_->Change(host->id, [&](HostChange& change) -> Status {
    if (change.conn().Exec("DELETE FROM slot_reservations WHERE uid = ? AND host_id = ? AND until_ms > ?",
                           {uid, host->id, time::Now()}) == 0) {
      return HoldNotFound();
    }
    return Status::Ok();
  });
  if (metrics_ && out.ok()) metrics_->ReservationEnded("deleted");
  return out;
}

size_t ReservationFlow::ForgetExpired(Millis now, size_t limit) {
  // A transaction, so a deadlock with another instance's sweep of the same rows is retried.
  const size_t n = db_.Transaction([&](DbConnection& conn) {
    return static_cast<size_t>(
        conn.Exec("DELETE FROM slot_reservations WHERE until_ms <= ? LIMIT ?", {now, limit}));
  });
  if (metrics_ && n > 0) metrics_->ReservationEnded("expired", n);
  return n;
}

void ReservationFlow::CountOpen(Millis now) {
  if (!metrics_) return;
  const int64_t open = db_.Run([&](DbConnection& conn) {
    std::optional<DbRow> row =
        conn.QueryOne("SELECT COUNT(*) FROM slot_reservations WHERE until_ms > ?", {now});
    return row ? row->Int(1) : 0;
  });
  metrics_->ReservationsHeld(static_cast<size_t>(open));
}

}  // namespace rendezvous::bookings
