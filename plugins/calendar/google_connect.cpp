#include <vector>

#include "calendar_list.hpp"
#include "google_connection.hpp"
#include "rendezvous/crypto.hpp"
#include "rendezvous/text.hpp"
#include "rendezvous/time.hpp"
#include "rendezvous/url.hpp"
#include "url_policy.hpp"

namespace rendezvous::calendar {
namespace {

constexpr size_t kMaxStateLength = 128;
constexpr size_t kMaxCodeLength = 2048;
constexpr size_t kMaxCalendars = 250;
constexpr size_t kMaxTimeZoneBytes = 64;

constexpr const char* kStartPath = "/settings/calendars/google/start";
constexpr const char* kSavePath = "/v2/calendars/google/save";

Status InvalidState() {
  return Status::Invalid("state", "the state is unknown, expired or already used; start again at /v2/calendars/google/connect")
      .WithReason("invalid_state");
}

}  // namespace

GoogleConnection::GoogleConnection(Database& db, Logger& logger, const GoogleApi& google,
                                   GoogleCredentials& credentials, BusyCache& busy_cache,
                                   const CalendarOptions& options)
    : db_(db), logger_(logger), google_(google), credentials_(credentials), busy_cache_(busy_cache), options_(options) {}

Result<std::string> GoogleConnection::Connect(int64_t user_id, const std::optional<std::string>& redir) {
  if (Status s = credentials_.RequireGoogle(); !s.ok()) return s;
  if (Status s = RequireEncryption(options_.encryption_key); !s.ok()) return s;
  std::string target = redir.value_or("");
  if (!target.empty() && !IsAllowedRedirect(target, options_.base_url, options_.app_url))
    return Status::Invalid("redir", "redir must be a URL on " + options_.app_url + " or " + options_.base_url);
  const std::string state = crypto::RandomToken(32);
  db_.Transaction([&](DbConnection& tx) {
    tx.Exec("DELETE FROM calendar_connect_states WHERE expires_at < UTC_TIMESTAMP(3) - INTERVAL 1 DAY LIMIT 100");
    tx.Exec(
        "INSERT INTO calendar_connect_states (state_hash, user_id, redir, created_at, expires_at)"
        " VALUES (?, ?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL ? SECOND)",
        {crypto::Sha256Hex(state), user_id, target, kStateTtlSeconds});
  });
  return options_.app_url + kStartPath + "?state=" + PercentEncode(state);
}

std::string GoogleConnection::BindingCookieName(const std::string& state) {
  return "rdv_gcal_" + crypto::Sha256Hex(state).substr(0, 16);
}

Result<GoogleConnection::StartResult> GoogleConnection::StartConnect(int64_t session_user_id,
                                                                     const std::string& state) {
  if (Status s = credentials_.RequireGoogle(); !s.ok()) return s;
  if (state.empty() || state.size() > kMaxStateLength) return InvalidState();
  const std::string secret = crypto::RandomToken(32);
  const std::string state_hash = crypto::Sha256Hex(state);
  Status bound = db_.Transaction([&](DbConnection& tx) -> Status {
    std::optional<DbRow> found = tx.QueryOne(
        "SELECT user_id FROM calendar_connect_states WHERE state_hash = ? AND used_at IS NULL"
        " AND expires_at > UTC_TIMESTAMP(3) FOR UPDATE",
        {state_hash});
    if (!found) return InvalidState();
    if (found->Int(1) != session_user_id)
      return Status(ErrorCode::kForbidden,
                    "this connect link was made for another account: sign in as the account that asked for it,"
                    " or start again from that account")
          .WithReason("wrong_account");
    tx.Exec("UPDATE calendar_connect_states SET binding_hash = ? WHERE state_hash = ?",
            {crypto::Sha256Hex(secret), state_hash});
    return Status::Ok();
  });
  if (!bound.ok()) return bound;
  return StartResult{google_.AuthUrl(options_.base_url + kSavePath, state), BindingCookieName(state), secret};
}

Result<GoogleConnection::SaveResult> GoogleConnection::Save(const std::string& code, const std::string& state,
                                                            const std::string& google_error,
                                                            const std::optional<std::string>& binding_cookie) {
  if (Status s = credentials_.RequireGoogle(); !s.ok()) return s;
  if (Status s = RequireEncryption(options_.encryption_key); !s.ok()) return s;
  if (state.empty() || state.size() > kMaxStateLength) return Status::Invalid("state", "state is missing or invalid");
  if (google_error.empty() && (code.empty() || code.size() > kMaxCodeLength))
    return Status::Invalid("code", "code is missing or invalid");

  struct StateRow {
    int64_t user_id = 0;
    std::string redir;
    bool bound = false;  // this browser holds the state's binding cookie
  };
  const std::string state_hash = crypto::Sha256Hex(state);
  const std::string cookie_hash =
      binding_cookie && !binding_cookie->empty() && binding_cookie->size() <= kMaxStateLength
          ? crypto::Sha256Hex(*binding_cookie)
          : "";
  std::optional<StateRow> row = db_.Transaction([&](DbConnection& tx) -> std::optional<StateRow> {
    std::optional<DbRow> found = tx.QueryOne(
        "SELECT user_id, redir, binding_hash FROM calendar_connect_states WHERE state_hash = ? AND used_at IS NULL"
        " AND expires_at > UTC_TIMESTAMP(3) FOR UPDATE",
        {state_hash});
    if (!found) return std::nullopt;
    const std::string binding_hash = found->String(3);
    StateRow r{found->Int(1), found->String(2), false};
    r.bound = !binding_hash.empty() && !cookie_hash.empty() && crypto::ConstantTimeEquals(cookie_hash, binding_hash);
    // Another browser cannot use the state up either: the user's own flow stays possible.
    if (r.bound)
      tx.Exec("UPDATE calendar_connect_states SET used_at = UTC_TIMESTAMP(3) WHERE state_hash = ?", {state_hash});
    return r;
  });
  if (!row) return InvalidState();
  if (!row->bound) {
    logger_.Warn("google calendar connect refused: finished in a browser that did not start it",
                 {{"user_id", row->user_id}});
    return Status(ErrorCode::kForbidden,
                  "this Google connection was not started in this browser: open the connect link in the browser"
                  " where you are signed in to the account being connected")
        .WithReason("connect_browser_mismatch");
  }

  if (!google_error.empty()) {
    const std::string error = google_error.substr(0, 64);
    if (!row->redir.empty()) return SaveResult{net::AppendQuery(row->redir, {{"error", error}}), nullptr};
    return Status::Invalid("error", "Google did not grant access: " + error).WithReason("google_denied");
  }

  const GoogleCall token = google_.ExchangeCode(code, options_.base_url + kSavePath);
  if (!token.ok()) return GoogleFailure(token, "the code exchange");
  GoogleCredential cred;
  cred.access_token = StringField(token.body, "access_token");
  cred.refresh_token = StringField(token.body, "refresh_token");
  if (cred.access_token.empty())
    return GoogleFailure(GoogleCall{FetchOutcome::kOk, 200, nullptr, ""}, "the code exchange");
  if (token.body.contains("expires_in") && token.body["expires_in"].is_number_integer())
    cred.expires_at = time::Now() / 1000 + token.body["expires_in"].get<int64_t>();

  cred.user_id = row->user_id;
  // A token Google just issued may still be refused (401): refreshed once like any other.
  auto list_call = credentials_.WithGoogle(cred, [&](const std::string& access) { return google_.CalendarList(access); });
  if (!list_call.ok()) return list_call.status();
  const GoogleCall& list = *list_call;
  if (!list.ok()) return GoogleFailure(list, "the calendar list");
  std::vector<GoogleCalendar> calendars;
  if (list.body.contains("items") && list.body["items"].is_array()) {
    for (const Json& item : list.body["items"]) {
      if (!item.is_object() || calendars.size() >= kMaxCalendars) continue;
      GoogleCalendar c;
      c.external_id = StringField(item, "id");
      if (c.external_id.empty() || c.external_id.size() > 255) continue;
      c.name = StringField(item, "summaryOverride");
      if (c.name.empty()) c.name = StringField(item, "summary");
      c.name = text::TruncateUtf8(text::SanitizeUtf8(c.name), kMaxNameBytes);
      c.primary = item.value("primary", false) == true;
      const std::string role = StringField(item, "accessRole");
      c.read_only = !(role == "owner" || role == "writer");
      c.time_zone = text::TruncateUtf8(StringField(item, "timeZone"), kMaxTimeZoneBytes);
      calendars.push_back(std::move(c));
    }
  }

  auto access_enc = crypto::Encrypt(options_.encryption_key, cred.access_token);
  auto refresh_enc = crypto::Encrypt(options_.encryption_key, cred.refresh_token);
  if (!access_enc.ok() || !refresh_enc.ok())
    return Status(ErrorCode::kUnavailable, "credential encryption failed; check the server's encryption key")
        .WithReason("not_configured");

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
            " invalid_at = NULL, updated_at = UTC_TIMESTAMP(3) WHERE id = ?",
            {*access_enc, cred.expires_at, credential_id});
      } else {
        tx.Exec(
            "UPDATE calendar_google_credentials SET access_token_enc = ?, access_expires_at = ?,"
            " invalid_at = NULL, updated_at = UTC_TIMESTAMP(3), refresh_token_enc = ? WHERE id = ?",
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
  busy_cache_.Forget(user_id);
  logger_.Info("google calendar connected", {{"user_id", user_id}, {"calendars", calendars.size()}});

  if (!row->redir.empty()) return SaveResult{row->redir, nullptr};
  Json out = Json::array();
  for (const GoogleCalendar& c : calendars) out.push_back(CalendarList::CalendarJson(c, std::nullopt));
  return SaveResult{"", Json{{"calendars", out}}};
}

}  // namespace rendezvous::calendar
