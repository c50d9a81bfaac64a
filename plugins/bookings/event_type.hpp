// Event types (DESIGN §9): the fields a client sets, their validation for create (POST) and update
// (PATCH), and the JSON the API shows. Pure logic; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "field_checks.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::bookings {

using Json = nlohmann::json;

constexpr size_t kMaxTitleChars = 255;
constexpr size_t kMaxSlugChars = 100;
constexpr size_t kMaxDescriptionChars = 10000;
constexpr size_t kMaxLocations = 10;
constexpr int kMaxLengthMinutes = 1440;
constexpr int kMaxBookingNoticeMinutes = 525600;  // a year
constexpr int kMaxBufferMinutes = 1440;

constexpr int kMaxBookingLimit = 1000;

// Cal.com's settings (DESIGN §10).
constexpr size_t kMaxEventTypeMetadataKeys = 50;
constexpr size_t kMaxEventTypeMetadataBytes = 16 * 1024;  // of the compact JSON text
constexpr size_t kMaxRedirectUrlChars = 2048;
inline constexpr const char* kDefaultCurrency = "usd";  // Cal.com's default

// `bookingLimitsCount`: at most this many accepted or pending bookings of the event type start in
// one day, week, month or year of the host's time zone (weeks begin on the host's weekStart);
// nullopt: no limit for that period.
struct BookingLimits {
  std::optional<int> day;
  std::optional<int> week;
  std::optional<int> month;
  std::optional<int> year;
  bool any() const { return day || week || month || year; }
};

struct EventTypeFields {
  std::string title;
  std::string slug;
  int length_minutes = 0;
  std::string description;
  Json locations = Json::array();  // normalized location objects (see ParseLocations)
  bool requires_confirmation = false;
  int minimum_booking_notice = 0;    // minutes
  int before_event_buffer = 0;       // minutes
  int after_event_buffer = 0;        // minutes
  std::optional<int> slot_interval;  // minutes; nullopt: the event's length
  // One of the owner's schedules; nullopt: the owner's default.
  std::optional<int64_t> schedule_id;
  BookingLimits booking_limits;
  // Cal.com's settings, stored and shown. Bookings never carry a price (a price above 0 is
  // refused), so `currency` only names the currency a price would be in.
  bool disable_guests = false;
  bool lock_time_zone_toggle = false;               // lockTimeZoneToggleOnBookingPage
  bool forward_params_success_redirect = true;      // Cal.com's default
  std::optional<std::string> success_redirect_url;  // an http(s) URL
  std::string currency = kDefaultCurrency;          // three lower-case letters
  // A JSON object of at most kMaxEventTypeMetadataKeys members and kMaxEventTypeMetadataBytes.
  // Only LoadEventType and the event type list read it (booking_rows.hpp); the booking flow's
  // reads leave it empty.
  Json metadata = Json::object();
  // Booking questions as ParseBookingFields stores them (booking_fields.hpp); empty: the default
  // fields alone. Read where the API shows event types and where bookings are made
  // (FindEventType), not by the flow's reads of all of a host's event types.
  Json booking_fields = Json::array();
};

struct EventType {
  int64_t id = 0;
  int64_t owner_id = 0;
  EventTypeFields fields;
};

// Validates a POST body (defaults for what is absent). Unknown members are refused. Errors are
// FieldInvalid statuses naming the member; a price above 0, `isInstantEvent: true` and a
// recurrence carry the reasons payments_not_supported, instant_not_supported and
// recurrence_not_supported (DESIGN §10). `bookingFields` is checked by ParseBookingFields.
Result<EventTypeFields> ParseEventTypeCreate(const Json& body);
// Applies a PATCH body to `fields`; members absent are kept, `null` resets optional ones
// (description, locations, slotInterval, scheduleId, bookingLimitsCount, metadata,
// successRedirectUrl, forwardParamsSuccessRedirect, recurrence; bookingFields: the default fields
// alone). On error `fields` may be partly changed.
Status ApplyEventTypePatch(const Json& body, EventTypeFields& fields);
// Checks a `locations` array and answers the normalized objects:
//   {"type":"integration","integration":"google-meet"}
//   {"type":"address","address":TEXT,"public":bool}   {"type":"link","link":URL,"public":bool}
//   {"type":"phone","phone":"+E164","public":bool}
Result<Json> ParseLocations(const Json& value);
// `{id, title, slug, lengthInMinutes, description, locations, requiresConfirmation,
//  minimumBookingNotice, beforeEventBuffer, afterEventBuffer, slotInterval, scheduleId,
//  bookingLimitsCount, ownerId}` and Cal.com's `{disableGuests, lockTimeZoneToggleOnBookingPage,
//  forwardParamsSuccessRedirect, successRedirectUrl, metadata, price, currency, isInstantEvent,
//  recurrence, users, bookingFields}`; bookingLimitsCount is {day?, week?, month?, year?} with the
//  limits set ({} when none is); price is 0, isInstantEvent false and recurrence null (the others
//  are refused); bookingFields as BookingFieldsJson shows them.
// `users` lists the owner by `owner_username` (empty: an empty list).
Json EventTypeJson(const EventType& et, const std::string& owner_username);
// A booking's `location` from its event type's first location ("integrations:google:meet" for
// Google Meet, else the address, link or phone); nullopt when the event type has none.
std::optional<std::string> BookingLocation(const Json& locations);

}  // namespace rendezvous::bookings
