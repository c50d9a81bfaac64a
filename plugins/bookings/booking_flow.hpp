// The life of bookings (tables in booking_rows.hpp): the public booking flow (slots, create,
// cancel, reschedule), the host's reads and changes (confirm, decline, mark absent, reopen) and
// the completion of ended bookings, every change in one transaction together with its outbox
// event (topic "bookings"). Every write is a HostWrites change: it first takes the host's lock
// (LockHost), so two bookings of a host never overlap however many requests race. Slot holds are
// ReservationFlow's; a booking made by a hold's holder takes the hold's place. Used by the routes
// and the completion sweep. Thread-safe (each call borrows its own connection). Calls may throw
// DatabaseUnavailable. The Database, Outbox and UserDirectory must outlive it.
//
// Sources: booking_flow.cpp (the public flow and reopen), booking_changes.cpp (the host's reads
// and changes, the completion).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "availability.hpp"
#include "booking.hpp"
#include "booking_metrics.hpp"
#include "booking_requests.hpp"
#include "booking_transitions.hpp"
#include "booking_window.hpp"
#include "event_type.hpp"
#include "host_writes.hpp"
#include "public_requests.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/outbox.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/user.hpp"

namespace rendezvous::bookings {

class BookingFlow {
 public:
  // `writes`: the host changes shared with ReservationFlow and BookingImport (and their cache of
  // booked times).
  BookingFlow(Database& db, Outbox& outbox, std::shared_ptr<HostWrites> writes, UserDirectory& users);

  // The busy source and the horizon (plugins.bookings.max_days_ahead: create, reschedule,
  // reopen: 400 naming start; slots end there). Set before the server serves; none and 730 days
  // by default.
  void SetWindow(BookingWindow window) { window_ = std::move(window); }
  // Where creations, transitions, refused overlaps, slot timings and holds turned into bookings
  // are counted. Set before the server serves; none by default.
  void SetMetrics(std::shared_ptr<BookingMetrics> metrics) { metrics_ = std::move(metrics); }

  // Failures are statuses for the HTTP layer: NotFound, Conflict (a refused transition, a time
  // that is not free), Invalid naming the field.
  // Bookings hosted by `host`: {"data": [..], "pagination": {total, skip, take}}.
  Json ListBookings(const User& host, const ListQuery& query);
  Result<Json> GetBooking(const User& host, const std::string& uid);
  Result<Json> Confirm(const User& host, const std::string& uid);
  Result<Json> Decline(const User& host, const std::string& uid, const std::optional<std::string>& reason);
  Result<Json> MarkAbsent(const User& host, const std::string& uid, const AbsentMarks& marks);

  // Public booking flow (docs/bookings.md "Booking a time"). Failures: Invalid naming the field
  // (an unknown event type is "eventTypeId"), NotFound (an unknown booking), Conflict with the
  // reason (a time that is not free, a refused transition). Busy sources that cannot be read
  // are left out, never an error.
  // GET /v2/slots: the envelope's fields, data = {"YYYY-MM-DD": [{"start"}, ..]} and, when a busy
  // source could not be read, unavailableCalendars = [{source, code}].
  Result<Json> Slots(const SlotsQuery& query);
  // POST /v2/bookings. With an idempotency key (already checked), the first booking made with the
  // same key for the event type in the last 24 hours is answered again when `body_hash` (the
  // SHA-256 of the canonical body) is the same, and a 422 when it is not.
  Result<Json> Create(const CreateRequest& given, const std::optional<std::string>& idempotency_key,
                      const std::string& body_hash);
  Result<Json> Cancel(const std::string& uid, const std::optional<std::string>& reason);
  // Answers the new booking.
  Result<Json> Reschedule(const std::string& uid, const RescheduleRequest& request);
  // Owner: a cancelled or rejected booking back to accepted (pending when confirmation is
  // required), when its time is in the future and still free.
  Result<Json> Reopen(const User& host, const std::string& uid);

  // Deletes up to `limit` idempotency keys older than 24 hours at `now`. Returns how many.
  size_t ForgetIdempotencyKeys(Millis now, size_t limit);

  // Completes up to `batch` accepted bookings whose end is at or before `now` (rows claimed with
  // FOR UPDATE SKIP LOCKED, so instances share the work). Returns how many it completed.
  size_t CompleteEnded(Millis now, size_t batch);

 private:
  Result<Json> Change(const User& host, const std::string& uid, BookingAction action,
                      const std::optional<std::string>& reason, const AbsentMarks* marks);
  // The booking `uid` of `host_id` as it is now, outside a transaction (to ask the busy source
  // before one); nullopt when there is none.
  std::optional<Booking> PeekBooking(int64_t host_id, const std::string& uid);
  // The host of the booking `uid` (looked up before a transaction, so it never waits for a second
  // connection); NotFound when there is no such booking.
  Result<User> HostOf(const std::string& uid);
  // Writes a new booking (and its event) for `request` inside a transaction holding the host's
  // lock: checks the start, then inserts. `replaces` is the booking a reschedule cancels.
  // `types`: the host's event types and reach, read after its lock (LoadHostEventTypes).
  // `except_hold`: the reservation of the slot the booking turns into (0: none); every other open
  // hold of the host is busy.
  Result<Booking> Book(DbConnection& conn, const User& host, const EventType& et, const HostEventTypes& types,
                       const CreateRequest& request, const std::vector<BusyBlock>& outside,
                       const Booking* replaces, int64_t except_hold = 0);

  Database& db_;
  Outbox& outbox_;
  std::shared_ptr<HostWrites> writes_;
  UserDirectory& users_;
  BookingWindow window_;
  std::shared_ptr<BookingMetrics> metrics_;
};

}  // namespace rendezvous::bookings
