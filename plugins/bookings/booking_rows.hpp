// The bookings plugin's tables (owner "bookings": event_types, bookings, booking_attendees): their
// schema, and their rows read into event types and bookings and written from them. For
// EventTypeService, BookingFlow, BookingImport and BookingReferenceStore; every call works on a
// connection it is lent (and may throw what DbConnection throws).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "availability.hpp"
#include "booked_times_cache.hpp"
#include "booking.hpp"
#include "event_type.hpp"
#include "rendezvous/database.hpp"

namespace rendezvous::bookings {

// Whether `uid` can be a booking's or a slot reservation's uid: 1–64 of [A-Za-z0-9_-] (ids from
// outside are checked with this before they reach SQL).
bool IsUid(const std::string& uid);

// Column lists for SELECT, in the order EventTypeFromRow and BookingFromRow read them.
inline constexpr const char* kEventTypeColumns =
    "id, owner_id, title, slug, length_minutes, description, locations, requires_confirmation, "
    "minimum_booking_notice, before_event_buffer, after_event_buffer, slot_interval, schedule_id, limit_day, "
    "limit_week, limit_month, limit_year, disable_guests, lock_time_zone_toggle, "
    "forward_params_success_redirect, success_redirect_url, currency";
inline constexpr int kEventTypeColumnCount = 22;
// The metadata (up to 16 KiB) is read only where the API shows event types: after the columns
// above, as `kEventTypeColumns, kEventTypeMetadataColumn`.
inline constexpr const char* kEventTypeMetadataColumn = "metadata";
// The booking questions (up to 32 KiB) are read where the API shows event types and where bookings
// are made: after the columns above (and the metadata, when it is read).
inline constexpr const char* kEventTypeFieldsColumn = "booking_fields";
inline constexpr const char* kBookingColumns =
    "id, uid, event_type_id, host_id, title, description, status, start_at, end_at, duration, location, "
    "metadata, cancellation_reason, rescheduled_from_uid, rescheduled_to_uid, host_absent, created_at, "
    "emit_completion, booking_fields_responses";

// `with_metadata`: the row has kEventTypeMetadataColumn after kEventTypeColumns; `with_fields`:
// kEventTypeFieldsColumn after those.
EventType EventTypeFromRow(const DbRow& row, bool with_metadata = false, bool with_fields = false);

// A booking and whether its completion is announced (imported history is completed silently).
struct BookingRow {
  Booking booking;
  bool emit_completion = true;
};
BookingRow BookingFromRow(const DbRow& row);

// Fills the attendees of `rows`.
void LoadAttendees(DbConnection& conn, std::vector<BookingRow>& rows);
// Fills the event type slug of `rows`.
void LoadEventTypeSlugs(DbConnection& conn, std::vector<BookingRow>& rows);
// The event type `id` of `owner_id` with its metadata (locked FOR UPDATE when `lock`); nullopt for
// another owner's.
std::optional<EventType> LoadEventType(DbConnection& conn, int64_t owner_id, int64_t id, bool lock);
// The booking `uid` hosted by `host_id` with its attendees (locked FOR UPDATE when `lock`);
// nullopt for another host's or a uid that cannot be one.
std::optional<BookingRow> LoadBooking(DbConnection& conn, int64_t host_id, const std::string& uid, bool lock);
// The event type `id`, whoever owns it (the public booking flow), with its booking questions but
// without its metadata; nullopt when there is none.
std::optional<EventType> FindEventType(DbConnection& conn, int64_t id);
// The host of the booking `uid`; nullopt when there is none (or `uid` cannot be one).
std::optional<int64_t> BookingHost(DbConnection& conn, const std::string& uid);
// Writes a new booking with its attendees; sets booking.id. Raises the host's longest booking
// (booking_host_locks.longest_ms) when the booking is longer than `recorded_longest` (what the
// transaction read of it; nullopt: unknown).
void InsertBooking(DbConnection& conn, Booking& booking, bool emit_completion,
                   std::optional<Millis> recorded_longest = std::nullopt);
// Takes the host's booking lock for the rest of the transaction: changes that may make two of a
// host's bookings overlap run one at a time per host. Must be the transaction's first statement,
// so every read after it sees what the previous holder committed. Answers the host's version this
// transaction makes (see LoadEventTypeWithBuffers).
int64_t LockHost(DbConnection& conn, int64_t host_id);
// What bounds the bookings that may conflict with a start: the largest buffer of the host's event
// types (minutes) and the longest booking the host may have (ms): its event types' lengths and the
// longest booking it has had (booking_host_locks.longest_ms, kept by InsertBooking).
struct HostReach {
  int max_buffer = 0;
  Millis longest = 0;
};
// The buffers (before, after; minutes) of each of the host's event types, by id.
using EventTypeBuffers = std::map<int64_t, std::pair<int, int>>;
// The event type `id`, the buffers of every event type of its owner and the owner's version (how
// many times the host's lock was taken: every change that can alter which times the host has
// booked takes it, so an unchanged version means unchanged booked times), in one query; no event
// type when there is none.
struct HostEventTypes {
  std::optional<EventType> event_type;
  EventTypeBuffers buffers;
  int64_t version = 0;
  HostReach reach;              // what bounds a conflict check of the host's bookings
  Millis recorded_longest = 0;  // booking_host_locks.longest_ms (0: no row yet)
  Millis holds_until = 0;       // booking_host_locks.holds_until_ms: no hold of the host lasts past it
};
HostEventTypes LoadEventTypeWithBuffers(DbConnection& conn, int64_t id);
// The starts of the bookings that may conflict with starts in [from, to): bookings and buffers are
// at most a day long each.
inline TimeRange BookedStartRange(Millis from, Millis to) {
  return {from - 3 * time::kMillisPerDay, to + 2 * time::kMillisPerDay};
}
// The host's accepted and pending bookings starting in `starts`; the booking `except_id` is left out.
std::vector<BookedTime> HostBookedTimes(DbConnection& conn, int64_t host_id, TimeRange starts,
                                        int64_t except_id = 0);
// Those that may conflict with starts in [from, to).
inline std::vector<BookedTime> HostBookedTimes(DbConnection& conn, int64_t host_id, Millis from, Millis to,
                                               int64_t except_id = 0) {
  return HostBookedTimes(conn, host_id, BookedStartRange(from, to), except_id);
}
// The starts of the accepted and pending bookings of the event type `event_type_id` in `range`,
// ascending; the booking `except_id` is left out.
std::vector<Millis> EventTypeBookedStarts(DbConnection& conn, int64_t event_type_id, TimeRange range,
                                          int64_t except_id = 0);
// Booked times as busy blocks, each with its event type's buffers.
std::vector<BusyBlock> WithBuffers(const std::vector<BookedTime>& times, const EventTypeBuffers& buffers);
// The starts of the bookings that may conflict with a booking `length_minutes` long starting in
// [from, to). A booking blocks the starts after its own start less the new booking's length and
// the larger buffer, and before its end plus the larger buffer (ForbiddenBy); its end is at most
// `longest` after its start.
inline TimeRange ConflictStartRange(Millis from, Millis to, int length_minutes, const HostReach& reach) {
  const Millis buffer = reach.max_buffer * time::kMillisPerMinute;
  return {from - buffer - reach.longest, to + length_minutes * time::kMillisPerMinute + buffer};
}
// Every event type of `host_id` (`event_type_id` among them, or not: then no event type) and the
// host's longest booking, in one query; under LockHost, what the transaction's checks see.
HostEventTypes LoadHostEventTypes(DbConnection& conn, int64_t host_id, int64_t event_type_id);
// The host's accepted and pending bookings that may conflict with a booking `length_minutes` long
// starting in [from, to) (ConflictStartRange over `host`), as busy blocks with their event types'
// buffers; the booking `except_id` is left out.
std::vector<BusyBlock> HostBusyBlocks(DbConnection& conn, int64_t host_id, const HostEventTypes& host,
                                      Millis from, Millis to, int length_minutes, int64_t except_id = 0);

// The host's slot reservations open at `now` (until after it) starting in `starts`, as booked
// times (their event type's buffers apply); the reservation `except_id` is left out. A hold is
// one slot of its event type, so `starts` as for bookings (BookedStartRange) holds every hold that
// may conflict.
std::vector<BookedTime> HostHeldTimes(DbConnection& conn, int64_t host_id, TimeRange starts, Millis now,
                                      int64_t except_id = 0);
// Those that may conflict with a booking starting in [from, to), as busy blocks with buffers.
inline std::vector<BusyBlock> HostHeldBlocks(DbConnection& conn, int64_t host_id, const HostEventTypes& host,
                                             Millis from, Millis to, Millis now, int64_t except_id = 0) {
  return WithBuffers(HostHeldTimes(conn, host_id, BookedStartRange(from, to), now, except_id), host.buffers);
}

// The event type's fields in column order (title ... schedule_id, limit_day ... limit_year,
// disable_guests ... currency, metadata, booking_fields), followed by `tail`. An empty metadata
// object and empty booking questions are NULL.
std::vector<DbValue> FieldValues(const EventTypeFields& fields, std::initializer_list<DbValue> tail);

}  // namespace rendezvous::bookings
