// The life of bookings (tables in booking_rows.hpp): the public booking flow (slots, create,
// cancel, reschedule), the host's reads and changes (confirm, decline, mark absent, reopen) and
// the completion of ended bookings, every change in one transaction together with its outbox
// event (topic "bookings"). Every write first takes the host's lock (LockHost), so two bookings of
// a host never overlap however many requests race. Owns the cache of the hosts' booked times that
// the slots read. Used by the routes and the completion sweep. Thread-safe (each call borrows its
// own connection). Calls may throw DatabaseUnavailable. The Database, Outbox, UserDirectory and
// Logger must outlive it.
//
// Sources: booking_flow.cpp (the public flow and reopen), booking_changes.cpp (the host's reads
// and changes, the completion, what every change shares).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "availability.hpp"
#include "booked_times_cache.hpp"
#include "booking.hpp"
#include "booking_metrics.hpp"
#include "booking_requests.hpp"
#include "booking_transitions.hpp"
#include "event_type.hpp"
#include "public_requests.hpp"
#include "rendezvous/contracts/busy_times.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"
#include "rendezvous/outbox.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/user.hpp"
#include "reservation_requests.hpp"

namespace rendezvous::bookings {

struct HostEventTypes;  // booking_rows.hpp

// Busy times of a host from outside the bookings (connected calendars) that overlap [from, to),
// with the sources that could not be read (busy_times.hpp).
using BusySource = std::function<BusyReport(int64_t host_id, Millis from, Millis to)>;

// The slot grid's rules of an event type, and the time zone of a schedule (UTC when unknown).
SlotRules RulesOf(const EventType& et);
time::Zone ZoneOf(const Schedule& schedule);

class BookingFlow {
 public:
  BookingFlow(Database& db, Outbox& outbox, UserDirectory& users, Logger& logger);

  // Busy times beyond the host's bookings that slots and new bookings must avoid. Set before
  // the server serves; none by default.
  void SetBusySource(BusySource source) { busy_source_ = std::move(source); }
  // Where creations, transitions, refused overlaps and slot timings are counted. Set before the
  // server serves; none by default.
  void SetMetrics(std::shared_ptr<BookingMetrics> metrics) { metrics_ = std::move(metrics); }
  // plugins.bookings.max_days_ahead: a booking may start at most this many days from now (create,
  // reschedule, reopen: 400 naming start; slots end there). Set before the server serves;
  // 730 by default.
  void SetMaxDaysAhead(int days) { max_days_ahead_ = days; }
  // plugins.bookings.reservations. Set before the server serves; DESIGN §8's defaults otherwise.
  void SetReservationSettings(ReservationSettings settings) { reservations_ = settings; }
  const ReservationSettings& reservation_settings() const { return reservations_; }

  // The hosts' booked times the slots read; writers of bookings outside this class
  // (BookingImport) tell it what they changed.
  BookedTimesCache& booked_times() { return booked_times_; }

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

  // Slot reservations (docs/bookings.md "Holding a slot"; reservation_flow.cpp). A hold is taken
  // under the host's lock like a booking, so a hold and a racing booking never both win; while it
  // lasts its slot is left out of the slots and refused to every booking but its holder's (the
  // one naming its uid, which turns it into the booking). Who asks: the client address (at most
  // reservations.per_address open holds each: 429) and the user of a credential given (nullopt:
  // none); reservationDuration is the event type owner's only (401 without a credential, 403 with
  // another's). A slotStart in the past or off the grid is 400 naming slotStart, a slot not free
  // 409; an unknown event type 400 naming eventTypeId; an unknown or ended reservation 404.
  struct ReservationCaller {
    std::string address;
    std::optional<int64_t> user_id;
  };
  Result<Json> Reserve(const ReserveRequest& request, const ReservationCaller& caller);
  Result<Json> GetReservation(const std::string& uid);
  // Moves the hold to the request's slot (of the same event type) and holds it again from now.
  Result<Json> UpdateReservation(const std::string& uid, const ReserveRequest& request,
                                 const ReservationCaller& caller);
  Status DeleteReservation(const std::string& uid);
  // Deletes up to `limit` holds that ended at `now` (counted as expired). Returns how many.
  size_t ForgetExpiredReservations(Millis now, size_t limit);
  // Sets the gauge of open holds to their number at `now` (all instances').
  void CountOpenReservations(Millis now);

  // Deletes up to `limit` idempotency keys older than 24 hours at `now`. Returns how many.
  size_t ForgetIdempotencyKeys(Millis now, size_t limit);

  // Completes up to `batch` accepted bookings whose end is at or before `now` (rows claimed with
  // FOR UPDATE SKIP LOCKED, so instances share the work). Returns how many it completed.
  size_t CompleteEnded(Millis now, size_t batch);

 private:
  Result<Json> Change(const User& host, const std::string& uid, BookingAction action,
                      const std::optional<std::string>& reason, const AbsentMarks* marks);
  // The busy source's blocks for starts in [from, to) (none without a source). The sources that
  // could not be read are left out (the calendar plugin logs and counts them) and, when
  // `failures` is given, named there.
  std::vector<BusyBlock> OutsideBusy(int64_t host_id, Millis from, Millis to,
                                     std::vector<BusySourceFailure>* failures = nullptr);
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
  // The event type of a reservation request and its owner, with the checks that need no lock:
  // the event type, who may set reservationDuration, slotDuration, the horizon.
  struct ReservationTarget {
    EventType event_type;
    User host;
    int minutes = 0;  // how long the hold lasts
  };
  Result<ReservationTarget> CheckReservation(const ReserveRequest& request, const ReservationCaller& caller);
  // The host of the open reservation `uid`; NotFound when there is none.
  Result<User> ReservationHost(const std::string& uid);
  // A 400 naming start when `start` is further ahead than max_days_ahead.
  Status CheckHorizon(Millis start) const;
  // What a transaction holding a host's lock changed in the host's booked times, for the cache:
  // the version it made (0: it did not commit), a booking now booked, one no longer (0: none).
  struct BookedChange {
    int64_t version = 0;
    std::optional<BookedTime> added;
    int64_t removed = 0;
  };
  void Applied(int64_t host_id, const BookedChange& change);
  // This instance's turn at a host's writes: held around a transaction that takes the host's
  // lock row, so an instance sends one such transaction of a host at a time (the others wait here,
  // holding no connection) and racing writers on a cluster meet one per instance at the row.
  // One host's turn: held while the host's transaction runs; other hosts never wait on it.
  class Turn {
   public:
    Turn(BookingFlow& flow, int64_t host_id);
    ~Turn() { unlock(); }
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;
    void unlock();

   private:
    BookingFlow& flow_;
    int64_t host_id_;
    std::shared_ptr<std::mutex> mutex_;
  };
  Turn HostTurn(int64_t host_id) { return Turn(*this, host_id); }

  Database& db_;
  Outbox& outbox_;
  UserDirectory& users_;
  Logger& logger_;
  BusySource busy_source_;
  std::shared_ptr<BookingMetrics> metrics_;
  int max_days_ahead_ = 730;
  ReservationSettings reservations_;
  BookedTimesCache booked_times_;
  // The hosts whose turn is held or awaited, each with its number of holders and waiters.
  std::mutex turns_mutex_;
  std::map<int64_t, std::pair<std::shared_ptr<std::mutex>, size_t>> turns_;
};

}  // namespace rendezvous::bookings
