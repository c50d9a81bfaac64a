#include "booking_sync_plan.hpp"

#include "json_fields.hpp"
#include "rendezvous/crypto.hpp"
#include "rendezvous/json_pick.hpp"

namespace rendezvous::calendar {
namespace {

using nlohmann::json;

// Google's limits on the members we fill are generous; these keep one job row bounded.
constexpr size_t kMaxAttendees = 100;
constexpr size_t kMaxText = 8192;

std::optional<int64_t> HostId(const json& booking) {
  auto organizer = booking.find("organizer");
  if (organizer != booking.end() && organizer->is_object() && organizer->contains("id") &&
      (*organizer)["id"].is_number_integer())
    return (*organizer)["id"].get<int64_t>();
  auto hosts = booking.find("hosts");
  if (hosts != booking.end() && hosts->is_array() && !hosts->empty() && (*hosts)[0].is_object() &&
      (*hosts)[0].contains("id") && (*hosts)[0]["id"].is_number_integer())
    return (*hosts)[0]["id"].get<int64_t>();
  return std::nullopt;
}

std::string Cut(std::string s) {
  if (s.size() > kMaxText) s.resize(kMaxText);
  return s;
}

// The Google event resource of a booking, times in UTC with the host's zone for display.
json EventResource(const json& booking) {
  std::string zone = "UTC";
  if (booking.contains("organizer") && booking["organizer"].is_object()) {
    const std::string z = StringField(booking["organizer"], "timeZone");
    if (!z.empty()) zone = z;
  }
  json event = {{"summary", Cut(StringField(booking, "title"))},
                {"description", Cut(StringField(booking, "description"))},
                {"start", {{"dateTime", StringField(booking, "start")}, {"timeZone", zone}}},
                {"end", {{"dateTime", StringField(booking, "end")}, {"timeZone", zone}}}};
  json attendees = json::array();
  if (booking.contains("attendees") && booking["attendees"].is_array()) {
    for (const json& a : booking["attendees"]) {
      const std::string email = StringField(a, "email");
      if (email.empty() || attendees.size() >= kMaxAttendees) continue;
      json attendee = {{"email", email}};
      const std::string name = StringField(a, "name");
      if (!name.empty()) attendee["displayName"] = name;
      attendees.push_back(std::move(attendee));
    }
  }
  event["attendees"] = std::move(attendees);
  const std::string location = StringField(booking, "location");
  if (!location.empty() && location != kMeetLocation) event["location"] = Cut(location);
  return event;
}

}  // namespace

const char* SyncActionName(SyncAction action) {
  switch (action) {
    case SyncAction::kCreate:
      return "create";
    case SyncAction::kMove:
      return "move";
    case SyncAction::kDelete:
      return "delete";
  }
  return "create";
}

std::optional<SyncAction> SyncActionFromName(const std::string& name) {
  if (name == "create") return SyncAction::kCreate;
  if (name == "move") return SyncAction::kMove;
  if (name == "delete") return SyncAction::kDelete;
  return std::nullopt;
}

std::optional<int64_t> BookingEventHost(const json& envelope) {
  if (!envelope.is_object()) return std::nullopt;
  auto payload = envelope.find("payload");
  if (payload == envelope.end() || !payload->is_object()) return std::nullopt;
  return HostId(*payload);
}

std::optional<int64_t> BookingEventHostInText(std::string_view envelope_text) {
  static const std::vector<rendezvous::json::JsonPath> kPaths = {{"payload", "organizer", "id"},
                                                                 {"payload", "hosts", "0", "id"}};
  std::optional<std::vector<json>> v = rendezvous::json::PickScalars(envelope_text, kPaths);
  if (!v) return std::nullopt;
  for (const json& id : *v) {
    if (id.is_number_integer()) return id.get<int64_t>();
  }
  return std::nullopt;
}

std::optional<SyncPlan> PlanBookingSync(const std::string& trigger, const json& envelope, time::Millis now) {
  if (!envelope.is_object() || !envelope.contains("payload") || !envelope["payload"].is_object()) return std::nullopt;
  const json& booking = envelope["payload"];
  const std::string uid = StringField(booking, "uid");
  const std::optional<int64_t> host = HostId(booking);
  if (uid.empty() || !host) return std::nullopt;
  const bool accepted = StringField(booking, "status") == "accepted";

  SyncPlan plan;
  plan.booking_uid = uid;
  plan.user_id = *host;
  if (trigger == "BOOKING_CREATED" || trigger == "BOOKING_CONFIRMED" || trigger == "BOOKING_REOPENED") {
    if (!accepted) return std::nullopt;
    plan.action = SyncAction::kCreate;
  } else if (trigger == "BOOKING_CANCELLED" || trigger == "BOOKING_REJECTED") {
    plan.action = SyncAction::kDelete;
    return plan;
  } else if (trigger == "BOOKING_RESCHEDULED") {
    const std::string from = StringField(booking, "rescheduleUid");
    if (from.empty()) return std::nullopt;
    if (!accepted) {
      // The new booking waits for confirmation: the old meeting is off, the confirmation makes a
      // new event.
      plan.action = SyncAction::kDelete;
      plan.booking_uid = from;
      return plan;
    }
    plan.action = SyncAction::kMove;
    plan.from_uid = from;
  } else {
    return std::nullopt;
  }
  const std::optional<time::Millis> end = time::ParseIso(StringField(booking, "end"));
  if (!end || *end <= now) return std::nullopt;
  plan.event = EventResource(booking);
  plan.meet = StringField(booking, "location") == kMeetLocation;
  return plan;
}

std::string GoogleEventIdFor(const std::string& booking_uid) {
  // 52 base32hex digits of SHA-256 (260 bits; the last digit carries 4), prefixed so that the id
  // starts with a letter.
  static const char* kDigits = "0123456789abcdefghijklmnopqrstuv";
  const std::string hex = crypto::Sha256Hex("rendezvous-booking:" + booking_uid);
  std::string out = "rdv";
  unsigned buffer = 0;
  int bits = 0;
  for (char h : hex) {
    buffer = (buffer << 4) | static_cast<unsigned>(h <= '9' ? h - '0' : h - 'a' + 10);
    bits += 4;
    while (bits >= 5) {
      out += kDigits[(buffer >> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += kDigits[(buffer << (5 - bits)) & 31];
  return out;
}

}  // namespace rendezvous::calendar
