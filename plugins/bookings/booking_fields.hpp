// Booking questions (DESIGN §10): an event type's `bookingFields` (Cal.com's default fields plus
// custom ones of Cal.com's kinds), their validation and the JSON the API shows; a booking's
// answers (`bookingFieldsResponses`) checked against them, and the answers as booking answers and
// webhook payloads show them. Pure logic; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "rendezvous/status.hpp"

namespace rendezvous::bookings {

using Json = nlohmann::json;

constexpr size_t kMaxBookingFields = 30;  // entries of a `bookingFields` array
constexpr size_t kMaxFieldSlugChars = 64;
constexpr size_t kMaxFieldLabelChars = 255;
constexpr size_t kMaxFieldPlaceholderChars = 255;
constexpr size_t kMaxFieldOptions = 50;
constexpr size_t kMaxFieldOptionChars = 255;
constexpr size_t kMaxBookingFieldsBytes = 32 * 1024;  // the stored definitions as compact JSON
constexpr size_t kMaxTextAnswerChars = 1000;          // text, phone, address
constexpr size_t kMaxLongAnswerChars = 10000;         // textarea, notes
constexpr size_t kMaxEmailAnswers = 10;               // multiemail
constexpr size_t kMaxResponsesBytes = 64 * 1024;      // a booking's stored answers as compact JSON

// Checks a `bookingFields` array (errors name `bookingFields[i].member`) and answers what is
// stored: the custom fields `{type, slug, label, required, hidden, disableOnPrefill,
// placeholder?, options?}` in the given order, and Cal.com's name and email inputs (`{type:
// "name"|"email", label?, placeholder?, disableOnPrefill?}`) that relabel those default fields.
// Entries of the output form with `isDefault: true` (a list read back from the API) are accepted
// for the default slugs and add nothing but the name and email labels. An empty array: the
// default fields alone.
Result<Json> ParseBookingFields(const Json& value);

// The event type's `bookingFields` as Cal.com outputs them: the default fields (name, email,
// location, notes, guests, rescheduleReason) with `isDefault: true`, then the stored custom
// fields with `isDefault: false`. `stored` is what ParseBookingFields answered (null or an empty
// array: the default fields alone).
Json BookingFieldsJson(const Json& stored);

// A booking's answers, checked against the event type's stored fields before anything is written.
struct CheckedResponses {
  // The custom answers as stored with the booking: {slug: {label, value}} (the label as the
  // event type had it when the booking was made); unanswered optional fields are left out.
  Json answers = Json::object();
  std::optional<std::string> notes;  // the default `notes` field: the booking's description
};
// `responses` is the request's `bookingFieldsResponses` (null when absent). A missing required
// custom field (hidden ones are never required), an answer of the wrong kind, an unknown slug or
// a default field answered elsewhere in the request (name, email, guests, location) is a 400
// naming `bookingFieldsResponses.<slug>`; answers over kMaxResponsesBytes in all, a 400 naming
// `bookingFieldsResponses`.
Result<CheckedResponses> CheckBookingResponses(const Json& stored_fields, const Json& responses);

// `bookingFieldsResponses` of a booking answer: the default fields' answers derived from the
// booking (name and email of the attendee who booked, guests, notes when given) and the custom
// answers (slug -> value).
Json BookingResponsesJson(const std::string& name, const std::string& email, const Json& guests,
                          const std::string& notes, const Json& answers);
// The webhook payload's `responses` (Cal.com's shape): every field answered, default ones
// included, as {slug: {label, value}}.
Json PayloadResponsesJson(const std::string& name, const std::string& email, const Json& guests,
                          const std::string& notes, const Json& answers);

}  // namespace rendezvous::bookings
