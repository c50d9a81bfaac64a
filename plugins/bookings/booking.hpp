// Bookings (DESIGN §9): their states and the owner's moves between them, the title, the JSON the
// API (and every booking event) shows, and the checks of the owner-facing request bodies and list
// filters. Pure logic; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "field_checks.hpp"
#include "iso_time.hpp"
#include "rendezvous/identity.hpp"

namespace rendezvous::bookings {

using Json = nlohmann::json;

enum class BookingStatus { kAccepted, kPending, kCancelled, kRejected, kCompleted };

std::string_view StatusName(BookingStatus status);
std::optional<BookingStatus> ParseStatus(std::string_view name);

// What can happen to an existing booking here. Create, cancel, reschedule and reopen belong to
// the public booking flow (a later issue).
enum class BookingAction {
  kConfirm,     // owner: pending -> accepted            BOOKING_CONFIRMED
  kDecline,     // owner: pending -> rejected            BOOKING_REJECTED
  kMarkAbsent,  // owner: accepted|completed, started; status unchanged   BOOKING_NO_SHOW
  kComplete,    // completion sweep: accepted, ended -> completed          BOOKING_COMPLETED
};

// nullopt when `action` may be applied to a booking in `from` (`started`: its start has passed,
// `ended`: its end has passed); else why not (answered as 409).
std::optional<std::string> CheckTransition(BookingStatus from, BookingAction action, bool started,
                                           bool ended);
// The status after an allowed action.
BookingStatus StatusAfter(BookingStatus from, BookingAction action);
// The outbox event type (webhook trigger) of an action.
const char* TriggerFor(BookingAction action);

struct Attendee {
  std::string name;
  std::string email;
  std::string time_zone = "UTC";
  bool absent = false;
};

struct Booking {
  int64_t id = 0;
  std::string uid;
  int64_t event_type_id = 0;
  int64_t host_id = 0;  // the event type's owner when the booking was made
  std::string title;
  std::string description;
  BookingStatus status = BookingStatus::kAccepted;
  Millis start = 0;
  Millis end = 0;
  int duration = 0;  // minutes
  std::vector<Attendee> attendees;
  std::optional<std::string> location;
  Json metadata = Json::object();
  std::optional<std::string> cancellation_reason;  // also the decline reason of a rejected booking
  std::optional<std::string> rescheduled_from_uid;
  std::optional<std::string> rescheduled_to_uid;
  bool host_absent = false;  // recorded by mark-absent; DESIGN §9's shape has no place for it
  Millis created_at = 0;
};

// "<event type title> between <organizer name> and <attendee name>".
std::string BookingTitle(std::string_view event_type_title, std::string_view organizer_name,
                         std::string_view attendee_name);

// The booking as the API shows it: `{id, uid, title, description, status, start, end, duration,
// eventTypeId, attendees:[{name, email, timeZone, absent}], hosts:[{id, name, email, timeZone}],
// location, metadata, cancellationReason, rescheduledFromUid, rescheduledToUid, createdAt}`.
// `host` is the user of booking.host_id.
Json BookingJson(const Booking& booking, const User& host);
// The outbox payload of a booking event: {"triggerEvent", "createdAt", "payload": booking JSON}.
Json EventEnvelope(std::string_view trigger, Millis created_at, const Json& booking_json);

constexpr int kDefaultTake = 100;
constexpr int kMaxTake = 250;
constexpr int64_t kMaxSkip = 1000000;

// GET /v2/bookings filters.
struct ListQuery {
  std::vector<BookingStatus> statuses;  // empty: any
  std::optional<Millis> after_start;    // start >= after_start
  std::optional<Millis> before_end;     // end <= before_end
  std::optional<int64_t> event_type_id;
  int64_t skip = 0;
  int take = kDefaultTake;
};
// Reads `status` (comma list), `afterStart`, `beforeEnd` (ISO 8601), `eventTypeId`, `skip`
// (0..1000000), `take` (1..250). Other parameters are ignored; a repeated one is an error.
std::optional<FieldError> ParseListQuery(const std::multimap<std::string, std::string>& query,
                                         ListQuery& out);

constexpr size_t kMaxReasonChars = 1000;
constexpr size_t kMaxAbsentAttendees = 100;
constexpr size_t kMaxNameChars = 255;

// `{}` (confirm): any member is refused.
std::optional<FieldError> ParseConfirmBody(const Json& body);
// `{reason?}` (decline).
std::optional<FieldError> ParseDeclineBody(const Json& body, std::optional<std::string>& reason);

struct AbsentMarks {
  std::optional<bool> host;
  std::vector<std::pair<std::string, bool>> attendees;  // email, absent
};
// `{host?: bool, attendees?: [{email, absent}]}`; at least one of the two.
std::optional<FieldError> ParseMarkAbsentBody(const Json& body, AbsentMarks& out);
// Applies marks to a booking; a FieldError names an e-mail that is not one of its attendees.
// Returns whether any mark set someone absent.
std::optional<FieldError> ApplyAbsentMarks(const AbsentMarks& marks, Booking& booking, bool& marked_absent);

// Attendee of `admin booking import`: name 1..255 characters, a plausible e-mail.
std::optional<FieldError> CheckAttendee(const std::string& name, const std::string& email);

}  // namespace rendezvous::bookings
