// The owner-facing inputs about bookings: the list filters of GET /v2/bookings, the bodies of
// confirm, decline and mark-absent, and the attendee of `admin booking import`. Errors are
// FieldInvalid statuses naming the field. Pure logic; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "booking.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::bookings {

constexpr int kDefaultTake = 100;
constexpr int kMaxTake = 250;
constexpr int64_t kMaxSkip = 1000000;

// Cal.com's status filters of its bookings list, read at the time of the request: `upcoming`
// (accepted or pending, ending later), `unconfirmed` (pending, ending later), `past` (ended, not
// cancelled or rejected), `recurring` (recurring bookings: there are none). `cancelled` is read as
// DESIGN §9's state (Cal.com's would also list the rejected ones).
enum class ListPeriod { kUpcoming, kUnconfirmed, kPast, kRecurring };
enum class SortOrder { kAsc, kDesc };

constexpr size_t kMaxListStatuses = 50;
constexpr size_t kMaxListEventTypeIds = 100;
constexpr size_t kMaxListParamChars = 2000;

// GET /v2/bookings filters. A booking is listed when it is in one of `statuses` or one of
// `periods` (both empty: any) and matches every other filter given.
struct ListQuery {
  std::vector<BookingStatus> statuses;  // DESIGN §9's states
  std::vector<ListPeriod> periods;      // Cal.com's
  std::optional<Millis> after_start;    // start >= after_start
  std::optional<Millis> before_end;     // end <= before_end
  std::optional<int64_t> event_type_id;
  std::vector<int64_t> event_type_ids;        // empty: any
  std::optional<std::string> attendee_email;  // an attendee (or guest) with this e-mail, any case
  std::optional<std::string> attendee_name;   // an attendee (or guest) of this name, any case
  // Order: by start, end, creation (those given, in that precedence), then id; none given: start
  // ascending, then id.
  std::optional<SortOrder> sort_start;
  std::optional<SortOrder> sort_end;
  std::optional<SortOrder> sort_created;
  int64_t skip = 0;
  int take = kDefaultTake;
};
// Reads `status` (comma list of DESIGN §9's states and Cal.com's upcoming, unconfirmed, past,
// recurring; may be repeated, also as `status[]`), `afterStart`, `beforeEnd` (ISO 8601),
// `eventTypeId`, `eventTypeIds` (comma list of ids; may be repeated, also as `eventTypeIds[]`),
// `attendeeEmail`, `attendeeName` (trimmed; blank: no filter), `sortStart`, `sortEnd`,
// `sortCreated` (asc | desc), `skip` (0..1000000), `take` (1..250). Other parameters are ignored;
// repeating another one is an error.
Result<ListQuery> ParseListQuery(const std::multimap<std::string, std::string>& query);

constexpr size_t kMaxReasonChars = 1000;
constexpr size_t kMaxAbsentAttendees = 100;
constexpr size_t kMaxNameChars = 255;
constexpr size_t kMaxEmailChars = 320;

// `{}` (confirm): any member is refused.
Status ParseConfirmBody(const Json& body);
// `{reason?}` (decline): the trimmed reason, nullopt when absent, null or blank.
Result<std::optional<std::string>> ParseDeclineBody(const Json& body);

struct AbsentMarks {
  std::optional<bool> host;
  std::vector<std::pair<std::string, bool>> attendees;  // email, absent
};
// `{host?: bool, attendees?: [{email, absent}]}`; at least one of the two.
Result<AbsentMarks> ParseMarkAbsentBody(const Json& body);
// Applies marks to a booking; an e-mail that is not one of its attendees is refused (and nothing
// is changed). Answers whether any mark set someone absent.
Result<bool> ApplyAbsentMarks(const AbsentMarks& marks, Booking& booking);

// Attendee of `admin booking import`: name 1..255 characters, a plausible e-mail. The fields are
// named after the command's options ("attendee-name", "attendee-email").
Status CheckAttendee(const std::string& name, const std::string& email);

}  // namespace rendezvous::bookings
