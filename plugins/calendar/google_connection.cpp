#include "google_connection.hpp"

#include "rendezvous/crypto.hpp"

namespace rendezvous::calendar {

Result<Json> GoogleConnection::Check(int64_t user_id) {
  const Json reconnect = {{"connected", true}, {"valid", false}, {"reconnectRequired", true}};
  auto loaded = credentials_.Load(user_id);
  if (!loaded.ok()) {
    if (loaded.status().reason() == "reconnect_required") return reconnect;
    return loaded.status();
  }
  std::optional<GoogleCredential>& cred = *loaded;
  if (!cred) return Json{{"connected", false}, {"valid", false}, {"reconnectRequired", false}};
  if (Status s = credentials_.RequireGoogle(); !s.ok()) return s;
  auto call = credentials_.WithGoogle(*cred, [&](const std::string& token) { return google_.CalendarList(token); });
  if (!call.ok()) {
    if (call.status().reason() == "reconnect_required") return reconnect;
    return call.status();
  }
  if (!call->ok()) return GoogleFailure(*call, "the connection check");
  return Json{{"connected", true}, {"valid", true}, {"reconnectRequired", false}};
}

Result<Json> GoogleConnection::Disconnect(int64_t user_id, std::optional<int64_t> credential_id) {
  struct Row {
    int64_t id;
    std::string access_enc, refresh_enc;
    bool invalid;
  };
  std::optional<Row> row = db_.Run([&](DbConnection& c) -> std::optional<Row> {
    std::optional<DbRow> r = c.QueryOne(
        "SELECT id, access_token_enc, refresh_token_enc, invalid_at IS NOT NULL FROM "
        "calendar_google_credentials"
        " WHERE user_id = ?",
        {user_id});
    if (!r) return std::nullopt;
    return Row{r->Int(1), r->String(2), r->String(3), r->Bool(4)};
  });
  // Cal.com names the credential; it must be the caller's Google credential.
  if (credential_id && (!row || row->id != *credential_id))
    return Status::NotFound("no Google calendar credential of yours has this id");
  if (!row) return Json{{"disconnected", false}, {"revoked", false}};

  // Revoking the refresh token ends the whole grant at Google. Best effort: the user asked for the
  // connection to go, so it goes from here even when Google cannot be reached (the answer says so).
  bool revoked = false;
  if (credentials_.google_configured() && EncryptionConfigured(options_.encryption_key)) {
    auto refresh = crypto::Decrypt(options_.encryption_key, row->refresh_enc);
    auto access = crypto::Decrypt(options_.encryption_key, row->access_enc);
    const std::string token = refresh.ok() && !refresh->empty() ? *refresh : access.ok() ? *access : "";
    if (!token.empty()) {
      const GoogleCall r = google_.Revoke(token);
      // 400 invalid_token: Google no longer knows the token, which is what revoking wants.
      revoked = r.transport == FetchOutcome::kOk &&
                (r.status == 200 || (r.status == 400 && StringField(r.body, "error") == "invalid_token"));
    }
  }
  db_.Transaction([&](DbConnection& tx) {
    tx.Exec("DELETE FROM calendar_google_calendars WHERE user_id = ?", {user_id});
    tx.Exec("DELETE FROM calendar_destinations WHERE user_id = ? AND integration = 'google_calendar'", {user_id});
    tx.Exec("DELETE FROM calendar_google_credentials WHERE id = ?", {row->id});
  });
  busy_cache_.Forget(user_id);
  logger_.Info("google calendar disconnected", {{"user_id", user_id}, {"revoked", revoked}});
  // Cal.com's deleted credential, plus what became of the connection here.
  return Json{{"id", row->id},        {"type", "google_calendar"},  {"userId", user_id},
              {"teamId", nullptr},    {"appId", "google-calendar"}, {"invalid", row->invalid},
              {"disconnected", true}, {"revoked", revoked}};
}

}  // namespace rendezvous::calendar
