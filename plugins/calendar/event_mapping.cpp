#include "event_mapping.hpp"

#include "time_util.hpp"

namespace rendezvous::calendar {
namespace {

using nlohmann::json;

std::string Str(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

bool Bool(const json& obj, const char* key) {
  if (!obj.is_object()) return false;
  auto it = obj.find(key);
  return it != obj.end() && it->is_boolean() && it->get<bool>();
}

// start/end: {dateTime, timeZone} for timed events, {date} for all-day ones.
json MapTime(const json& t, const std::string& calendar_tz) {
  std::string zone = Str(t, "timeZone");
  if (zone.empty()) zone = calendar_tz.empty() ? "UTC" : calendar_tz;
  std::string time;
  if (auto instant = ParseRfc3339(Str(t, "dateTime"))) {
    time = FormatUtc(*instant);
  } else if (auto date = ParseDate(Str(t, "date"))) {
    auto tz = TimeZone::Load(zone);
    if (!tz) {
      tz = TimeZone::Utc();
      zone = "UTC";
    }
    time = FormatUtc(tz->StartOfDay(*date));
  }
  return {{"time", time}, {"timeZone", zone}};
}

json Location(const std::string& type, const std::string& url, const std::string& label,
              const std::string& password, const std::string& meeting_code, const std::string& access_code) {
  return {{"type", type},
          {"url", url},
          {"label", label},
          {"password", password},
          {"meetingCode", meeting_code},
          {"accessCode", access_code}};
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
      std::string password = Str(ep, "password");
      if (password.empty()) password = Str(ep, "passcode");
      std::string access = Str(ep, "accessCode");
      if (access.empty()) access = Str(ep, "pin");
      std::string type = Str(ep, "entryPointType");
      out.push_back(Location(type.empty() ? "video" : type, Str(ep, "uri"), Str(ep, "label"), password,
                             Str(ep, "meetingCode"), access));
    }
    return out;
  }
  if (const std::string hangout = Str(event, "hangoutLink"); !hangout.empty()) {
    out.push_back(Location("video", hangout, "", "", "", ""));
  }
  if (const std::string place = Str(event, "location"); !place.empty()) {
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
      const std::string status = MapResponseStatus(Str(a, "responseStatus"));
      attendees.push_back({{"email", Str(a, "email")},
                           {"name", Str(a, "displayName")},
                           {"responseStatus", status},
                           {"self", Bool(a, "self")},
                           {"optional", Bool(a, "optional")},
                           {"host", host}});
      if (host)
        hosts.push_back(
            {{"email", Str(a, "email")}, {"name", Str(a, "displayName")}, {"responseStatus", status}});
    }
  }
  const json organizer = event.contains("organizer") ? event["organizer"] : json::object();
  return {
      {"id", Str(event, "id")},
      {"title", Str(event, "summary")},
      {"description", Str(event, "description")},
      {"start", MapTime(event.value("start", json::object()), calendar_time_zone)},
      {"end", MapTime(event.value("end", json::object()), calendar_time_zone)},
      {"locations", Locations(event)},
      {"attendees", std::move(attendees)},
      {"status", MapEventStatus(Str(event, "status"))},
      {"hosts", std::move(hosts)},
      {"calendarEventOwner", {{"email", Str(organizer, "email")}, {"name", Str(organizer, "displayName")}}},
      {"source", "google"}};
}

}  // namespace rendezvous::calendar
