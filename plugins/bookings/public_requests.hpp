// The inputs of the public booking flow (docs/bookings.md "Booking a time"): the slots query and
// the create, cancel, reschedule and reopen bodies. Errors are 400 statuses naming the field as
// the client wrote it. Pure logic; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "booking.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::bookings {

constexpr size_t kMaxGuests = 10;
constexpr size_t kMaxMetadataKeys = 50;
constexpr size_t kMaxMetadataKeyChars = 40;
constexpr size_t kMaxMetadataValueChars = 500;
constexpr size_t kMaxLocationChars = 2048;
constexpr size_t kMaxLanguageChars = 35;
constexpr int kMaxSlotRangeDays = 62;
constexpr size_t kMaxIdempotencyKeyChars = 255;

// GET /v2/slots?eventTypeId&start&end&timeZone.
struct SlotsQuery {
  int64_t event_type_id = 0;
  time::Millis from = 0;  // inclusive
  time::Millis to = 0;    // exclusive
  time::Zone zone = time::Zone::Utc();
};
// `start`/`end`: ISO 8601 date-times with a zone, or dates "YYYY-MM-DD" in `timeZone` (a date
// `start` is that day's 00:00, a date `end` includes its whole day); end after start, at most 62
// days apart. `timeZone` defaults to UTC.
Result<SlotsQuery> ParseSlotsQuery(const std::multimap<std::string, std::string>& query);

// POST /v2/bookings `{start, eventTypeId, attendee:{name, email, timeZone, language?}, guests?,
// metadata?, location?, bookingFieldsResponses?, reservationUid?}`.
struct CreateRequest {
  time::Millis start = 0;
  int64_t event_type_id = 0;
  Attendee attendee;
  std::vector<std::string> guests;  // e-mails, distinct from each other and from the attendee's
  Json metadata = Json::object();
  std::optional<std::string> location;  // instead of the event type's
  // `bookingFieldsResponses` as given (an object, or null when absent): checked against the event
  // type's questions by the flow (CheckBookingResponses), which fills the two below.
  Json booking_fields_responses;
  Json responses = Json::object();   // the checked custom answers (Booking::responses)
  std::optional<std::string> notes;  // the notes answer: the booking's description
  // The slot reservation the booking turns into (its holder's proof); any string up to 255
  // characters: one that names no open reservation of the host is no reservation.
  std::optional<std::string> reservation_uid;
};
Result<CreateRequest> ParseCreateBody(const Json& body);

// POST /v2/bookings/{uid}/cancel `{cancellationReason?}`: the trimmed reason, nullopt when absent
// or blank.
Result<std::optional<std::string>> ParseCancelBody(const Json& body);

// POST /v2/bookings/{uid}/reschedule `{start, reschedulingReason?}`.
struct RescheduleRequest {
  time::Millis start = 0;
  std::optional<std::string> reason;
};
Result<RescheduleRequest> ParseRescheduleBody(const Json& body);

// An `Idempotency-Key` header value: 1..255 visible ASCII characters.
Status CheckIdempotencyKey(const std::string& key);

}  // namespace rendezvous::bookings
