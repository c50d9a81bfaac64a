// The bookings plugin's operations on event types, bookings and their attendees (tables in
// booking_rows.hpp), every change in one transaction together with its outbox event (topic
// "bookings"). Used by the routes, `admin booking import` and the completion sweep. Thread-safe
// (each call borrows its own connection). Calls may throw DatabaseUnavailable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "booking.hpp"
#include "booking_requests.hpp"
#include "booking_transitions.hpp"
#include "event_type.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/identity.hpp"
#include "rendezvous/log.hpp"
#include "rendezvous/outbox.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::bookings {

constexpr const char* kOutboxTopic = "bookings";
constexpr int kMaxEventTypesPerUser = 500;

struct ImportRequest {
  int64_t user_id = 0;
  int64_t event_type_id = 0;
  Millis start = 0;
  std::string attendee_name;
  std::string attendee_email;
  BookingStatus status = BookingStatus::kAccepted;
};

class BookingService {
 public:
  BookingService(Database& db, Outbox& outbox, Identity& identity, Logger& logger);

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

  // `admin booking import`: no event is written (it brings history over). An accepted booking
  // that has already ended is later completed by the sweep without a BOOKING_COMPLETED event.
  Result<Json> Import(const ImportRequest& request);

  // Completes up to `batch` accepted bookings whose end is at or before `now` (rows claimed with
  // FOR UPDATE SKIP LOCKED, so instances share the work). Returns how many it completed.
  size_t CompleteEnded(Millis now, size_t batch);

 private:
  Result<Json> Change(const User& host, const std::string& uid, BookingAction action,
                      const std::optional<std::string>& reason, const AbsentMarks* marks);

  Database& db_;
  Outbox& outbox_;
  Identity& identity_;
  Logger& logger_;
};

}  // namespace rendezvous::bookings
