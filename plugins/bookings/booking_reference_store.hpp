// The references of bookings in outside systems (a calendar event made for a booking, ...):
// recorded, moved to a rescheduled booking and listed, in table booking_references
// (booking_rows.hpp). Provided to other plugins as "bookings.references" (the host's
// BookingReferences) and listed to a booking's host by GET /v2/bookings/:uid/references.
// Thread-safe (each call borrows its own connection); calls may throw DatabaseUnavailable. The
// Database must outlive it.
#pragma once

#include <string>
#include <vector>

#include "event_type.hpp"
#include "rendezvous/contracts/booking_references.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/user.hpp"

namespace rendezvous::bookings {

class BookingReferenceStore final : public BookingReferences {
 public:
  explicit BookingReferenceStore(Database& db);

  // References of a booking of `host`: data = [{type, eventUid, calendarId, createdAt}], oldest
  // first; NotFound for another host's or an unknown booking.
  Result<Json> ListReferences(const User& host, const std::string& uid);

  // BookingReferences. A malformed reference is Invalid naming the field; an unknown booking
  // NotFound.
  Status Add(const std::string& uid, const BookingReference& reference) override;
  std::vector<BookingReference> List(const std::string& uid) override;
  Status Move(const std::string& from_uid, const std::string& to_uid, const BookingReference& reference) override;

 private:
  Database& db_;
};

}  // namespace rendezvous::bookings
