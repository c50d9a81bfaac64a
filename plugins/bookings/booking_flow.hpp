// The bookings plugin's operations on event types, bookings and their attendees (tables in
// booking_rows.hpp), every change in one transaction together with its outbox event (topic
// "bookings"). Used by the routes, `admin booking import` and the completion sweep. Thread-safe
// (each call borrows its own connection). Calls may throw DatabaseUnavailable.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "availability.hpp"
#include "booked_times_cache.hpp"
#include "booking.hpp"
#include "booking_metrics.hpp"
#include "booking_requests.hpp"
#include "booking_transitions.hpp"
#include "rendezvous/busy_times.hpp"
#include "event_type.hpp"
#include "public_requests.hpp"
#include "rendezvous/booking_references.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/identity.hpp"
#include "rendezvous/log.hpp"
#include "rendezvous/outbox.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::bookings {

constexpr int kMaxEventTypesPerUser = 500;

// Busy times of a host from outside the bookings (connected calendars) that overlap [from, to),
// with the sources that could not be read (busy_times.hpp).
using BusySource = std::function<BusyReport(int64_t host_id, Millis from, Millis to)>;



struct ImportRequest {
  int64_t user_id = 0;
  int64_t event_type_id = 0;
  Millis start = 0;
  std::string attendee_name;
  std::string attendee_email;
  BookingStatus status = BookingStatus::kAccepted;
};

class BookingService final : public BookingReferences {
 public:
  BookingService(Database& db, Outbox& outbox, Identity& identity, Logger& logger);

  // Busy times beyond the host's bookings that slots and new bookings must avoid. Set before
  // the server serves; none by default.
  void SetBusySource(BusySource source) { busy_source_ = std::move(source); }
  // Where creations, transitions, refused overlaps and slot timings are counted. Set before the
  // server serves; none by default.
  void SetMetrics(std::shared_ptr<BookingMetrics> metrics) { metrics_ = std::move(metrics); }
  // plugins.bookings.max_days_ahead: a booking may start at most this many days from now (create,
  // reschedule, reopen, import: 400 naming start; slots end there). Set before the server serves;
  // 730 by default.
  void SetMaxDaysAhead(int days) { max_days_ahead_ = days; }

  static std::vector<Migration> Migrations();

  // Event types of `owner_id`; another user's is not found. Failures are statuses for the HTTP
  // layer: NotFound, Conflict (a duplicate slug, too many event types, a refused transition),
  // Invalid naming the field.
  Json ListEventTypes(int64_t owner_id);
  Result<Json> GetEventType(int64_t owner_id, int64_t id);
  Result<Json> CreateEventType(int64_t owner_id, const EventTypeFields& fields);
  // `patch` must have passed ApplyEventTypePatch on a scratch object already.
  Result<Json> UpdateEventType(int64_t owner_id, int64_t id, const Json& patch);
  // A Conflict while bookings of the event type exist. Answers the deleted event type.
  Result<Json> DeleteEventType(int64_t owner_id, int64_t id);

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
  Result<Json> Create(const CreateRequest& request, const std::optional<std::string>& idempotency_key,
                      const std::string& body_hash);
  Result<Json> Cancel(const std::string& uid, const std::optional<std::string>& reason);
  // Answers the new booking.
  Result<Json> Reschedule(const std::string& uid, const RescheduleRequest& request);
  // Owner: a cancelled or rejected booking back to accepted (pending when confirmation is
  // required), when its time is in the future and still free.
  Result<Json> Reopen(const User& host, const std::string& uid);

  // References of a booking of `host`: data = [{type, eventUid, calendarId, createdAt}], oldest
  // first.
  Result<Json> ListReferences(const User& host, const std::string& uid);
  // BookingReferences, provided to other plugins as "bookings.references".
  Status Add(const std::string& uid, const BookingReference& reference) override;
  std::vector<BookingReference> List(const std::string& uid) override;
  Status Move(const std::string& from_uid, const std::string& to_uid,
              const BookingReference& reference) override;

  // `admin booking import`: no event is written (it brings history over). An accepted booking
  // that has already ended is later completed by the sweep without a BOOKING_COMPLETED event.
  Result<Json> Import(const ImportRequest& request);

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
  Result<Booking> Book(DbConnection& conn, const User& host, const EventType& et, const CreateRequest& request,
                       const std::vector<BusyBlock>& outside, const Booking* replaces);
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

  Database& db_;
  Outbox& outbox_;
  Identity& identity_;
  Logger& logger_;
  BusySource busy_source_;
  std::shared_ptr<BookingMetrics> metrics_;
  int max_days_ahead_ = 730;
  BookedTimesCache booked_times_{1024, 20000};
};

}  // namespace rendezvous::bookings
