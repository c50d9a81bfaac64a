#include "calendar_list.hpp"

#include "calendar_options.hpp"
#include "rendezvous/crypto.hpp"

namespace rendezvous::calendar {

CalendarList::CalendarList(Database& db, std::string encryption_key)
    : db_(db), encryption_key_(std::move(encryption_key)) {}

std::vector<GoogleCalendar> CalendarList::LoadCalendars(int64_t user_id) {
  return db_.Run([&](DbConnection& c) {
    std::vector<GoogleCalendar> out;
    for (const DbRow& r : c.Query("SELECT credential_id, external_id, name, is_primary, read_only, time_zone FROM "
                                  "calendar_google_calendars WHERE user_id = ? ORDER BY position, external_id",
                                  {user_id})) {
      out.push_back(GoogleCalendar{r.Int(1), r.String(2), r.String(3), r.Bool(4), r.Bool(5), r.String(6)});
    }
    return out;
  });
}

std::optional<std::string> CalendarList::LoadDestination(int64_t user_id) {
  return db_.Run([&](DbConnection& c) -> std::optional<std::string> {
    std::optional<DbRow> row = c.QueryOne(
        "SELECT external_id FROM calendar_destinations WHERE user_id = ? AND integration = 'google_calendar'",
        {user_id});
    if (!row) return std::nullopt;
    return row->String(1);
  });
}

std::string CalendarList::TargetCalendar(int64_t user_id) {
  if (std::optional<std::string> destination = LoadDestination(user_id)) return *destination;
  for (const GoogleCalendar& c : LoadCalendars(user_id)) {
    if (c.primary) return c.external_id;
  }
  return "primary";
}

Json CalendarList::CalendarJson(const GoogleCalendar& c, const std::optional<std::string>& destination) {
  return {{"credentialId", c.credential_id},
          {"integration", "google_calendar"},
          {"externalId", c.external_id},
          {"name", c.name},
          {"primary", c.primary},
          {"readOnly", c.read_only},
          {"isSelected", true},
          {"isDestination", destination && *destination == c.external_id},
          {"timeZone", c.time_zone.empty() ? Json(nullptr) : Json(c.time_zone)}};
}

Result<Json> CalendarList::ListCalendars(int64_t user_id) {
  const std::vector<GoogleCalendar> calendars = LoadCalendars(user_id);
  const std::optional<std::string> destination = LoadDestination(user_id);
  struct Feed {
    int64_t id;
    std::string url_enc, name, time_zone;
    bool read_only;
  };
  std::vector<Feed> feeds = db_.Run([&](DbConnection& c) {
    std::vector<Feed> out;
    for (const DbRow& r : c.Query(
             "SELECT id, url_enc, name, time_zone, read_only FROM calendar_ics_feeds WHERE user_id = ? ORDER BY id",
             {user_id})) {
      out.push_back(Feed{r.Int(1), r.String(2), r.String(3), r.String(4), r.Bool(5)});
    }
    return out;
  });
  Json list = Json::array();
  Json dest = nullptr;
  for (const GoogleCalendar& c : calendars) {
    list.push_back(CalendarJson(c, destination));
    if (destination && *destination == c.external_id) {
      dest = {{"integration", "google_calendar"}, {"externalId", c.external_id}, {"name", c.name},
              {"credentialId", c.credential_id},  {"primary", c.primary},        {"timeZone", c.time_zone}};
    }
  }
  for (const Feed& f : feeds) {
    std::string url;
    if (EncryptionConfigured(encryption_key_)) {
      auto plain = crypto::Decrypt(encryption_key_, f.url_enc);
      if (plain.ok()) url = *plain;
    }
    list.push_back({{"credentialId", f.id},
                    {"integration", "ics_feed"},
                    {"externalId", url},
                    {"name", f.name},
                    {"primary", false},
                    {"readOnly", f.read_only},
                    {"isSelected", true},
                    {"isDestination", false},
                    {"timeZone", f.time_zone.empty() ? Json(nullptr) : Json(f.time_zone)}});
  }
  return Json{{"calendars", list}, {"destinationCalendar", dest}};
}

Result<Json> CalendarList::SetDestination(int64_t user_id, const Json& body) {
  if (!body.contains("integration") || !body["integration"].is_string())
    return Status::Invalid("integration", "integration is required (google_calendar)");
  if (body["integration"].get<std::string>() != "google_calendar")
    return Status::Invalid("integration", "integration must be google_calendar (ICS feeds are read-only)");
  if (!body.contains("externalId") || !body["externalId"].is_string() ||
      body["externalId"].get<std::string>().empty() || body["externalId"].get<std::string>().size() > 255)
    return Status::Invalid("externalId", "externalId is required: the id of one of your connected Google calendars");
  const std::string external_id = body["externalId"].get<std::string>();
  return db_.Transaction([&](DbConnection& tx) -> Result<Json> {
    std::optional<DbRow> r = tx.QueryOne(
        "SELECT credential_id, name, is_primary, read_only, time_zone FROM calendar_google_calendars"
        " WHERE user_id = ? AND external_id = ? FOR UPDATE",
        {user_id, external_id});
    if (!r) return Status::NotFound("no connected Google calendar with this externalId");
    const int64_t credential_id = r->Int(1);
    const std::string name = r->String(2);
    const bool primary = r->Bool(3);
    const bool read_only = r->Bool(4);
    const std::string tz = r->String(5);
    if (read_only)
      return Status::Invalid("externalId", "this calendar is read-only; events cannot be written to it");
    tx.Exec(
        "INSERT INTO calendar_destinations (user_id, integration, external_id, updated_at) VALUES (?, "
        "'google_calendar',"
        " ?, UTC_TIMESTAMP(3)) ON DUPLICATE KEY UPDATE integration = VALUES(integration),"
        " external_id = VALUES(external_id), updated_at = VALUES(updated_at)",
        {user_id, external_id});
    return Json{{"integration", "google_calendar"}, {"externalId", external_id}, {"name", name},
                {"credentialId", credential_id},    {"primary", primary},        {"timeZone", tz}};
  });
}

}  // namespace rendezvous::calendar
