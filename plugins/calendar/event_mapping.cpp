#include "event_mapping.hpp"

#include "json_fields.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::calendar {
namespace {

using nlohmann::json;

bool Bool(const json& obj, const char* key) {
  if (!obj.is_object()) return false;
  auto it = obj.find(key);
  return it != obj.end() && it->is_boolean() && it->get<bool>();
}

// start/end: {dateTime, timeZone} for timed events, {date} for all-day ones.
json MapTime(const json& t, const std::string& calendar_tz) {
  std::string zone = StringField(t, "timeZone");
  if (zone.empty()) zone = calendar_tz.empty() ? "UTC" : calendar_tz;
  std::string text;
  if (auto instant = time::ParseIso(StringField(t, "dateTime"))) {
    text = time::FormatIsoSeconds(*instant);
  } else if (auto date = time::ParseDate(StringField(t, "date"))) {
    std::optional<time::Zone> tz = time::Zone::Find(zone);
    if (!tz) {
      tz = time::Zone::Utc();
      zone = "UTC";
    }
    text = time::FormatIsoSeconds(tz->StartOfDay(*date));
  }
  return {{"time", text}, {"timeZone", zone}};
}

// DESIGN §9: a location field without a value is left out (not "", not null), as the original
// service does; `type` is always there.
json Location(const std::string& type, const std::string& url, const std::string& label,
              const std::string& password, const std::string& meeting_code, const std::string& access_code) {
  json out = {{"type", type}};
  const std::pair<const char*, const std::string*> fields[] = {{"url", &url},
                                                               {"label", &label},
                                                               {"password", &password},
                                                               {"meetingCode", &meeting_code},
                                                               {"accessCode", &access_code}};
  for (const auto& [name, value] : fields) {
    if (!value->empty()) out[name] = *value;
  }
  return out;
}

json Locations(const json& event) {
  json out = json::array();
  const json* entry_points = nullptr;
  if (event.contains("conferenceData") && event["conferenceData"].is_object()) {
    const json& cd = event["conferenceData"];
    if (cd.contains("entryPoints") && cd["entryPoints"].is_array()) entry_points = &cd["entryPoints"];
  }
  if (entry_points && !entry_points->empty()) {
    for (const json& ep : *entry_points) {
      if (!ep.is_object()) continue;
      std::string password = StringField(ep, "password");
      if (password.empty()) password = StringField(ep, "passcode");
      std::string access = StringField(ep, "accessCode");
      if (access.empty()) access = StringField(ep, "pin");
      std::string type = StringField(ep, "entryPointType");
      out.push_back(Location(type.empty() ? "video" : type, StringField(ep, "uri"), StringField(ep, "label"), password,
                             StringField(ep, "meetingCode"), access));
    }
    return out;
  }
  if (const std::string hangout = StringField(event, "hangoutLink"); !hangout.empty()) {
    out.push_back(Location("video", hangout, "", "", "", ""));
  }
  if (const std::string place = StringField(event, "location"); !place.empty()) {
    out.push_back(Location("address", "", place, "", "", ""));
  }
  return out;
}

}  // namespace

std::string MapResponseStatus(const std::string& google) {
  if (google == "tentative") return "pending";
  return google;  // accepted, declined, needsAction keep their names
}

std::string MapEventStatus(const std::string& google) {
  if (google == "confirmed") return "accepted";
  if (google == "tentative") return "pending";
  if (google == "cancelled") return "cancelled";
  return google;
}

json MapGoogleEvent(const json& event, const std::string& calendar_time_zone) {
  json attendees = json::array();
  json hosts = json::array();
  if (event.contains("attendees") && event["attendees"].is_array()) {
    for (const json& a : event["attendees"]) {
      if (!a.is_object()) continue;
      const bool host = Bool(a, "organizer");
      const std::string status = MapResponseStatus(StringField(a, "responseStatus"));
      attendees.push_back({{"email", StringField(a, "email")},
                           {"name", StringField(a, "displayName")},
                           {"responseStatus", status},
                           {"self", Bool(a, "self")},
                           {"optional", Bool(a, "optional")},
                           {"host", host}});
      if (host)
        hosts.push_back(
            {{"email", StringField(a, "email")}, {"name", StringField(a, "displayName")}, {"responseStatus", status}});
    }
  }
  const json organizer = event.contains("organizer") ? event["organizer"] : json::object();
  return {
      {"id", StringField(event, "id")},
      {"title", StringField(event, "summary")},
      {"description", StringField(event, "description")},
      {"start", MapTime(event.value("start", json::object()), calendar_time_zone)},
      {"end", MapTime(event.value("end", json::object()), calendar_time_zone)},
      {"locations", Locations(event)},
      {"attendees", std::move(attendees)},
      {"status", MapEventStatus(StringField(event, "status"))},
      {"hosts", std::move(hosts)},
      {"calendarEventOwner", {{"email", StringField(organizer, "email")}, {"name", StringField(organizer, "displayName")}}},
      {"source", "google"}};
}

}  // namespace rendezvous::calendar
