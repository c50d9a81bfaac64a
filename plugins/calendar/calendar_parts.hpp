// The calendar plugin's logic classes, built together over one database, Google client, set of
// options and metrics, each given only what its job needs. Members are built in the order
// declared and destroyed in reverse: the busy times' refresh threads stop before anything they
// use goes. The plugin shares one CalendarParts between its routes, its busy-time source and its
// sync worker.
//
// `db`, `logger`, `google` and `metrics` must outlive this object.
#pragma once

#include "busy_cache.hpp"
#include "busy_times.hpp"
#include "calendar_list.hpp"
#include "calendar_metrics.hpp"
#include "calendar_options.hpp"
#include "event_lookup.hpp"
#include "event_writer.hpp"
#include "google_api.hpp"
#include "google_connection.hpp"
#include "google_credentials.hpp"
#include "ics_feeds.hpp"
#include "ics_fetcher.hpp"
#include "refresh_pool.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"

namespace rendezvous::calendar {

struct CalendarParts {
  CalendarParts(Database& db, Logger& logger, const GoogleApi& google, const CalendarOptions& options,
                CalendarMetrics& metrics);
  CalendarParts(const CalendarParts&) = delete;
  CalendarParts& operator=(const CalendarParts&) = delete;

  BusyCache busy_cache;
  MemoryTrimmer trimmer;
  GoogleCredentials credentials;
  CalendarList calendars;
  IcsFetcher fetcher;
  GoogleConnection connect;
  IcsFeeds feeds;
  EventLookup events;
  EventWriter writer;
  BusyTimes busy;
};

}  // namespace rendezvous::calendar
