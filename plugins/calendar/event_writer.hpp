// Writes a booking's event in its host's Google Calendar: one calendar sync job (sync_jobs.hpp)
// at a time, for the sync worker.
//
// Thread-safe. The references must outlive this object.
#pragma once

#include "calendar_list.hpp"
#include "google_api.hpp"
#include "google_credentials.hpp"
#include "sync_jobs.hpp"

namespace rendezvous::calendar {

class EventWriter {
 public:
  EventWriter(const GoogleApi& google, GoogleCredentials& credentials, CalendarList& calendars);

  // Performs one calendar sync job against Google (insert, move or delete of the booking's event,
  // in the calendar it is in, else the destination calendar, else primary). Idempotent: the event
  // id is ours, so a job repeated after a lost answer or a crash never makes a second event.
  SyncWrite Write(const SyncJob& job);

 private:
  const GoogleApi& google_;
  GoogleCredentials& credentials_;
  CalendarList& calendars_;
};

}  // namespace rendezvous::calendar
