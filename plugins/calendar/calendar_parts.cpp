#include "calendar_parts.hpp"

namespace rendezvous::calendar {

CalendarParts::CalendarParts(Database& db, Logger& logger, const GoogleApi& google,
                             const CalendarOptions& options, CalendarMetrics& metrics)
    : busy_cache(options.busy_cache_fresh, options.busy_cache_stale),
      trimmer(kTrimAfterBytes, kTrimWhenQuiet),
      credentials(db, logger, google, options.encryption_key, metrics),
      calendars(db, options.encryption_key),
      fetcher(options.ics_allow_private_networks, trimmer, metrics),
      connect(db, logger, google, credentials, busy_cache, options),
      feeds(db, options, fetcher, calendars, busy_cache),
      events(db, google, credentials, calendars),
      writer(google, credentials, calendars),
      busy(db, logger, google, options, credentials, calendars, fetcher, busy_cache, trimmer, metrics) {}

}  // namespace rendezvous::calendar
