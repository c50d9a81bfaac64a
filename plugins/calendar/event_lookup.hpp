// Finds an event in the user's Google calendars (GET /v2/calendars/:calendar/event/:eventUid),
// searching only calendars the user connected, and the user's own bookings' events.
//
// Thread-safe; may throw DatabaseUnavailable. The references must outlive this object.
#pragma once

#include <cstdint>
#include <string>

#include "calendar_list.hpp"
#include "google_api.hpp"
#include "google_credentials.hpp"
#include "json_fields.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::calendar {

class EventLookup {
 public:
  EventLookup(Database& db, const GoogleApi& google, GoogleCredentials& credentials, CalendarList& calendars);

  // The event as the API shows it (event_mapping.hpp); 404 when none of the searched calendars
  // has it.
  Result<Json> GetEvent(int64_t user_id, const std::string& calendar, const std::string& event_uid);

 private:
  Database& db_;
  const GoogleApi& google_;
  GoogleCredentials& credentials_;
  CalendarList& calendars_;
};

}  // namespace rendezvous::calendar
