#include "calendar_service.hpp"


#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>
#include <set>

#include "event_mapping.hpp"
#include "ics.hpp"
#include "rendezvous/crypto.hpp"
#include "time_util.hpp"

namespace rendezvous::calendar {
namespace {

constexpr const char* kMigration = R"sql(CREATE TABLE IF NOT EXISTS calendar_google_credentials (
  id BIGINT NOT NULL AUTO_INCREMENT,
  user_id BIGINT NOT NULL,
  access_token_enc TEXT NOT NULL,
  refresh_token_enc TEXT NOT NULL,
  access_expires_at BIGINT NOT NULL DEFAULT 0,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY ux_calendar_google_credentials_user (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS calendar_google_calendars (
  user_id BIGINT NOT NULL,
  external_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  credential_id BIGINT NOT NULL,
  name VARCHAR(255) NOT NULL,
  is_primary TINYINT(1) NOT NULL DEFAULT 0,
  read_only TINYINT(1) NOT NULL DEFAULT 0,
  time_zone VARCHAR(64) NOT NULL DEFAULT '',
  position INT NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, external_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS calendar_destinations (
  user_id BIGINT NOT NULL,
  integration VARCHAR(32) CHARACTER SET ascii NOT NULL,
  external_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS calendar_ics_feeds (
  id BIGINT NOT NULL AUTO_INCREMENT,
  user_id BIGINT NOT NULL,
  url_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  url_enc TEXT NOT NULL,
  name VARCHAR(255) NOT NULL DEFAULT '',
  time_zone VARCHAR(64) NOT NULL DEFAULT '',
  read_only TINYINT(1) NOT NULL DEFAULT 1,
  created_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY ux_calendar_ics_feeds_user_url (user_id, url_hash)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS calendar_connect_states (
  state_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  user_id BIGINT NOT NULL,
  redir VARCHAR(2048) NOT NULL DEFAULT '',
  created_at DATETIME(3) NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  used_at DATETIME(3) NULL,
  PRIMARY KEY (state_hash),
  KEY ix_calendar_connect_states_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci)sql";

constexpr size_t kMaxStateLength = 128;
constexpr size_t kMaxCodeLength = 2048;
constexpr size_t kMaxCalendars = 250;
constexpr size_t kMaxFreeBusyItems = 50;
constexpr int64_t kExpirySlackSeconds = 60;
// All ICS downloads of one request share this budget (each is also bounded by its own timeout).
constexpr std::chrono::milliseconds kIcsBudget{20000};
constexpr std::chrono::milliseconds kIcsTimeout{10000};
constexpr std::chrono::milliseconds kMinUsefulTimeout{500};

// The time left until `deadline` for one fetch, at most kIcsTimeout (zero when spent).
std::chrono::milliseconds Remaining(std::chrono::steady_clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  if (left < kMinUsefulTimeout) return std::chrono::milliseconds(0);
  return std::min(left, kIcsTimeout);
}

ApiError Invalid(std::string message, const std::string& field) {
  return ApiError{400, "validation_error", std::move(message), Json{{"field", field}}};
}

ApiError NotFound(std::string message) {
  return ApiError{404, "not_found", std::move(message), nullptr};
}

int64_t Now() {
  return static_cast<int64_t>(std::time(nullptr));
}

std::string Str(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// scheme://host[:port] of an absolute http(s) URL, lower-cased; "" when not one.
std::string OriginOf(const std::string& url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return "";
  const std::string scheme = Lower(url.substr(0, scheme_end));
  if (scheme != "http" && scheme != "https") return "";
  const size_t host_end = url.find_first_of("/?#", scheme_end + 3);
  std::string authority = url.substr(
      scheme_end + 3, host_end == std::string::npos ? std::string::npos : host_end - scheme_end - 3);
  if (authority.empty() || authority.find('@') != std::string::npos ||
      authority.find('\\') != std::string::npos)
    return "";
  return scheme + "://" + Lower(authority);
}

struct ParsedUrl {
  std::string scheme;
  std::string host;  // without brackets
};

std::optional<ParsedUrl> ParseFeedUrl(const std::string& url) {
  const std::string origin = OriginOf(url);
  if (origin.empty()) return std::nullopt;
  ParsedUrl p;
  const size_t sep = origin.find("://");
  p.scheme = origin.substr(0, sep);
  std::string authority = origin.substr(sep + 3);
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string::npos) return std::nullopt;
    p.host = authority.substr(1, close - 1);
  } else {
    p.host = authority.substr(0, authority.find(':'));
  }
  if (p.host.empty()) return std::nullopt;
  return p;
}

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

bool HasControlOrSpace(const std::string& s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; });
}

std::string HashOf(const std::string& s) {
  return crypto::Sha256Hex(s);
}

// The external id of the user's destination calendar, if one is set.
std::optional<std::string> Destination(DbConnection& c, int64_t user_id) {
  std::optional<DbRow> row = c.QueryOne(
      "SELECT external_id FROM calendar_destinations WHERE user_id = ? AND integration = 'google_calendar'",
      {user_id});
  if (!row) return std::nullopt;
  return row->String(1);
}

}  // namespace

ApiError GoogleFailure(const GoogleCall& call, const std::string& what) {
  if (call.transport == FetchOutcome::kTimeout)
    return ApiError{504, "gateway_timeout", "Google did not answer in time (" + what + ")", nullptr};
  if (call.transport != FetchOutcome::kOk)
    return ApiError{502, "bad_gateway", "Google could not be reached (" + what + "): " + call.GoogleMessage(),
                    nullptr};
  if (call.status >= 200 && call.status < 300)
    return ApiError{502, "bad_gateway", "Google answered " + what + " with an unexpected body", nullptr};
  return ApiError{
      502, "bad_gateway",
      "Google answered " + what + " with HTTP " + std::to_string(call.status) + ": " + call.GoogleMessage(),
      nullptr};
}

CalendarService::CalendarService(Database& db, Logger& logger, const GoogleApi& google,
                                 CalendarOptions options, IcsObserver on_ics_fetch)
    : db_(db),
      logger_(logger),
      google_(google),
      options_(std::move(options)),
      on_ics_fetch_(std::move(on_ics_fetch)) {}

std::vector<Migration> CalendarService::Migrations() {
  return {
      Migration{1, "calendar credentials, calendars, destinations, ICS feeds, connect states", kMigration}};
}

void CalendarService::CountIcsFetch(const FetchResult& r, bool parsed) const {
  if (!on_ics_fetch_) return;
  on_ics_fetch_(!r.ok()           ? OutcomeLabel(r.outcome)
                : r.status != 200 ? "http_error"
                : parsed          ? "ok"
                                  : "not_calendar");
}

bool CalendarService::IsAllowedRedirect(const std::string& url, const std::string& base_url,
                                        const std::string& app_url) {
  if (url.empty() || url.size() > kMaxUrlLength || HasControlOrSpace(url)) return false;
  const std::string origin = OriginOf(url);
  if (origin.empty()) return false;
  // The URL must begin with exactly that origin, followed by nothing or a path/query/fragment.
  const std::string rest = url.substr(origin.size());
  if (!rest.empty() && rest[0] != '/' && rest[0] != '?' && rest[0] != '#') return false;
  if (rest.rfind("//", 0) == 0) return false;
  return origin == OriginOf(base_url) || origin == OriginOf(app_url);
}

std::optional<ApiError> CalendarService::RequireEncryption() const {
  if (encryption_configured()) return std::nullopt;
  return ApiError{
      503, "not_configured",
      "credential encryption is not configured on this server: the operator must set the variable named "
      "by security.encryption_key_env (default RENDEZVOUS_ENCRYPTION_KEY)",
      nullptr};
}

Outcome<std::string> CalendarService::Connect(int64_t user_id, const std::optional<std::string>& redir) {
  if (!google_configured())
    return ApiError{503, "not_configured",
                    "Google Calendar is not configured on this server (plugins.calendar.google.client_id)",
                    nullptr};
  if (auto e = RequireEncryption()) return *e;
  std::string target = redir.value_or("");
  if (!target.empty() && !IsAllowedRedirect(target, options_.base_url, options_.app_url))
    return Invalid("redir must be a URL on " + options_.app_url + " or " + options_.base_url, "redir");
  const std::string state = crypto::RandomToken(32);
  db_.Transaction([&](DbConnection& tx) {
    tx.Exec("DELETE FROM calendar_connect_states WHERE expires_at < UTC_TIMESTAMP(3) - INTERVAL 1 DAY LIMIT 100");
    tx.Exec(
        "INSERT INTO calendar_connect_states (state_hash, user_id, redir, created_at, expires_at)"
        " VALUES (?, ?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL ? SECOND)",
        {HashOf(state), user_id, target, kStateTtlSeconds});
  });
  return google_.AuthUrl(options_.base_url + "/v2/calendars/google/save", state);
}

Outcome<CalendarService::SaveResult> CalendarService::Save(const std::string& code, const std::string& state,
                                                           const std::string& google_error) {
  if (!google_configured())
    return ApiError{503, "not_configured",
                    "Google Calendar is not configured on this server (plugins.calendar.google.client_id)",
                    nullptr};
  if (auto e = RequireEncryption()) return *e;
  if (state.empty() || state.size() > kMaxStateLength) return Invalid("state is missing or invalid", "state");
  if (google_error.empty() && (code.empty() || code.size() > kMaxCodeLength))
    return Invalid("code is missing or invalid", "code");

  struct StateRow {
    int64_t user_id = 0;
    std::string redir;
  };
  std::optional<StateRow> row = db_.Transaction([&](DbConnection& tx) -> std::optional<StateRow> {
    std::optional<DbRow> found = tx.QueryOne(
        "SELECT user_id, redir FROM calendar_connect_states WHERE state_hash = ? AND used_at IS NULL"
        " AND expires_at > UTC_TIMESTAMP(3) FOR UPDATE",
        {HashOf(state)});
    if (!found) return std::nullopt;
    tx.Exec("UPDATE calendar_connect_states SET used_at = UTC_TIMESTAMP(3) WHERE state_hash = ?", {HashOf(state)});
    return StateRow{found->Int(1), found->String(2)};
  });
  if (!row)
    return ApiError{
        400, "invalid_state",
        "the state is unknown, expired or already used; start again at /v2/calendars/google/connect",
        Json{{"field", "state"}}};

  if (!google_error.empty()) {
    const std::string error = google_error.substr(0, 64);
    if (!row->redir.empty()) {
      // The error goes into the query, before any fragment.
      const size_t hash = row->redir.find('#');
      const std::string base = row->redir.substr(0, hash);
      const std::string fragment = hash == std::string::npos ? "" : row->redir.substr(hash);
      const char sep = base.find('?') == std::string::npos ? '?' : '&';
      return SaveResult{base + sep + "error=" + PercentEncode(error) + fragment, nullptr};
    }
    return ApiError{400, "google_denied", "Google did not grant access: " + error, Json{{"field", "error"}}};
  }

  const GoogleCall token = google_.ExchangeCode(code, options_.base_url + "/v2/calendars/google/save");
  if (!token.ok()) return GoogleFailure(token, "the code exchange");
  Credential cred;
  cred.access_token = Str(token.body, "access_token");
  cred.refresh_token = Str(token.body, "refresh_token");
  if (cred.access_token.empty())
    return GoogleFailure(GoogleCall{FetchOutcome::kOk, 200, nullptr, ""}, "the code exchange");
  if (token.body.contains("expires_in") && token.body["expires_in"].is_number_integer())
    cred.expires_at = Now() + token.body["expires_in"].get<int64_t>();

  const GoogleCall list = google_.CalendarList(cred.access_token);
  if (!list.ok()) return GoogleFailure(list, "the calendar list");
  std::vector<GoogleCalendar> calendars;
  if (list.body.contains("items") && list.body["items"].is_array()) {
    for (const Json& item : list.body["items"]) {
      if (!item.is_object() || calendars.size() >= kMaxCalendars) continue;
      GoogleCalendar c;
      c.external_id = Str(item, "id");
      if (c.external_id.empty() || c.external_id.size() > 255) continue;
      c.name = Str(item, "summaryOverride");
      if (c.name.empty()) c.name = Str(item, "summary");
      if (c.name.size() > 255) c.name.resize(255);
      c.primary = item.value("primary", false) == true;
      const std::string role = Str(item, "accessRole");
      c.read_only = !(role == "owner" || role == "writer");
      c.time_zone = Str(item, "timeZone").substr(0, 64);
      calendars.push_back(std::move(c));
    }
  }

  auto access_enc = crypto::Encrypt(options_.encryption_key, cred.access_token);
  auto refresh_enc = crypto::Encrypt(options_.encryption_key, cred.refresh_token);
  if (!access_enc.ok() || !refresh_enc.ok())
    return ApiError{503, "not_configured", "credential encryption failed; check the server's encryption key",
                    nullptr};

  const int64_t user_id = row->user_id;
  db_.Transaction([&](DbConnection& tx) {
    std::optional<DbRow> existing =
        tx.QueryOne("SELECT id FROM calendar_google_credentials WHERE user_id = ? FOR UPDATE", {user_id});
    int64_t credential_id = 0;
    if (existing) {
      credential_id = existing->Int(1);
      // Google leaves refresh_token out when it has already issued one: keep the stored one then.
      if (cred.refresh_token.empty()) {
        tx.Exec(
            "UPDATE calendar_google_credentials SET access_token_enc = ?, access_expires_at = ?,"
            " updated_at = UTC_TIMESTAMP(3) WHERE id = ?",
            {*access_enc, cred.expires_at, credential_id});
      } else {
        tx.Exec(
            "UPDATE calendar_google_credentials SET access_token_enc = ?, access_expires_at = ?,"
            " updated_at = UTC_TIMESTAMP(3), refresh_token_enc = ? WHERE id = ?",
            {*access_enc, cred.expires_at, *refresh_enc, credential_id});
      }
    } else {
      tx.Exec(
          "INSERT INTO calendar_google_credentials (user_id, access_token_enc, refresh_token_enc, "
          "access_expires_at,"
          " created_at, updated_at) VALUES (?, ?, ?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))",
          {user_id, *access_enc, *refresh_enc, cred.expires_at});
      credential_id = tx.LastInsertId();
    }
    tx.Exec("DELETE FROM calendar_google_calendars WHERE user_id = ?", {user_id});
    std::vector<std::vector<DbValue>> rows;
    for (GoogleCalendar& c : calendars) {
      c.credential_id = credential_id;
      rows.push_back({user_id, c.external_id, credential_id, c.name, c.primary, c.read_only, c.time_zone,
                      rows.size()});
    }
    tx.InsertRows(
        "INSERT INTO calendar_google_calendars (user_id, external_id, credential_id, name, is_primary, read_only,"
        " time_zone, position)",
        rows, " ON DUPLICATE KEY UPDATE name = VALUES(name)");
    // A destination that is no longer in the list (or no longer writable) is dropped.
    tx.Exec(
        "DELETE FROM calendar_destinations WHERE user_id = ? AND integration = 'google_calendar' AND NOT "
        "EXISTS"
        " (SELECT 1 FROM calendar_google_calendars c WHERE c.user_id = ? AND c.external_id ="
        " calendar_destinations.external_id AND c.read_only = 0)",
        {user_id, user_id});
  });
  logger_.Info("google calendar connected", {{"user_id", user_id}, {"calendars", calendars.size()}});

  if (!row->redir.empty()) return SaveResult{row->redir, nullptr};
  Json out = Json::array();
  for (const GoogleCalendar& c : calendars) out.push_back(CalendarJson(c, std::nullopt));
  return SaveResult{"", Json{{"calendars", out}}};
}

Outcome<std::optional<CalendarService::Credential>> CalendarService::LoadCredential(int64_t user_id) {
  struct Row {
    int64_t id;
    std::string access, refresh;
    int64_t expires;
  };
  std::optional<Row> row = db_.Run([&](DbConnection& c) -> std::optional<Row> {
    std::optional<DbRow> r = c.QueryOne(
        "SELECT id, access_token_enc, refresh_token_enc, access_expires_at FROM calendar_google_credentials"
        " WHERE user_id = ?",
        {user_id});
    if (!r) return std::nullopt;
    return Row{r->Int(1), r->String(2), r->String(3), r->Int(4)};
  });
  if (!row) return std::optional<Credential>();
  if (auto e = RequireEncryption()) return *e;
  auto access = crypto::Decrypt(options_.encryption_key, row->access);
  auto refresh = crypto::Decrypt(options_.encryption_key, row->refresh);
  if (!access.ok() || !refresh.ok()) {
    logger_.Error("a stored Google credential cannot be decrypted (was the encryption key changed?)",
                  {{"user_id", user_id}});
    return ApiError{409, "reconnect_required",
                    "the stored Google credential cannot be used; connect the calendar again", nullptr};
  }
  return std::optional<Credential>(Credential{row->id, *access, *refresh, row->expires});
}

std::vector<CalendarService::GoogleCalendar> CalendarService::LoadCalendars(int64_t user_id) {
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

std::optional<ApiError> CalendarService::RefreshCredential(Credential& cred) {
  if (cred.refresh_token.empty())
    return ApiError{502, "bad_gateway", "Google gave no refresh token for this calendar; connect it again",
                    nullptr};
  const GoogleCall r = google_.Refresh(cred.refresh_token);
  if (!r.ok() || Str(r.body, "access_token").empty()) {
    ApiError e = GoogleFailure(r, "the token refresh");
    if (r.transport == FetchOutcome::kOk) e.message += "; connect the calendar again";
    return e;
  }
  cred.access_token = Str(r.body, "access_token");
  cred.expires_at = r.body.contains("expires_in") && r.body["expires_in"].is_number_integer()
                        ? Now() + r.body["expires_in"].get<int64_t>()
                        : 0;
  const std::string rotated = Str(r.body, "refresh_token");
  if (!rotated.empty()) cred.refresh_token = rotated;
  auto access_enc = crypto::Encrypt(options_.encryption_key, cred.access_token);
  auto refresh_enc = crypto::Encrypt(options_.encryption_key, cred.refresh_token);
  if (!access_enc.ok() || !refresh_enc.ok())
    return ApiError{503, "not_configured", "credential encryption failed", nullptr};
  db_.Transaction([&](DbConnection& tx) {
    tx.Exec(
        "UPDATE calendar_google_credentials SET access_token_enc = ?, refresh_token_enc = ?, "
        "access_expires_at = ?,"
        " updated_at = UTC_TIMESTAMP(3) WHERE id = ?",
        {*access_enc, *refresh_enc, cred.expires_at, cred.id});
  });
  return std::nullopt;
}

Outcome<GoogleCall> CalendarService::WithGoogle(Credential& cred,
                                                const std::function<GoogleCall(const std::string&)>& call) {
  bool refreshed = false;
  if (cred.expires_at > 0 && Now() + kExpirySlackSeconds >= cred.expires_at) {
    if (auto e = RefreshCredential(cred)) return *e;
    refreshed = true;
  }
  GoogleCall r = call(cred.access_token);
  if (r.unauthorized() && !refreshed) {
    if (auto e = RefreshCredential(cred)) return *e;
    r = call(cred.access_token);
  }
  return r;
}

Json CalendarService::CalendarJson(const GoogleCalendar& c,
                                   const std::optional<std::string>& destination) const {
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

Outcome<Json> CalendarService::ListCalendars(int64_t user_id) {
  const std::vector<GoogleCalendar> calendars = LoadCalendars(user_id);
  struct Feed {
    int64_t id;
    std::string url_enc, name, time_zone;
    bool read_only;
  };
  std::optional<std::string> destination;
  std::vector<Feed> feeds;
  db_.Run([&](DbConnection& c) {
    destination = Destination(c, user_id);
    for (const DbRow& r : c.Query(
             "SELECT id, url_enc, name, time_zone, read_only FROM calendar_ics_feeds WHERE user_id = ? ORDER BY id",
             {user_id})) {
      feeds.push_back(Feed{r.Int(1), r.String(2), r.String(3), r.String(4), r.Bool(5)});
    }
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
    if (encryption_configured()) {
      auto plain = crypto::Decrypt(options_.encryption_key, f.url_enc);
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

namespace {

// dateFrom/dateTo: a date (YYYY-MM-DD, in `zone`; dateTo's whole day is included) or an RFC 3339
// timestamp.
std::optional<UnixSeconds> ParseBound(const std::string& text, const TimeZone& zone, bool end) {
  if (auto d = ParseDate(text)) {
    CivilDate day = *d;
    if (end) day = CivilFromDays(DaysFromCivil(day) + 1);
    return zone.StartOfDay(day);
  }
  // An unencoded '+' of an offset arrives as a space after query decoding; take it back.
  std::string fixed = text;
  const size_t space = fixed.find(' ', 11);
  if (space != std::string::npos) fixed[space] = '+';
  return ParseRfc3339(fixed);
}

}  // namespace

Outcome<Json> CalendarService::BusyTimes(int64_t user_id, const std::optional<std::string>& date_from,
                                         const std::optional<std::string>& date_to,
                                         const std::optional<std::string>& time_zone) {
  std::shared_ptr<const TimeZone> zone = TimeZone::Utc();
  if (time_zone && !time_zone->empty()) {
    zone = TimeZone::Load(*time_zone);
    if (!zone) return Invalid("timeZone is not a known IANA time zone", "timeZone");
  }
  if (!date_from || date_from->empty())
    return Invalid("dateFrom is required (YYYY-MM-DD or ISO 8601)", "dateFrom");
  if (!date_to || date_to->empty()) return Invalid("dateTo is required (YYYY-MM-DD or ISO 8601)", "dateTo");
  auto from = ParseBound(*date_from, *zone, false);
  if (!from) return Invalid("dateFrom must be YYYY-MM-DD or an ISO 8601 timestamp with offset", "dateFrom");
  auto to = ParseBound(*date_to, *zone, true);
  if (!to) return Invalid("dateTo must be YYYY-MM-DD or an ISO 8601 timestamp with offset", "dateTo");
  if (*to <= *from) return Invalid("dateTo must be after dateFrom", "dateTo");
  if (*to - *from > kMaxBusyRangeSeconds) return Invalid("the range may span at most 93 days", "dateTo");

  struct Busy {
    UnixSeconds start, end;
    std::string source;
    Json credential_id;
    std::string external_id;
  };
  std::vector<Busy> busy;

  const std::vector<GoogleCalendar> calendars = LoadCalendars(user_id);
  if (!calendars.empty()) {
    auto loaded = LoadCredential(user_id);
    if (auto* e = std::get_if<ApiError>(&loaded)) return *e;
    auto& cred = std::get<std::optional<Credential>>(loaded);
    if (cred) {
      Json items = Json::array();
      for (const GoogleCalendar& c : calendars) {
        if (items.size() >= kMaxFreeBusyItems) break;
        items.push_back({{"id", c.external_id}});
      }
      const Json body = {
          {"timeMin", FormatUtc(*from)}, {"timeMax", FormatUtc(*to)}, {"timeZone", "UTC"}, {"items", items}};
      auto call = WithGoogle(*cred, [&](const std::string& token) { return google_.FreeBusy(token, body); });
      if (auto* e = std::get_if<ApiError>(&call)) return *e;
      const GoogleCall& r = std::get<GoogleCall>(call);
      if (!r.ok()) return GoogleFailure(r, "the free/busy query");
      if (r.body.contains("calendars") && r.body["calendars"].is_object()) {
        for (const auto& [id, entry] : r.body["calendars"].items()) {
          if (!entry.is_object() || !entry.contains("busy") || !entry["busy"].is_array()) continue;
          for (const Json& b : entry["busy"]) {
            if (!b.is_object()) continue;
            auto s = ParseRfc3339(Str(b, "start"));
            auto e = ParseRfc3339(Str(b, "end"));
            if (!s || !e || *e <= *s) continue;
            busy.push_back(Busy{*s, *e, "google_calendar", cred->id, id});
          }
        }
      }
    }
  }

  struct Feed {
    int64_t id;
    std::string url_enc;
  };
  std::vector<Feed> feeds = db_.Run([&](DbConnection& c) {
    std::vector<Feed> out;
    for (const DbRow& r : c.Query("SELECT id, url_enc FROM calendar_ics_feeds WHERE user_id = ? ORDER BY id", {user_id}))
      out.push_back(Feed{r.Int(1), r.String(2)});
    return out;
  });
  const auto deadline = std::chrono::steady_clock::now() + kIcsBudget;
  for (const Feed& f : feeds) {
    if (auto e = RequireEncryption()) return *e;
    const std::chrono::milliseconds timeout = Remaining(deadline);
    if (timeout.count() == 0)
      return ApiError{504, "gateway_timeout", "the ICS feeds took too long to download",
                      Json{{"credentialId", f.id}}};
    auto url = crypto::Decrypt(options_.encryption_key, f.url_enc);
    if (!url.ok())
      return ApiError{409, "reconnect_required", "a stored ICS feed cannot be read; save it again", nullptr};
    FetchRequest req;
    req.url = *url;
    req.timeout = timeout;
    req.max_response_bytes = kMaxIcsBytes;
    req.block_private_networks = !options_.ics_allow_private_networks;
    const FetchResult r = Fetch(req);
    std::string why;
    std::optional<IcsCalendar> cal;
    if (r.ok() && r.status == 200) cal = ParseIcs(r.body, &why);
    CountIcsFetch(r, cal.has_value());
    if (!cal) {
      if (r.outcome == FetchOutcome::kTimeout)
        return ApiError{504, "gateway_timeout",
                        "the ICS feed " + std::to_string(f.id) + " did not answer in time", nullptr};
      std::string detail = !r.ok() ? r.error : r.status != 200 ? "HTTP " + std::to_string(r.status) : why;
      return ApiError{502, "bad_gateway",
                      "the ICS feed " + std::to_string(f.id) + " could not be read: " + detail,
                      Json{{"credentialId", f.id}}};
    }
    for (const BusyInterval& b : IcsBusyTimes(*cal, *from, *to, *zone))
      busy.push_back(Busy{b.start, b.end, "ics_feed", f.id, ""});
  }

  std::sort(busy.begin(), busy.end(), [](const Busy& a, const Busy& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  });
  Json out = Json::array();
  for (const Busy& b : busy) {
    Json item = {{"start", FormatUtc(std::max(b.start, *from))},
                 {"end", FormatUtc(std::min(b.end, *to))},
                 {"source", b.source},
                 {"credentialId", b.credential_id}};
    if (!b.external_id.empty()) item["externalId"] = b.external_id;
    out.push_back(std::move(item));
  }
  return out;
}

Outcome<Json> CalendarService::SaveIcsFeeds(int64_t user_id, const Json& body) {
  if (auto e = RequireEncryption()) return *e;
  if (!body.contains("urls") || !body["urls"].is_array() || body["urls"].empty())
    return Invalid("urls must be a non-empty list of https URLs", "urls");
  const Json& urls = body["urls"];
  if (urls.size() > kMaxIcsUrlsPerRequest) return Invalid("at most 10 urls per request", "urls");
  bool read_only = true;
  if (body.contains("readOnly")) {
    if (!body["readOnly"].is_boolean()) return Invalid("readOnly must be a boolean", "readOnly");
    read_only = body["readOnly"].get<bool>();
  }
  struct Fetched {
    std::string url, name, time_zone;
  };
  std::vector<Fetched> fetched;
  std::set<std::string> seen;
  const auto deadline = std::chrono::steady_clock::now() + kIcsBudget;
  for (size_t i = 0; i < urls.size(); ++i) {
    const std::string field = "urls[" + std::to_string(i) + "]";
    if (!urls[i].is_string()) return Invalid("each url must be a string", field);
    const std::string url = urls[i].get<std::string>();
    if (url.empty() || url.size() > kMaxUrlLength || HasControlOrSpace(url))
      return Invalid("the url is empty, too long or contains spaces", field);
    auto parsed = ParseFeedUrl(url);
    if (!parsed) return Invalid("the url must be an absolute https URL without credentials", field);
    if (parsed->scheme != "https" &&
        !(parsed->scheme == "http" && options_.ics_allow_private_networks && IsLoopbackHost(parsed->host)))
      return Invalid("the url must use https", field);
    if (!seen.insert(url).second) continue;
    const std::chrono::milliseconds timeout = Remaining(deadline);
    if (timeout.count() == 0)
      return Invalid("the feeds took too long to download; save fewer at once", field);
    FetchRequest req;
    req.url = url;
    req.timeout = timeout;
    req.max_response_bytes = kMaxIcsBytes;
    req.block_private_networks = !options_.ics_allow_private_networks;
    const FetchResult r = Fetch(req);
    std::string why;
    std::optional<IcsCalendar> cal;
    if (r.ok() && r.status == 200) cal = ParseIcs(r.body, &why);
    CountIcsFetch(r, cal.has_value());
    if (!r.ok()) return Invalid("the feed could not be fetched: " + r.error, field);
    if (r.status != 200) return Invalid("the feed answered HTTP " + std::to_string(r.status), field);
    if (!cal) return Invalid("the feed is not an iCalendar file: " + why, field);
    std::string name = cal->name.empty() ? parsed->host : cal->name;
    if (name.size() > 255) name.resize(255);
    std::string tz = TimeZone::Load(cal->time_zone) ? cal->time_zone : "";
    fetched.push_back(Fetched{url, name, tz});
  }

  std::vector<std::string> encrypted;
  for (const Fetched& f : fetched) {
    auto enc = crypto::Encrypt(options_.encryption_key, f.url);
    if (!enc.ok()) return ApiError{503, "not_configured", "credential encryption failed", nullptr};
    encrypted.push_back(*enc);
  }
  std::optional<ApiError> limit = db_.Transaction([&](DbConnection& tx) -> std::optional<ApiError> {
    // Serializes concurrent saves of one user's feeds (the count below must hold).
    std::set<std::string> existing;
    for (const DbRow& r : tx.Query("SELECT url_hash FROM calendar_ics_feeds WHERE user_id = ? FOR UPDATE", {user_id}))
      existing.insert(r.String(1));
    size_t total = existing.size();
    for (const Fetched& f : fetched) total += existing.count(HashOf(f.url)) ? 0 : 1;
    if (total > kMaxIcsFeedsPerUser)
      return Invalid("a user may have at most " + std::to_string(kMaxIcsFeedsPerUser) + " ICS feeds", "urls");
    std::vector<std::vector<DbValue>> rows;
    for (size_t i = 0; i < fetched.size(); ++i) {
      rows.push_back({user_id, HashOf(fetched[i].url), encrypted[i], fetched[i].name, fetched[i].time_zone,
                      read_only});
    }
    tx.InsertRows("INSERT INTO calendar_ics_feeds (user_id, url_hash, url_enc, name, time_zone, read_only, created_at)",
                  rows,
                  " ON DUPLICATE KEY UPDATE url_enc = VALUES(url_enc), name = VALUES(name),"
                  " time_zone = VALUES(time_zone), read_only = VALUES(read_only)",
                  "(?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3))");
    return std::nullopt;
  });
  if (limit) return *limit;

  // Answer the saved feeds as calendar objects.
  Outcome<Json> all = ListCalendars(user_id);
  Json listed = std::holds_alternative<Json>(all) ? std::get<Json>(all) : Json::object();
  Json out = Json::array();
  for (const Fetched& f : fetched) {
    for (const Json& c : listed.value("calendars", Json::array())) {
      if (c.value("integration", "") == "ics_feed" && c.value("externalId", "") == f.url) out.push_back(c);
    }
  }
  return out;
}

Outcome<Json> CalendarService::SetDestination(int64_t user_id, const Json& body) {
  if (!body.contains("integration") || !body["integration"].is_string())
    return Invalid("integration is required (google_calendar)", "integration");
  if (body["integration"].get<std::string>() != "google_calendar")
    return Invalid("integration must be google_calendar (ICS feeds are read-only)", "integration");
  if (!body.contains("externalId") || !body["externalId"].is_string() ||
      body["externalId"].get<std::string>().empty() || body["externalId"].get<std::string>().size() > 255)
    return Invalid("externalId is required: the id of one of your connected Google calendars", "externalId");
  const std::string external_id = body["externalId"].get<std::string>();
  return db_.Transaction([&](DbConnection& tx) -> Outcome<Json> {
    std::optional<DbRow> r = tx.QueryOne(
        "SELECT credential_id, name, is_primary, read_only, time_zone FROM calendar_google_calendars"
        " WHERE user_id = ? AND external_id = ? FOR UPDATE",
        {user_id, external_id});
    if (!r) return NotFound("no connected Google calendar with this externalId");
    const int64_t credential_id = r->Int(1);
    const std::string name = r->String(2);
    const bool primary = r->Bool(3);
    const bool read_only = r->Bool(4);
    const std::string tz = r->String(5);
    if (read_only) return Invalid("this calendar is read-only; events cannot be written to it", "externalId");
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

Outcome<Json> CalendarService::GetEvent(int64_t user_id, const std::string& calendar,
                                        const std::string& event_uid) {
  if (calendar != "google") return Invalid("calendar must be google", "calendar");
  if (event_uid.empty() || event_uid.size() > kMaxEventUidLength || HasControlOrSpace(event_uid))
    return Invalid("eventUid is empty, too long or has spaces", "eventUid");
  const ApiError not_found = NotFound("no event with this eventUid in your calendars");
  const std::vector<GoogleCalendar> calendars = LoadCalendars(user_id);
  if (calendars.empty()) return not_found;

  // Search order (DESIGN §7): the booking reference's calendar, the destination, primary.
  std::vector<std::string> order;
  if (reference_lookup_) {
    if (auto id = reference_lookup_(user_id, event_uid)) order.push_back(*id);
  }
  std::optional<std::string> destination =
      db_.Run([&](DbConnection& c) -> std::optional<std::string> { return Destination(c, user_id); });
  if (destination) order.push_back(*destination);
  for (const GoogleCalendar& c : calendars) {
    if (c.primary) order.push_back(c.external_id);
  }
  std::vector<const GoogleCalendar*> search;
  for (const std::string& id : order) {
    auto it = std::find_if(calendars.begin(), calendars.end(),
                           [&](const GoogleCalendar& c) { return c.external_id == id; });
    if (it == calendars.end()) continue;  // only calendars the caller connected
    if (std::find(search.begin(), search.end(), &*it) == search.end()) search.push_back(&*it);
  }
  if (search.empty()) return not_found;

  auto loaded = LoadCredential(user_id);
  if (auto* e = std::get_if<ApiError>(&loaded)) return *e;
  auto& cred = std::get<std::optional<Credential>>(loaded);
  if (!cred) return not_found;
  for (const GoogleCalendar* c : search) {
    auto call = WithGoogle(
        *cred, [&](const std::string& token) { return google_.GetEvent(token, c->external_id, event_uid); });
    if (auto* e = std::get_if<ApiError>(&call)) return *e;
    const GoogleCall& r = std::get<GoogleCall>(call);
    if (r.not_found() || (r.transport == FetchOutcome::kOk && r.status == 403)) continue;
    if (!r.ok()) return GoogleFailure(r, "the event lookup");
    return MapGoogleEvent(r.body, c->time_zone);
  }
  return not_found;
}

}  // namespace rendezvous::calendar
