#include "event_type_service.hpp"

#include "booking_rows.hpp"
#include "schedule_rows.hpp"

namespace rendezvous::bookings {
namespace {

Status NotFoundEventType() {
  return Status::NotFound("event type not found");
}
Status DuplicateSlug(const std::string& slug) {
  return Status::Conflict("you already have an event type with the slug \"" + slug + "\"");
}
// A named schedule must be the owner's; its row is share-locked so it cannot be deleted before the
// event type naming it commits.
Status CheckSchedule(DbConnection& conn, int64_t owner_id, const std::optional<int64_t>& schedule_id) {
  if (!schedule_id || LoadSchedule(conn, owner_id, *schedule_id, ScheduleLock::kShare)) return Status::Ok();
  return FieldInvalid("scheduleId", "must be the id of one of your schedules, or null for your default");
}

}  // namespace

EventTypeService::EventTypeService(Database& db, UserDirectory& users) : db_(db), users_(users) {}

std::string EventTypeService::OwnerName(int64_t owner_id) {
  std::optional<User> owner = users_.FindUser(owner_id);
  return owner ? owner->username : std::string();
}

Json EventTypeService::List(int64_t owner_id) {
  const std::string owner = OwnerName(owner_id);
  return db_.Run([&](DbConnection& conn) {
    Json out = Json::array();
    for (const DbRow& row :
         conn.Query(std::string("SELECT ") + kEventTypeColumns + ", " + kEventTypeMetadataColumn + ", " +
                        kEventTypeFieldsColumn + " FROM event_types WHERE owner_id = ? ORDER BY id LIMIT " +
                        std::to_string(kMaxEventTypesPerUser),
                    {owner_id})) {
      out.push_back(EventTypeJson(EventTypeFromRow(row, true, true), owner));
    }
    return out;
  });
}

Result<Json> EventTypeService::Get(int64_t owner_id, int64_t id) {
  const std::string owner = OwnerName(owner_id);
  return db_.Run([&](DbConnection& conn) -> Result<Json> {
    auto et = LoadEventType(conn, owner_id, id, false);
    if (!et) return NotFoundEventType();
    return EventTypeJson(*et, owner);
  });
}

Result<Json> EventTypeService::Create(int64_t owner_id, const EventTypeFields& fields) {
  const std::string owner = OwnerName(owner_id);
  return db_.Transaction([&](DbConnection& conn) -> Result<Json> {
    std::optional<DbRow> count =
        conn.QueryOne("SELECT COUNT(*) FROM event_types WHERE owner_id = ?", {owner_id});
    if (count && count->Int(1) >= kMaxEventTypesPerUser) {
      return Status::Conflict("you have " + std::to_string(kMaxEventTypesPerUser) +
                              " event types, the most allowed");
    }
    if (Status e = CheckSchedule(conn, owner_id, fields.schedule_id); !e.ok()) return e;
    const std::string now = time::FormatSql(time::Now());
    std::vector<DbValue> values{owner_id};
    const std::vector<DbValue> rest = FieldValues(fields, {now, now});
    values.insert(values.end(), rest.begin(), rest.end());
    try {
      conn.Exec(
          "INSERT INTO event_types (owner_id, title, slug, length_minutes, description, locations,"
          " requires_confirmation, minimum_booking_notice, before_event_buffer, after_event_buffer, "
          "slot_interval, schedule_id, limit_day, limit_week, limit_month, limit_year, disable_guests,"
          " lock_time_zone_toggle, forward_params_success_redirect, success_redirect_url, currency, metadata,"
          " booking_fields, created_at, updated_at)"
          " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          values);
    } catch (const DuplicateKey&) {
      return DuplicateSlug(fields.slug);
    }
    EventType et{conn.LastInsertId(), owner_id, fields};
    return EventTypeJson(et, owner);
  });
}

Result<Json> EventTypeService::Update(int64_t owner_id, int64_t id, const Json& patch) {
  const std::string owner = OwnerName(owner_id);
  return db_.Transaction([&](DbConnection& conn) -> Result<Json> {
    auto et = LoadEventType(conn, owner_id, id, true);
    if (!et) return NotFoundEventType();
    if (Status e = ApplyEventTypePatch(patch, et->fields); !e.ok()) return e;
    if (patch.contains("scheduleId")) {
      if (Status e = CheckSchedule(conn, owner_id, et->fields.schedule_id); !e.ok()) return e;
    }
    try {
      conn.Exec(
          "UPDATE event_types SET title = ?, slug = ?, length_minutes = ?, description = ?, locations = ?,"
          " requires_confirmation = ?, minimum_booking_notice = ?, before_event_buffer = ?, "
          "after_event_buffer "
          "= ?,"
          " slot_interval = ?, schedule_id = ?, limit_day = ?, limit_week = ?, limit_month = ?, limit_year = "
          "?,"
          " disable_guests = ?, lock_time_zone_toggle = ?, forward_params_success_redirect = ?,"
          " success_redirect_url = ?, currency = ?, metadata = ?, booking_fields = ?, updated_at = ?"
          " WHERE id = ?",
          FieldValues(et->fields, {time::FormatSql(time::Now()), id}));
    } catch (const DuplicateKey&) {
      return DuplicateSlug(et->fields.slug);
    }
    return EventTypeJson(*et, owner);
  });
}

Result<Json> EventTypeService::Delete(int64_t owner_id, int64_t id) {
  const std::string owner = OwnerName(owner_id);
  return db_.Transaction([&](DbConnection& conn) -> Result<Json> {
    auto et = LoadEventType(conn, owner_id, id, true);
    if (!et) return NotFoundEventType();
    if (conn.QueryOne("SELECT 1 FROM bookings WHERE event_type_id = ? LIMIT 1", {id})) {
      return Status::Conflict("the event type has bookings; it cannot be deleted");
    }
    for (const DeleteListener& listener : delete_listeners_) listener(conn, id);
    conn.Exec("DELETE FROM event_types WHERE id = ?", {id});
    return EventTypeJson(*et, owner);
  });
}

std::optional<int64_t> EventTypeService::Owner(DbConnection& conn, int64_t id, bool lock) {
  std::optional<DbRow> row = conn.QueryOne(
      std::string("SELECT owner_id FROM event_types WHERE id = ?") + (lock ? " LOCK IN SHARE MODE" : ""),
      {id});
  if (!row) return std::nullopt;
  return row->Int("owner_id");
}

void EventTypeService::OnDelete(DeleteListener listener) {
  delete_listeners_.push_back(std::move(listener));
}

}  // namespace rendezvous::bookings
