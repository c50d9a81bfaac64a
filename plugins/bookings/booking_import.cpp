#include "booking_import.hpp"

#include "booking_events.hpp"
#include "booking_rows.hpp"
#include "rendezvous/crypto.hpp"

namespace rendezvous::bookings {
namespace {

constexpr Millis kLatestImportStart = 253370764800000;  // 9999-01-01T00:00:00Z

}  // namespace

BookingImport::BookingImport(UserDirectory& users, std::shared_ptr<HostWrites> writes)
    : users_(users), writes_(std::move(writes)) {}

Result<Json> BookingImport::Import(const ImportRequest& r) {
  std::optional<User> user = users_.FindUser(r.user_id);
  if (!user) return Status::NotFound("user " + std::to_string(r.user_id) + " not found");
  // Imports bring over what another system holds, far-future bookings included: max_days_ahead is
  // the public API's rule. Only a start whose booking could end past the year 9999 is refused.
  if (r.start >= kLatestImportStart) {
    return Status::Invalid("start", "--start must be before 9999-01-01T00:00:00Z");
  }
  return writes_->Change(r.user_id, [&](HostChange& change) -> Result<Json> {
    DbConnection& conn = change.conn();
    auto et = LoadEventType(conn, r.user_id, r.event_type_id, true);
    if (!et) {
      return Status::NotFound("event type " + std::to_string(r.event_type_id) +
                              " not found among the event types of user " + std::to_string(r.user_id));
    }
    const Millis now = time::Now();
    Booking b;
    b.uid = crypto::RandomToken(16);
    b.event_type_id = et->id;
    b.event_type_slug = et->fields.slug;
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
    if (BlocksTime(b.status)) change.Booked(BookedTime{b.start, b.end, b.event_type_id, b.id});
    return BookingJson(b, *user);
  });
}

}  // namespace rendezvous::bookings
