// Google Calendar event -> the calendar event of spec §2.3 (DESIGN §7 and §9 "Calendar event
// mapping"). Pure: no I/O beyond reading zoneinfo files for time zones.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rendezvous::calendar {

// Maps one events.get resource. `calendar_time_zone` is the time zone of the calendar the event
// was found in (from calendarList); it is used for all-day events and events without a zone.
// Output fields: id, title, description, start{time,timeZone}, end{time,timeZone}, locations[],
// attendees[], status, hosts[], calendarEventOwner{email,name}, source "google".
// Fields Google leaves out map to "" (strings), false (booleans) or [] (lists), except the fields
// of a location (url, label, password, meetingCode, accessCode), which are left out (DESIGN §9).
nlohmann::json MapGoogleEvent(const nlohmann::json& event, const std::string& calendar_time_zone);

// Google attendee responseStatus -> ours: accepted->accepted, tentative->pending,
// declined->declined, needsAction->needsAction; anything else passes through ("" when absent).
std::string MapResponseStatus(const std::string& google);
// Google event status -> ours: confirmed->accepted, tentative->pending, cancelled->cancelled.
std::string MapEventStatus(const std::string& google);

}  // namespace rendezvous::calendar
