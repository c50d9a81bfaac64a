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

namespace {

constexpr const char* kGoogleType = "google_calendar";
constexpr const char* kIcsType = "ics-feed_calendar";

struct StoredDestination {
  int64_t id = 0;
  std::string external_id;
};

std::optional<StoredDestination> LoadStoredDestination(DbConnection& c, int64_t user_id) {
  std::optional<DbRow> row = c.QueryOne(
      "SELECT id, external_id FROM calendar_destinations WHERE user_id = ? AND integration = "
      "'google_calendar'",
      {user_id});
  if (!row) return std::nullopt;
  return StoredDestination{row->Int(1), row->String(2)};
}

// Cal.com's destination calendar. Google's primary calendar is named by its account's address,
// which is the primaryEmail.
Json DestinationJson(int64_t id, int64_t user_id, const GoogleCalendar& c,
                     const std::vector<GoogleCalendar>& all) {
  Json primary_email = nullptr;
  for (const GoogleCalendar& other : all) {
    if (other.primary && other.external_id.find('@') != std::string::npos) primary_email = other.external_id;
  }
  return {{"id", id},
          {"integration", kGoogleType},
          {"externalId", c.external_id},
          {"primaryEmail", primary_email},
          {"userId", user_id},
          {"eventTypeId", nullptr},
          {"credentialId", c.credential_id},
          {"name", c.name},
          {"primary", c.primary},
          {"readOnly", c.read_only},
          {"integrationTitle", "Google Calendar"},
          {"timeZone", c.time_zone.empty() ? Json(nullptr) : Json(c.time_zone)}};
}

}  // namespace

Json CalendarList::CalendarJson(const GoogleCalendar& c, const std::optional<std::string>& destination) {
  return {{"credentialId", c.credential_id},
          {"integration", kGoogleType},
          {"externalId", c.external_id},
          {"name", c.name},
          {"primary", c.primary},
          {"readOnly", c.read_only},
          {"isSelected", true},
          {"isDestination", destination && *destination == c.external_id},
          {"timeZone", c.time_zone.empty() ? Json(nullptr) : Json(c.time_zone)}};
}

Json CalendarList::IntegrationJson(const std::string& type) {
  const bool google = type == kGoogleType;
  const char* name = google ? "Google Calendar" : "ICS Feed";
  return {{"type", type},
          {"name", name},
          {"title", name},
          {"slug", google ? "google-calendar" : "ics-feed"},
          {"dirName", google ? "googlecalendar" : "ics-feedcalendar"},
          {"description", google ? "Busy times from the connected Google calendars; bookings written to the "
                                   "destination calendar."
                                 : "Busy times read from iCalendar feed URLs (read-only)."},
          {"variant", "calendar"},
          {"category", "calendar"},
          {"categories", Json::array({"calendar"})},
          {"logo", ""},
          {"publisher", "Rendezvous"},
          {"url", google ? "https://calendar.google.com/" : "https://www.rfc-editor.org/rfc/rfc5545"},
          {"email", ""},
          {"installed", true},
          {"appData", nullptr},
          {"locationOption", nullptr}};
}

Result<Json> CalendarList::ListCalendars(int64_t user_id) {
  const std::vector<GoogleCalendar> calendars = LoadCalendars(user_id);
  // Events of a user without a stored destination go to the primary calendar: that is stored as
  // the destination so that it has an id (a concurrent PUT wins: INSERT IGNORE).
  std::optional<StoredDestination> stored = db_.Run([&](DbConnection& c) -> std::optional<StoredDestination> {
    std::optional<StoredDestination> d = LoadStoredDestination(c, user_id);
    if (d) return d;
    for (const GoogleCalendar& cal : calendars) {
      if (!cal.primary) continue;
      c.Exec(
          "INSERT IGNORE INTO calendar_destinations (user_id, integration, external_id, updated_at)"
          " VALUES (?, 'google_calendar', ?, UTC_TIMESTAMP(3))",
          {user_id, cal.external_id});
      return LoadStoredDestination(c, user_id);
    }
    return std::nullopt;
  });
  const std::optional<std::string> destination =
      stored ? std::optional<std::string>(stored->external_id) : std::nullopt;
  struct Feed {
    int64_t id;
    std::string url_enc, name, time_zone;
    bool read_only;
  };
  std::vector<Feed> feeds = db_.Run([&](DbConnection& c) {
    std::vector<Feed> out;
    for (const DbRow& r : c.Query("SELECT id, url_enc, name, time_zone, read_only FROM calendar_ics_feeds "
                                  "WHERE user_id = ? ORDER BY id",
                                  {user_id})) {
      out.push_back(Feed{r.Int(1), r.String(2), r.String(3), r.String(4), r.Bool(5)});
    }
    return out;
  });
  Json list = Json::array();
  Json connected = Json::array();
  Json dest = nullptr;
  if (!calendars.empty()) {
    Json google = {{"integration", IntegrationJson(kGoogleType)},
                   {"credentialId", calendars.front().credential_id},
                   {"calendars", Json::array()}};
    for (const GoogleCalendar& c : calendars) {
      const Json item = CalendarJson(c, destination);
      list.push_back(item);
      google["calendars"].push_back(item);
      if (c.primary && !google.contains("primary")) google["primary"] = item;
      if (destination && *destination == c.external_id)
        dest = DestinationJson(stored->id, user_id, c, calendars);
    }
    connected.push_back(std::move(google));
  }
  // Each feed is its own credential (its id), as Cal.com lists an ICS credential with its feeds.
  for (const Feed& f : feeds) {
    std::string url;
    if (EncryptionConfigured(encryption_key_)) {
      auto plain = crypto::Decrypt(encryption_key_, f.url_enc);
      if (plain.ok()) url = *plain;
    }
    Json item = {{"credentialId", f.id},
                 {"integration", "ics_feed"},
                 {"externalId", url},
                 {"name", f.name},
                 {"primary", false},
                 {"readOnly", f.read_only},
                 {"isSelected", true},
                 {"isDestination", false},
                 {"timeZone", f.time_zone.empty() ? Json(nullptr) : Json(f.time_zone)}};
    list.push_back(item);
    item["integration"] = kIcsType;  // Cal.com's name; the flat list keeps ours
    connected.push_back({{"integration", IntegrationJson(kIcsType)},
                         {"credentialId", f.id},
                         {"calendars", Json::array({item})}});
  }
  return Json{{"connectedCalendars", connected}, {"destinationCalendar", dest}, {"calendars", list}};
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
    std::optional<StoredDestination> stored = LoadStoredDestination(tx, user_id);
    return Json{{"userId", user_id},
                {"integration", kGoogleType},
                {"externalId", external_id},
                {"credentialId", credential_id},
                {"id", stored ? Json(stored->id) : Json(nullptr)},
                {"name", name},
                {"primary", primary},
                {"timeZone", tz}};
  });
}

}  // namespace rendezvous::calendar
