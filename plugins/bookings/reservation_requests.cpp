#include "reservation_requests.hpp"

#include "booking_rows.hpp"
#include "event_type.hpp"
#include "field_checks.hpp"

namespace rendezvous::bookings {
namespace {

Result<int> MinutesMember(const Json& body, const char* name, int max) {
  const Json& v = body[name];
  if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > max) {
    return FieldInvalid(name, "must be a whole number of minutes from 1 to " + std::to_string(max));
  }
  return static_cast<int>(v.get<int64_t>());
}

}  // namespace

Result<ReserveRequest> ParseReserveBody(const Json& body, int max_minutes) {
  if (Status e = OnlyMembers(body, {"eventTypeId", "slotStart", "slotDuration", "reservationDuration"});
      !e.ok()) {
    return e;
  }
  ReserveRequest out;
  if (!Present(body, "eventTypeId")) return FieldInvalid("eventTypeId", "is required");
  const Json& id = body["eventTypeId"];
  if (!id.is_number_integer() || id.get<int64_t>() <= 0)
    return FieldInvalid("eventTypeId", "must be a positive integer");
  out.event_type_id = id.get<int64_t>();
  const char* const hint = "must be an ISO 8601 date-time with a zone, e.g. 2026-05-04T09:00:00Z";
  if (!Present(body, "slotStart")) return FieldInvalid("slotStart", "is required");
  const Json& start = body["slotStart"];
  if (!start.is_string() || start.get_ref<const std::string&>().size() > 64)
    return FieldInvalid("slotStart", hint);
  auto t = time::ParseIso(start.get<std::string>());
  if (!t) return FieldInvalid("slotStart", hint);
  out.slot_start = *t;
  if (Present(body, "slotDuration")) {
    Result<int> d = MinutesMember(body, "slotDuration", kMaxLengthMinutes);
    if (!d.ok()) return d.status();
    out.slot_duration = *d;
  }
  if (Present(body, "reservationDuration")) {
    Result<int> d = MinutesMember(body, "reservationDuration", max_minutes);
    if (!d.ok()) return d.status();
    out.reservation_minutes = *d;
  }
  return out;
}

Json ReservationJson(const SlotReservation& r) {
  return Json{{"eventTypeId", r.event_type_id},
              {"slotStart", time::FormatIso(r.start)},
              {"slotEnd", time::FormatIso(r.end)},
              {"slotDuration", (r.end - r.start) / time::kMillisPerMinute},
              {"reservationUid", r.uid},
              {"reservationDuration", r.minutes},
              {"reservationUntil", time::FormatIso(r.until)}};
}

bool IsReservationUid(const std::string& uid) {
  return IsUid(uid);
}

}  // namespace rendezvous::bookings
