// What a booking event asks of the host's Google Calendar (docs/calendar.md, "Bookings in Google
// Calendar"): a pure translation of one outbox event of topic "bookings" into a change of one
// Google event, with the event's contents as Google takes them. Knows nothing of the database or
// of Google's answers. Thread-safe (no state).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rendezvous/time.hpp"

namespace rendezvous::calendar {

enum class SyncAction {
  kCreate,  // the booking became accepted: insert its event (or restore it)
  kMove,    // a reschedule: the old booking's event takes the new booking's times
  kDelete,  // the booking was cancelled or rejected: delete its event
};

constexpr SyncAction kSyncActions[] = {SyncAction::kCreate, SyncAction::kMove, SyncAction::kDelete};

const char* SyncActionName(SyncAction action);
std::optional<SyncAction> SyncActionFromName(const std::string& name);

struct SyncPlan {
  SyncAction action = SyncAction::kCreate;
  std::string booking_uid;  // the booking the event belongs to after the change
  std::string from_uid;     // kMove: the rescheduled (old) booking
  int64_t user_id = 0;      // the host, whose calendar holds the event
  // kCreate/kMove: the Google event resource without `id` and `conferenceData` (summary,
  // description, start, end, attendees, location).
  nlohmann::json event;
  bool meet = false;  // a Google Meet conference is asked for
};

// The host whose calendar a booking event is about (payload.organizer.id, else payload.hosts[0].id).
std::optional<int64_t> BookingEventHost(const nlohmann::json& envelope);
// BookingEventHost read from the event's JSON text without parsing the whole of it (nullopt too when the
// text is not well-formed).
std::optional<int64_t> BookingEventHostInText(std::string_view envelope_text);

// The plan for one booking event (`trigger` e.g. "BOOKING_CREATED", `envelope` the outbox payload
// {triggerEvent, createdAt, payload}); nullopt when the event changes nothing in Google (a pending
// booking, a no-show, a completion, a malformed payload), and for a create or move of a booking
// that has ended by `now` (events replayed from the outbox's history write no past meetings).
std::optional<SyncPlan> PlanBookingSync(const std::string& trigger, const nlohmann::json& envelope,
                                        time::Millis now);

// The Google event id Rendezvous gives the event of a booking: base32hex (0-9, a-v), as Google
// allows client-chosen ids, derived from the booking uid so that a retried insert can never make
// a second event. A rescheduled booking keeps its predecessor's event (and id).
std::string GoogleEventIdFor(const std::string& booking_uid);

// The booking `location` that asks for Google Meet (set when the event type's first location is
// {"type":"integration","integration":"google-meet"}).
constexpr const char* kMeetLocation = "integrations:google:meet";

}  // namespace rendezvous::calendar
