#include "booking_reference_store.hpp"

#include <algorithm>

#include "booking_rows.hpp"
#include "rendezvous/text.hpp"

namespace rendezvous::bookings {
namespace {

Status CheckReference(const BookingReference& reference) {
  const bool ascii_type =
      !reference.type.empty() && reference.type.size() <= 64 &&
      std::all_of(reference.type.begin(), reference.type.end(), [](char c) { return c > 0x20 && c < 0x7f; });
  if (!ascii_type) return Status::Invalid("type", "a reference's type must be 1-64 visible ASCII characters");
  if (reference.event_uid.empty() || reference.event_uid.size() > 1024 ||
      !text::IsValidUtf8(reference.event_uid)) {
    return Status::Invalid("eventUid", "a reference's eventUid must be 1-1024 bytes of UTF-8");
  }
  if (reference.calendar_id &&
      (reference.calendar_id->size() > 1024 || !text::IsValidUtf8(*reference.calendar_id))) {
    return Status::Invalid("calendarId", "a reference's calendarId must be at most 1024 bytes of UTF-8");
  }
  return Status::Ok();
}

std::string ReferenceTime(const BookingReference& reference) {
  return time::FormatSql(reference.created_at ? reference.created_at : time::Now());
}

}  // namespace

BookingReferenceStore::BookingReferenceStore(Database& db) : db_(db) {}

Result<Json> BookingReferenceStore::ListReferences(const User& host, const std::string& uid) {
  std::optional<int64_t> host_id = db_.Run([&](DbConnection& conn) { return BookingHost(conn, uid); });
  if (!host_id || *host_id != host.id) return Status::NotFound("booking not found");
  Json data = Json::array();
  for (const BookingReference& r : List(uid)) {
    data.push_back({{"type", r.type},
                    {"eventUid", r.event_uid},
                    {"calendarId", r.calendar_id ? Json(*r.calendar_id) : Json(nullptr)},
                    {"createdAt", time::FormatIso(r.created_at)}});
  }
  return data;
}

Status BookingReferenceStore::Add(const std::string& uid, const BookingReference& reference) {
  if (Status invalid = CheckReference(reference); !invalid.ok()) return invalid;
  const uint64_t added = db_.Run([&](DbConnection& conn) {
    return conn.Exec(
        "INSERT INTO booking_references (booking_id, type, event_uid, calendar_id, created_at)"
        " SELECT id, ?, ?, ?, ? FROM bookings WHERE uid = ?",
        {reference.type, reference.event_uid, reference.calendar_id, ReferenceTime(reference), uid});
  });
  return added == 0 ? Status::NotFound("booking not found") : Status::Ok();
}

Status BookingReferenceStore::Move(const std::string& from_uid, const std::string& to_uid,
                            const BookingReference& reference) {
  if (Status invalid = CheckReference(reference); !invalid.ok()) return invalid;
  if (from_uid == to_uid) return Status::Invalid("uid", "a reference moves between two different bookings");
  return db_.Transaction([&](DbConnection& conn) -> Status {
    // Both bookings locked: two moves of one reference to a booking wait for each other instead of
    // both recording it.
    std::optional<int64_t> from_id;
    std::optional<int64_t> to_id;
    for (const DbRow& row : conn.Query(
             "SELECT id, uid FROM bookings WHERE uid IN (?, ?) ORDER BY id FOR UPDATE", {from_uid, to_uid})) {
      (row.String(2) == from_uid ? from_id : to_id) = row.Int(1);
    }
    if (!from_id || !to_id) return Status::NotFound("booking not found");
    // BINARY: the column's collation ignores case, an outside system's ids do not.
    conn.Exec("DELETE FROM booking_references WHERE booking_id = ? AND type = ? AND BINARY event_uid = ?",
              {*from_id, reference.type, reference.event_uid});
    if (!conn.QueryOne(
            "SELECT 1 FROM booking_references WHERE booking_id = ? AND type = ? AND BINARY event_uid = ?"
            " LIMIT 1",
            {*to_id, reference.type, reference.event_uid})) {
      conn.Exec(
          "INSERT INTO booking_references (booking_id, type, event_uid, calendar_id, created_at)"
          " VALUES (?, ?, ?, ?, ?)",
          {*to_id, reference.type, reference.event_uid, reference.calendar_id, ReferenceTime(reference)});
    }
    return Status::Ok();
  });
}

std::vector<BookingReference> BookingReferenceStore::List(const std::string& uid) {
  return db_.Run([&](DbConnection& conn) {
    std::vector<BookingReference> out;
    for (const DbRow& row : conn.Query(
             "SELECT r.type, r.event_uid, r.calendar_id, r.created_at FROM booking_references r"
             " JOIN bookings b ON b.id = r.booking_id WHERE b.uid = ? ORDER BY r.id",
             {uid})) {
      out.push_back({row.String(1), row.String(2), row.OptString(3), time::ParseSql(row.String(4)).value_or(0)});
    }
    return out;
  });
}

}  // namespace rendezvous::bookings
