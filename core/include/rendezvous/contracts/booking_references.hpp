// References other plugins record for a booking (DESIGN §9): what they made for it elsewhere — the
// Google Calendar event of a booking. The bookings plugin provides this service as
// "bookings.references" (PluginContext::Find from Start() on; absent when bookings is disabled).
// A reference is never removed on its own: a cancelled booking keeps the reference of its deleted
// event. It only changes hands when what it names goes on as another booking's (Move).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rendezvous/status.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous {

struct BookingReference {
  std::string type;                        // "google_calendar"
  std::string event_uid;                   // the outside system's id of what was made
  std::optional<std::string> calendar_id;  // where it was made, when that matters
  time::Millis created_at = 0;             // 0: now
};

// Thread-safe. Calls may throw DatabaseUnavailable.
class BookingReferences {
 public:
  virtual ~BookingReferences() = default;
  // Records a reference for the booking `uid`; NotFound when there is no such booking, Invalid
  // when a field is empty or too long (type ≤ 64 ASCII, eventUid and calendarId ≤ 1024 bytes).
  virtual Status Add(const std::string& uid, const BookingReference& reference) = 0;
  // The booking's references, oldest first (none when there is no such booking).
  virtual std::vector<BookingReference> List(const std::string& uid) = 0;
  // Hands the reference {reference.type, reference.event_uid} over from booking `from_uid` to
  // booking `to_uid` in one transaction — a rescheduled booking's Google event that its successor
  // takes over: afterwards `from_uid` lists no reference of that type and eventUid, and `to_uid`
  // lists it (recorded with `reference`'s calendarId and createdAt when it had none, left as it was
  // when it had it already). `from_uid` need not hold the reference, so a repeated
  // Move changes nothing. NotFound when either booking does not exist, Invalid as for Add or when
  // the two uids are the same; nothing is changed then.
  virtual Status Move(const std::string& from_uid, const std::string& to_uid,
                      const BookingReference& reference) = 0;
};

}  // namespace rendezvous
