#include "sync_jobs.hpp"

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rendezvous::calendar {
namespace {

// Candidates read per claim: enough to get past jobs other workers hold at that moment.
constexpr int64_t kClaimCandidates = 16;
constexpr size_t kMaxErrorBytes = 1000;

struct Mapping {
  std::string event_id;
  std::optional<std::string> calendar_id;
};

std::optional<Mapping> FindMapping(DbConnection& tx, const std::string& booking_uid) {
  std::optional<DbRow> r =
      tx.QueryOne("SELECT event_id, calendar_id FROM calendar_booking_events WHERE booking_uid = ?", {booking_uid});
  if (!r) return std::nullopt;
  return Mapping{r->String(1), r->OptString(2)};
}

void SaveMapping(DbConnection& tx, const std::string& booking_uid, int64_t user_id, const Mapping& m) {
  tx.Exec(
      "INSERT INTO calendar_booking_events (booking_uid, user_id, event_id, calendar_id, created_at)"
      " VALUES (?, ?, ?, ?, UTC_TIMESTAMP(3))"
      " ON DUPLICATE KEY UPDATE event_id = VALUES(event_id), calendar_id = COALESCE(VALUES(calendar_id), calendar_id)",
      {booking_uid, user_id, m.event_id, m.calendar_id});
}

void InsertJob(DbConnection& tx, const SyncPlan& plan, SyncAction action, const std::string& booking_uid,
               const std::string& event_id) {
  tx.Exec(
      "INSERT INTO calendar_sync_jobs (event_id, booking_uid, user_id, action, event_json, meet, status, attempts,"
      " next_attempt_at, created_at, updated_at)"
      " VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))",
      {event_id, booking_uid, plan.user_id, SyncActionName(action),
       plan.event.is_null() ? std::string("{}") : plan.event.dump(), plan.meet});
}

std::string CutError(std::string s) {
  if (s.size() > kMaxErrorBytes) s.resize(kMaxErrorBytes);
  return s;
}

}  // namespace

std::set<int64_t> SyncJobStore::WithCredential(DbConnection& tx, const std::set<int64_t>& users) {
  std::set<int64_t> out;
  if (users.empty()) return out;
  std::string ids;
  for (int64_t id : users) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  // The ids are integers read from the outbox, spelled here by std::to_string.
  for (const DbRow& row :
       tx.QueryUnprepared("SELECT user_id FROM calendar_google_credentials WHERE user_id IN (" + ids + ")")) {
    out.insert(row.Int("user_id"));
  }
  return out;
}

bool SyncJobStore::Enqueue(DbConnection& tx, const SyncPlan& plan) {
  if (!tx.QueryOne("SELECT 1 FROM calendar_google_credentials WHERE user_id = ?", {plan.user_id})) return false;
  switch (plan.action) {
    case SyncAction::kDelete: {
      std::optional<Mapping> m = FindMapping(tx, plan.booking_uid);
      if (!m) return false;
      InsertJob(tx, plan, SyncAction::kDelete, plan.booking_uid, m->event_id);
      return true;
    }
    case SyncAction::kMove: {
      if (std::optional<Mapping> m = FindMapping(tx, plan.from_uid)) {
        SaveMapping(tx, plan.booking_uid, plan.user_id, *m);
        InsertJob(tx, plan, SyncAction::kMove, plan.booking_uid, m->event_id);
        return true;
      }
      break;  // the old booking has no event: make one for the new booking
    }
    case SyncAction::kCreate:
      break;
  }
  std::optional<Mapping> m = FindMapping(tx, plan.booking_uid);
  if (!m) {
    m = Mapping{GoogleEventIdFor(plan.booking_uid), std::nullopt};
    SaveMapping(tx, plan.booking_uid, plan.user_id, *m);
  }
  InsertJob(tx, plan, SyncAction::kCreate, plan.booking_uid, m->event_id);
  return true;
}

std::optional<SyncJob> SyncJobStore::Claim(Database& db, std::chrono::seconds lease) {
  return db.Transaction([&](DbConnection& tx) -> std::optional<SyncJob> {
    // A plain read first: a locking read with SKIP LOCKED would also skip the earlier job of the
    // same event that another worker holds, and so run two jobs of one event at once.
    std::vector<DbRow> candidates = tx.Query(
        "SELECT j.id FROM calendar_sync_jobs j WHERE j.status = 'pending' AND j.next_attempt_at <= UTC_TIMESTAMP(3)"
        " AND NOT EXISTS (SELECT 1 FROM calendar_sync_jobs p WHERE p.event_id = j.event_id"
        " AND p.status = 'pending' AND p.id < j.id)"
        " ORDER BY j.next_attempt_at, j.id LIMIT ?",
        {kClaimCandidates});
    for (const DbRow& candidate : candidates) {
      std::optional<DbRow> r = tx.QueryOne(
          "SELECT id, event_id, booking_uid, user_id, action, event_json, meet, attempts FROM calendar_sync_jobs"
          " WHERE id = ? AND status = 'pending' AND next_attempt_at <= UTC_TIMESTAMP(3) FOR UPDATE SKIP LOCKED",
          {candidate.Int(1)});
      if (!r) continue;
      SyncJob job;
      job.id = r->Int("id");
      job.event_id = r->String("event_id");
      job.booking_uid = r->String("booking_uid");
      job.user_id = r->Int("user_id");
      job.action = SyncActionFromName(r->String("action")).value_or(SyncAction::kCreate);
      job.event = nlohmann::json::parse(r->String("event_json"), nullptr, false);
      if (job.event.is_discarded()) job.event = nlohmann::json::object();
      job.meet = r->Bool("meet");
      job.attempts = static_cast<int>(r->Int("attempts")) + 1;
      tx.Exec(
          "UPDATE calendar_sync_jobs SET attempts = ?, next_attempt_at = UTC_TIMESTAMP(3) + INTERVAL ? SECOND,"
          " updated_at = UTC_TIMESTAMP(3) WHERE id = ?",
          {job.attempts, static_cast<int64_t>(lease.count()), job.id});
      std::optional<DbRow> where = tx.QueryOne(
          "SELECT calendar_id FROM calendar_booking_events WHERE event_id = ? AND calendar_id IS NOT NULL LIMIT 1",
          {job.event_id});
      if (where) job.calendar_id = where->String(1);
      if (job.action == SyncAction::kMove) {
        for (const DbRow& earlier : tx.Query("SELECT booking_uid FROM calendar_booking_events"
                                             " WHERE event_id = ? AND user_id = ? AND booking_uid <> ?"
                                             " ORDER BY created_at DESC, booking_uid",
                                             {job.event_id, job.user_id, job.booking_uid}))
          job.moved_from.push_back(earlier.String(1));
      }
      return job;
    }
    return std::nullopt;
  });
}

void SyncJobStore::Done(Database& db, const SyncJob& job, const std::string& calendar_id) {
  db.Transaction([&](DbConnection& tx) {
    tx.Exec("UPDATE calendar_sync_jobs SET status = 'done', last_error = '', updated_at = UTC_TIMESTAMP(3) WHERE id = ?",
            {job.id});
    if (!calendar_id.empty())
      tx.Exec("UPDATE calendar_booking_events SET calendar_id = ? WHERE event_id = ?", {calendar_id, job.event_id});
  });
}

void SyncJobStore::Retry(Database& db, const SyncJob& job, std::chrono::milliseconds delay, const std::string& error) {
  db.Run([&](DbConnection& c) {
    c.Exec(
        "UPDATE calendar_sync_jobs SET next_attempt_at = UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND, last_error = ?,"
        " updated_at = UTC_TIMESTAMP(3) WHERE id = ?",
        {static_cast<int64_t>(delay.count()) * 1000, CutError(error), job.id});
  });
}

void SyncJobStore::Fail(Database& db, const SyncJob& job, const std::string& error) {
  db.Run([&](DbConnection& c) {
    c.Exec("UPDATE calendar_sync_jobs SET status = 'failed', last_error = ?, updated_at = UTC_TIMESTAMP(3) WHERE id = ?",
           {CutError(error), job.id});
  });
}

int64_t SyncJobStore::PendingCount(Database& db) {
  return db.Run([](DbConnection& c) {
    std::optional<DbRow> r = c.QueryOne("SELECT COUNT(*) FROM calendar_sync_jobs WHERE status = 'pending'");
    return r ? r->Int(1) : 0;
  });
}

int64_t SyncJobStore::PurgeFinished(Database& db, std::chrono::seconds age, int64_t limit) {
  return db.Run([&](DbConnection& c) {
    return static_cast<int64_t>(
        c.Exec("DELETE FROM calendar_sync_jobs WHERE status IN ('done', 'failed')"
               " AND updated_at < UTC_TIMESTAMP(3) - INTERVAL ? SECOND LIMIT ?",
               {static_cast<int64_t>(age.count()), limit}));
  });
}

std::optional<std::string> SyncJobStore::BookingEventCalendar(DbConnection& c, int64_t user_id,
                                                             const std::string& event_id) {
  std::optional<DbRow> r = c.QueryOne(
      "SELECT calendar_id FROM calendar_booking_events WHERE event_id = ? AND user_id = ? AND calendar_id IS NOT NULL"
      " LIMIT 1",
      {event_id, user_id});
  if (!r) return std::nullopt;
  return r->String(1);
}

bool QueueBookingSyncJobs(DbConnection& tx, const std::vector<OutboxEvent>& batch, time::Millis now) {
  // With no calendar connected at all (a deployment that does not use Google), nothing is read of
  // the events (the consumer is handed none of their texts). Else the texts are read, the host
  // from each, and only the events of hosts with a calendar connected are parsed whole.
  if (!tx.QueryOne("SELECT 1 FROM calendar_google_credentials LIMIT 1")) return false;
  std::vector<int64_t> unread;
  for (const OutboxEvent& e : batch) {
    if (!e.payload && e.payload_text.empty()) unread.push_back(e.id);
  }
  const std::unordered_map<int64_t, std::string> read = OutboxPayloads(tx, unread);
  const auto text_of = [&read](const OutboxEvent& e) -> std::string_view {
    if (!e.payload_text.empty()) return e.payload_text;
    auto it = read.find(e.id);
    return it == read.end() ? std::string_view() : std::string_view(it->second);
  };
  const auto host_of = [&text_of](const OutboxEvent& e) {
    return e.payload ? BookingEventHost(*e.payload) : BookingEventHostInText(text_of(e));
  };
  std::vector<std::optional<int64_t>> event_hosts;
  event_hosts.reserve(batch.size());
  std::set<int64_t> hosts;
  for (const OutboxEvent& e : batch) {
    event_hosts.push_back(host_of(e));
    if (event_hosts.back()) hosts.insert(*event_hosts.back());
  }
  const std::set<int64_t> connected = SyncJobStore::WithCredential(tx, hosts);
  bool queued = false;
  for (size_t i = 0; i < batch.size(); ++i) {
    const OutboxEvent& e = batch[i];
    if (!event_hosts[i] || connected.count(*event_hosts[i]) == 0) continue;
    const nlohmann::json parsed =
        e.payload ? nlohmann::json() : nlohmann::json::parse(text_of(e), nullptr, false);
    if (std::optional<SyncPlan> plan = PlanBookingSync(e.type, e.payload ? *e.payload : parsed, now))
      queued = SyncJobStore::Enqueue(tx, *plan) || queued;
  }
  return queued;
}

}  // namespace rendezvous::calendar
