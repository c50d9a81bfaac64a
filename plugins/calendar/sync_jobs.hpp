// The calendar sync jobs (docs/calendar.md, "Bookings in Google Calendar"): the Google Calendar
// writes that booking events ask for, kept as rows so that a booking never waits for Google and
// nothing is lost when Google or the process is down.
//
// Two tables of the calendar plugin: `calendar_sync_jobs` (one row per write: booking uid, host,
// action, the event's contents, attempts, next_attempt_at, status pending|done|failed) and
// `calendar_booking_events` (which Google event a booking has: uid -> event id and, once written,
// the calendar holding it; a rescheduled booking's successor shares its event).
//
// Jobs of one Google event run one at a time, in order; jobs of different events run in parallel
// across workers and instances (claims use FOR UPDATE SKIP LOCKED and a lease). Stateless over the
// database: thread-safe. Calls may throw DatabaseUnavailable / DatabaseError.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "booking_sync_plan.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/outbox.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::calendar {

struct SyncJob {
  int64_t id = 0;
  std::string event_id;     // our id of the Google event
  std::string booking_uid;  // the booking the event belongs to
  int64_t user_id = 0;
  SyncAction action = SyncAction::kCreate;
  nlohmann::json event;  // see SyncPlan::event
  bool meet = false;
  int attempts = 0;  // this one included
  // Where the event was written before (kMove/kDelete; a kCreate that is repeated), if known.
  std::optional<std::string> calendar_id;
  // kMove: the host's other bookings that share this event (the rescheduled booking and the rest
  // of its chain of reschedules), newest first. Their booking references move to this booking
  // once the event is moved (jobs of one event run in order: a later booking of the chain has no
  // reference yet).
  std::vector<std::string> moved_from;
};

// What became of one calendar sync job's Google write.
struct SyncWrite {
  enum class Outcome {
    kDone,    // written (or nothing to write)
    kRetry,   // Google or the database failed for now
    kFailed,  // will not work as it is (a credential Google refuses, a request Google rejects)
  };
  Outcome outcome = Outcome::kRetry;
  std::string calendar_id;    // kDone: the calendar holding the event ("" when none)
  bool event_exists = false;  // kDone: the booking now has this event (a reference to record)
  std::string error;
};

class SyncJobStore {
 public:
  // Inside the outbox consumer's transaction: records the job `plan` asks for. Nothing for a host
  // without a Google credential, nor for a move or delete of a booking that has no event (it was
  // made before the calendar was connected); a move of such a booking creates the event instead.
  // Returns whether a job was written.
  // Of `users`, those with a Google credential (one query).
  static std::set<int64_t> WithCredential(DbConnection& tx, const std::set<int64_t>& users);
  static bool Enqueue(DbConnection& tx, const SyncPlan& plan);

  // Claims one due job whose Google event has no earlier unfinished job, counts the attempt and
  // leases it for `lease` (a worker that dies leaves it to be claimed again after that).
  static std::optional<SyncJob> Claim(Database& db, std::chrono::seconds lease);
  // The job is done; `calendar_id` is where the event now is ("" for a delete).
  static void Done(Database& db, const SyncJob& job, const std::string& calendar_id);
  // Try again after `delay`.
  static void Retry(Database& db, const SyncJob& job, std::chrono::milliseconds delay, const std::string& error);
  // Give up: the job stays as `failed` with its error (and is purged with the others).
  static void Fail(Database& db, const SyncJob& job, const std::string& error);

  static int64_t PendingCount(Database& db);
  // Deletes up to `limit` finished jobs older than `age`; returns how many.
  static int64_t PurgeFinished(Database& db, std::chrono::seconds age, int64_t limit);

  // The calendar holding `event_id` when it is the event of one of `user_id`'s bookings.
  static std::optional<std::string> BookingEventCalendar(DbConnection& c, int64_t user_id, const std::string& event_id);
};

// Inside the outbox consumer's transaction: the sync jobs a batch of booking events asks for, for
// the hosts that have a Google credential (one query finds them: most hosts have none). Google is
// never called here. Returns whether a job was written.
bool QueueBookingSyncJobs(DbConnection& tx, const std::vector<OutboxEvent>& batch, time::Millis now);

}  // namespace rendezvous::calendar
