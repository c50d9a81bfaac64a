#include "schedule_service.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "field_checks.hpp"
#include "schedule_rows.hpp"

namespace rendezvous::bookings {
namespace {

// The user's field of /v2/me this service answers and PATCH /v2/me changes.
constexpr const char* kDefaultScheduleField = "defaultScheduleId";

Status NotFoundSchedule() {
  return Status::NotFound("schedule not found");
}

// A concurrent change took the default first (the unique key refused a second one): thrown out of
// the transaction so it rolls back, and answered as a conflict.
struct ConcurrentDefault {};

Status ConcurrentChange() {
  return Status::Conflict("your schedules changed at the same time; try again");
}

// Locks the owner's schedules, so changes of one owner's schedules (and their default) take turns.
// Answers their ids, oldest first.
std::vector<int64_t> LockOwnerSchedules(DbConnection& conn, int64_t owner_id) {
  std::vector<int64_t> ids;
  for (const DbRow& row :
       conn.Query("SELECT id FROM schedules WHERE owner_id = ? ORDER BY id FOR UPDATE", {owner_id})) {
    ids.push_back(row.Int(1));
  }
  return ids;
}

void ClearDefault(DbConnection& conn, int64_t owner_id) {
  conn.Exec("UPDATE schedules SET default_owner_id = NULL WHERE default_owner_id = ?", {owner_id});
}

}  // namespace

ScheduleService::ScheduleService(Database& db) : db_(db) {}

Json ScheduleService::List(int64_t owner_id) {
  return db_.Run([&](DbConnection& conn) {
    Json out = Json::array();
    for (const DbRow& row : conn.Query(std::string("SELECT ") + kScheduleColumns +
                                           " FROM schedules WHERE owner_id = ? ORDER BY id LIMIT " +
                                           std::to_string(kMaxSchedulesPerUser),
                                       {owner_id})) {
      out.push_back(ScheduleJson(ScheduleFromRow(row)));
    }
    return out;
  });
}

Result<Json> ScheduleService::Get(int64_t owner_id, int64_t id) {
  return db_.Run([&](DbConnection& conn) -> Result<Json> {
    std::optional<Schedule> s = LoadSchedule(conn, owner_id, id);
    if (!s) return NotFoundSchedule();
    return ScheduleJson(*s);
  });
}

std::optional<int64_t> ScheduleService::DefaultScheduleId(int64_t user_id) {
  return db_.Run([&](DbConnection& conn) -> std::optional<int64_t> {
    std::optional<DbRow> row =
        conn.QueryOne("SELECT id FROM schedules WHERE default_owner_id = ?", {user_id});
    if (!row) return std::nullopt;
    return row->Int(1);
  });
}

Status ScheduleService::MakeDefault(DbConnection& tx, int64_t user_id, int64_t schedule_id) {
  const std::vector<int64_t> ids = LockOwnerSchedules(tx, user_id);
  if (std::find(ids.begin(), ids.end(), schedule_id) == ids.end()) return NotFoundSchedule();
  ClearDefault(tx, user_id);
  tx.Exec("UPDATE schedules SET default_owner_id = ?, updated_at = ? WHERE id = ?",
          {user_id, time::FormatSql(time::Now()), schedule_id});
  return Status::Ok();
}

Status ScheduleService::CreateDefault(DbConnection& tx, const User& user) {
  LockOwnerSchedules(tx, user.id);
  if (LoadDefaultSchedule(tx, user.id)) return Status::Ok();
  const Schedule s = ImplicitDefaultSchedule(user);
  const std::string now = time::FormatSql(time::Now());
  std::vector<DbValue> values{s.owner_id};
  const std::vector<DbValue> rest = ScheduleValues(s, {now, now});
  values.insert(values.end(), rest.begin(), rest.end());
  tx.Exec(
      "INSERT INTO schedules (owner_id, name, time_zone, default_owner_id, availability, overrides,"
      " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      values);
  return Status::Ok();
}

std::vector<std::string> ScheduleService::Fields() const {
  return {kDefaultScheduleField};
}

void ScheduleService::AddFields(const User& user, Json& user_json) {
  const std::optional<int64_t> id = DefaultScheduleId(user.id);
  user_json[kDefaultScheduleField] = id ? Json(*id) : Json(nullptr);
}

Status ScheduleService::CheckChange(const Json& fields) {
  const Json& value = fields.at(kDefaultScheduleField);
  // An unsigned value above INT64_MAX reads as negative here.
  if (!value.is_number_integer() || value.get<int64_t>() <= 0)
    return Status::Invalid(kDefaultScheduleField, "defaultScheduleId must be a schedule's id");
  return Status::Ok();
}

Status ScheduleService::ApplyChange(DbConnection& tx, int64_t user_id, const Json& fields) {
  Status made = MakeDefault(tx, user_id, fields.at(kDefaultScheduleField).get<int64_t>());
  if (made.code() == ErrorCode::kNotFound)
    return Status::Invalid(kDefaultScheduleField, "you have no schedule with this id");
  return made;
}

Json ScheduleService::GetDefault(const User& owner) {
  return db_.Run([&](DbConnection& conn) {
    std::optional<Schedule> stored = LoadDefaultSchedule(conn, owner.id);
    return ScheduleJson(stored ? *stored : ImplicitDefaultSchedule(owner));
  });
}

Result<Json> ScheduleService::Create(const Schedule& schedule) try {
  return db_.Transaction([&](DbConnection& conn) -> Result<Json> {
    Schedule s = schedule;
    const std::vector<int64_t> ids = LockOwnerSchedules(conn, s.owner_id);
    if (ids.size() >= static_cast<size_t>(kMaxSchedulesPerUser)) {
      return Status::Conflict("you have " + std::to_string(kMaxSchedulesPerUser) +
                              " schedules, the most allowed");
    }
    if (ids.empty() || !LoadDefaultSchedule(conn, s.owner_id)) s.is_default = true;
    if (s.is_default) ClearDefault(conn, s.owner_id);
    const std::string now = time::FormatSql(time::Now());
    std::vector<DbValue> values{s.owner_id};
    const std::vector<DbValue> rest = ScheduleValues(s, {now, now});
    values.insert(values.end(), rest.begin(), rest.end());
    try {
      conn.Exec(
          "INSERT INTO schedules (owner_id, name, time_zone, default_owner_id, availability, overrides,"
          " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
          values);
    } catch (const DuplicateKey&) {
      throw ConcurrentDefault{};
    }
    s.id = conn.LastInsertId();
    return ScheduleJson(s);
  });
} catch (const ConcurrentDefault&) {
  return ConcurrentChange();
}

Result<Json> ScheduleService::Update(int64_t owner_id, int64_t id, const Json& patch) try {
  return db_.Transaction([&](DbConnection& conn) -> Result<Json> {
    LockOwnerSchedules(conn, owner_id);
    std::optional<Schedule> s = LoadSchedule(conn, owner_id, id, ScheduleLock::kUpdate);
    if (!s) return NotFoundSchedule();
    const bool was_default = s->is_default;
    if (Status e = ApplySchedulePatch(patch, *s); !e.ok()) return e;
    if (was_default && !s->is_default) {
      return FieldInvalid(
          "isDefault", "cannot be false on the default schedule; make another schedule the default instead");
    }
    if (s->is_default && !was_default) ClearDefault(conn, owner_id);
    try {
      conn.Exec(
          "UPDATE schedules SET name = ?, time_zone = ?, default_owner_id = ?, availability = ?,"
          " overrides = ?, updated_at = ? WHERE id = ?",
          ScheduleValues(*s, {time::FormatSql(time::Now()), id}));
    } catch (const DuplicateKey&) {
      throw ConcurrentDefault{};
    }
    return ScheduleJson(*s);
  });
} catch (const ConcurrentDefault&) {
  return ConcurrentChange();
}

Result<Json> ScheduleService::Delete(int64_t owner_id, int64_t id) {
  return db_.Transaction([&](DbConnection& conn) -> Result<Json> {
    const std::vector<int64_t> ids = LockOwnerSchedules(conn, owner_id);
    std::optional<Schedule> s = LoadSchedule(conn, owner_id, id, ScheduleLock::kUpdate);
    if (!s) return NotFoundSchedule();
    if (std::optional<DbRow> named =
            conn.QueryOne("SELECT COUNT(*) FROM event_types WHERE schedule_id = ?", {id});
        named && named->Int(1) > 0) {
      const int64_t n = named->Int(1);
      return Status::Conflict(std::to_string(n) + (n == 1 ? " event type uses" : " event types use") +
                              " this schedule; give " + (n == 1 ? "it" : "them") +
                              " another schedule before deleting it");
    }
    conn.Exec("DELETE FROM schedules WHERE id = ?", {id});
    if (s->is_default) {
      for (int64_t other : ids) {
        if (other == id) continue;
        conn.Exec("UPDATE schedules SET default_owner_id = ? WHERE id = ?", {owner_id, other});
        break;
      }
    }
    return ScheduleJson(*s);
  });
}

}  // namespace rendezvous::bookings
