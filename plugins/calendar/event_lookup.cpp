#include "event_lookup.hpp"

#include <algorithm>

#include "calendar_options.hpp"
#include "event_mapping.hpp"
#include "sync_jobs.hpp"
#include "url_policy.hpp"

namespace rendezvous::calendar {

EventLookup::EventLookup(Database& db, const GoogleApi& google, GoogleCredentials& credentials, CalendarList& calendars)
    : db_(db), google_(google), credentials_(credentials), calendars_(calendars) {}

Result<Json> EventLookup::GetEvent(int64_t user_id, const std::string& calendar, const std::string& event_uid) {
  if (calendar != "google") return Status::Invalid("calendar", "calendar must be google");
  if (event_uid.empty() || event_uid.size() > kMaxEventUidLength || HasControlOrSpace(event_uid))
    return Status::Invalid("eventUid", "eventUid is empty, too long or has spaces");
  const Status not_found = Status::NotFound("no event with this eventUid in your calendars");
  std::vector<GoogleCalendar> calendars = calendars_.LoadCalendars(user_id);
  if (calendars.empty()) return not_found;

  // Search order (DESIGN §7): the calendar holding the event of one of the caller's bookings (its
  // booking reference), then the destination calendar, then the primary ones; only calendars the
  // caller connected, and the caller's own bookings' events, are searched.
  std::vector<std::string> order;
  const std::optional<std::string> booking_calendar =
      db_.Run([&](DbConnection& c) { return SyncJobStore::BookingEventCalendar(c, user_id, event_uid); });
  if (booking_calendar) {
    order.push_back(*booking_calendar);
    if (std::none_of(calendars.begin(), calendars.end(),
                     [&](const GoogleCalendar& c) { return c.external_id == *booking_calendar; }))
      calendars.push_back(GoogleCalendar{0, *booking_calendar, "", false, false, ""});
  }
  if (std::optional<std::string> destination = calendars_.LoadDestination(user_id)) order.push_back(*destination);
  for (const GoogleCalendar& c : calendars) {
    if (c.primary) order.push_back(c.external_id);
  }
  std::vector<const GoogleCalendar*> search;
  for (const std::string& id : order) {
    auto it = std::find_if(calendars.begin(), calendars.end(),
                           [&](const GoogleCalendar& c) { return c.external_id == id; });
    if (it == calendars.end()) continue;
    if (std::find(search.begin(), search.end(), &*it) == search.end()) search.push_back(&*it);
  }
  if (search.empty()) return not_found;

  auto loaded = credentials_.Load(user_id);
  if (!loaded.ok()) return loaded.status();
  std::optional<GoogleCredential>& cred = *loaded;
  if (!cred) return not_found;
  for (const GoogleCalendar* c : search) {
    auto call = credentials_.WithGoogle(
        *cred, [&](const std::string& token) { return google_.GetEvent(token, c->external_id, event_uid); });
    if (!call.ok()) return call.status();
    const GoogleCall& r = *call;
    if (r.not_found() || (r.transport == FetchOutcome::kOk && r.status == 403)) continue;
    if (!r.ok()) return GoogleFailure(r, "the event lookup");
    return MapGoogleEvent(r.body, c->time_zone);
  }
  return not_found;
}

}  // namespace rendezvous::calendar
