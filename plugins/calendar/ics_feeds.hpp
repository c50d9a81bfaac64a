// Saving a user's ICS feeds (POST /v2/calendars/ics-feed/save): each URL checked (https, no
// credentials, no private address unless allowed), downloaded and parsed once within the request's
// budget, then all stored together (URLs encrypted), at most kMaxIcsFeedsPerUser per user.
//
// Thread-safe; may throw DatabaseUnavailable. The references must outlive this object.
#pragma once

#include <cstdint>

#include "busy_cache.hpp"
#include "calendar_list.hpp"
#include "calendar_options.hpp"
#include "ics_fetcher.hpp"
#include "json_fields.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::calendar {

class IcsFeeds {
 public:
  // `busy_cache` forgets the user's busy times once feeds are saved; `calendars` lists the saved
  // feeds for the answer.
  IcsFeeds(Database& db, const CalendarOptions& options, IcsFetcher& fetcher, CalendarList& calendars,
           BusyCache& busy_cache);

  // `body` is {urls: [..], readOnly?}; answers Cal.com's credential object {id, type, userId,
  // teamId, appId, invalid} of the first saved feed (each feed is a credential), plus `calendars`:
  // the saved feeds as calendar objects.
  Result<Json> Save(int64_t user_id, const Json& body);
  // GET /v2/calendars/ics-feed/check: Ok when one of the user's feeds downloads as an iCalendar
  // file within the request's budget; else 400 ics_feed_not_working (also when none is saved).
  Status Check(int64_t user_id);

 private:
  Database& db_;
  const std::string encryption_key_;
  const bool allow_private_networks_;
  IcsFetcher& fetcher_;
  CalendarList& calendars_;
  BusyCache& busy_cache_;
};

}  // namespace rendezvous::calendar
