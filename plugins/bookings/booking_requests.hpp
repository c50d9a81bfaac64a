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
Result<ListQuery> ParseListQuery(const std::multimap<std::string, std::string>& query);

constexpr size_t kMaxReasonChars = 1000;
constexpr size_t kMaxAbsentAttendees = 100;
constexpr size_t kMaxNameChars = 255;

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
