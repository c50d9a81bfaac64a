// References other plugins record for a booking (DESIGN §9): what they made for it elsewhere — the
// Google Calendar event of a booking. The bookings plugin provides this service as
// "bookings.references" (PluginContext::Find from Start() on; absent when bookings is disabled).
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
};

}  // namespace rendezvous
