// The user's calendars as this server knows them: the Google calendar list stored at connect time
// (calendar_google_calendars), the destination calendar of new events (calendar_destinations) and
// the ICS feeds (calendar_ics_feeds, URLs encrypted: private feed URLs are credentials).
//
// Stateless over the database: thread-safe; may throw DatabaseUnavailable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "json_fields.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::calendar {

struct GoogleCalendar {
  int64_t credential_id = 0;
  std::string external_id;
  std::string name;
  bool primary = false;
  bool read_only = false;
  std::string time_zone;
};

class CalendarList {
 public:
  CalendarList(Database& db, std::string encryption_key);

  // The user's Google calendars, in Google's order.
  std::vector<GoogleCalendar> LoadCalendars(int64_t user_id);
  // The external id of the user's destination calendar, if one is set.
  std::optional<std::string> LoadDestination(int64_t user_id);
  // Where new events of the user go: the destination calendar, else the primary one ("primary"
  // when no list is stored).
  std::string TargetCalendar(int64_t user_id);
  // A Google calendar as the API shows it (Cal.com's calendar plus isDestination and timeZone).
  static Json CalendarJson(const GoogleCalendar& c, const std::optional<std::string>& destination);
  // Cal.com's integration object of `type` ("google_calendar" or "ics-feed_calendar").
  static Json IntegrationJson(const std::string& type);

  // GET /v2/calendars, Cal.com's shape: {connectedCalendars: [{integration, credentialId, primary?,
  // calendars}], destinationCalendar} plus our flat list `calendars` (Google calendars, then ICS
  // feeds). A user with Google calendars and no destination gets the primary one stored as the
  // destination (where events already go); without Google calendars destinationCalendar is null.
  Result<Json> ListCalendars(int64_t user_id);
  // PUT /v2/destination-calendars: one of the user's writable Google calendars. Answers Cal.com's
  // {userId, integration, externalId, credentialId} plus id, name, primary and timeZone.
  Result<Json> SetDestination(int64_t user_id, const Json& body);

 private:
  Database& db_;
  const std::string encryption_key_;
};

}  // namespace rendezvous::calendar
