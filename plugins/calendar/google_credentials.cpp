#include "google_credentials.hpp"

#include "calendar_options.hpp"
#include "json_fields.hpp"
#include "rendezvous/crypto.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::calendar {
namespace {

constexpr int64_t kExpirySlackSeconds = 60;

int64_t NowSeconds() {
  return time::Now() / 1000;
}

// Google's token endpoint refusing the refresh token itself (revoked, expired, password changed):
// only a new consent helps. Other failures (invalid_client, 5xx) are the server's or Google's.
bool RefreshTokenRefused(const GoogleCall& r) {
  return r.transport == FetchOutcome::kOk && r.status >= 400 && r.status < 500 &&
         StringField(r.body, "error") == "invalid_grant";
}

}  // namespace

GoogleCredentials::GoogleCredentials(Database& db, Logger& logger, const GoogleApi& google, std::string encryption_key,
                                     CalendarMetrics& metrics)
    : db_(db), logger_(logger), google_(google), encryption_key_(std::move(encryption_key)), metrics_(metrics) {}

Status GoogleCredentials::RequireGoogle() const {
  if (google_configured()) return Status::Ok();
  return Status(ErrorCode::kUnavailable,
                "Google Calendar is not configured on this server (plugins.calendar.google.client_id)")
      .WithReason("not_configured");
}

Result<std::optional<GoogleCredential>> GoogleCredentials::Load(int64_t user_id) {
  struct Row {
    int64_t id;
    std::string access, refresh;
    int64_t expires;
    bool invalid;
  };
  std::optional<Row> row = db_.Run([&](DbConnection& c) -> std::optional<Row> {
    std::optional<DbRow> r = c.QueryOne(
        "SELECT id, access_token_enc, refresh_token_enc, access_expires_at, invalid_at IS NOT NULL"
        " FROM calendar_google_credentials WHERE user_id = ?",
        {user_id});
    if (!r) return std::nullopt;
    return Row{r->Int(1), r->String(2), r->String(3), r->Int(4), r->Bool(5)};
  });
  if (!row) return std::optional<GoogleCredential>();
  if (row->invalid)
    return ReconnectRequired("Google no longer accepts this calendar connection; connect the calendar again");
  if (Status s = RequireEncryption(encryption_key_); !s.ok()) return s;
  auto access = crypto::Decrypt(encryption_key_, row->access);
  auto refresh = crypto::Decrypt(encryption_key_, row->refresh);
  if (!access.ok() || !refresh.ok()) {
    logger_.Error("a stored Google credential cannot be decrypted (was the encryption key changed?)",
                  {{"user_id", user_id}});
    return ReconnectRequired("the stored Google credential cannot be used; connect the calendar again");
  }
  return std::optional<GoogleCredential>(GoogleCredential{row->id, user_id, *access, *refresh, row->expires, row->refresh});
}

void GoogleCredentials::MarkInvalid(const GoogleCredential& cred, const std::string& why) {
  logger_.Warn("google refused the calendar credential; the user must connect again",
               {{"user_id", cred.user_id}, {"reason", why}});
  if (cred.id == 0) return;  // not stored yet (the connect flow)
  // Only the credential this request loaded: a connect that replaced it meanwhile stays valid.
  const uint64_t marked = db_.Transaction([&](DbConnection& tx) {
    return tx.Exec(
        "UPDATE calendar_google_credentials SET invalid_at = UTC_TIMESTAMP(3), updated_at = UTC_TIMESTAMP(3)"
        " WHERE id = ? AND refresh_token_enc = ? AND invalid_at IS NULL",
        {cred.id, cred.stored_refresh_enc});
  });
  if (marked > 0) metrics_.CredentialInvalidated();
}

Status GoogleCredentials::Refresh(GoogleCredential& cred) {
  if (cred.refresh_token.empty()) {
    MarkInvalid(cred, "no refresh token");
    return ReconnectRequired("Google gave no refresh token for this calendar; connect it again");
  }
  const GoogleCall r = google_.Refresh(cred.refresh_token);
  if (RefreshTokenRefused(r)) {
    MarkInvalid(cred, r.GoogleMessage());
    return ReconnectRequired("Google refused to renew access to this calendar (" + r.GoogleMessage() +
                             "); connect the calendar again");
  }
  if (!r.ok() || StringField(r.body, "access_token").empty()) return GoogleFailure(r, "the token refresh");
  cred.access_token = StringField(r.body, "access_token");
  cred.expires_at = r.body.contains("expires_in") && r.body["expires_in"].is_number_integer()
                        ? NowSeconds() + r.body["expires_in"].get<int64_t>()
                        : 0;
  const std::string rotated = StringField(r.body, "refresh_token");
  if (!rotated.empty()) cred.refresh_token = rotated;
  if (cred.id == 0) return Status::Ok();  // the connect flow stores it with the rest
  auto access_enc = crypto::Encrypt(encryption_key_, cred.access_token);
  auto refresh_enc = crypto::Encrypt(encryption_key_, cred.refresh_token);
  if (!access_enc.ok() || !refresh_enc.ok())
    return Status(ErrorCode::kUnavailable, "credential encryption failed").WithReason("not_configured");
  db_.Transaction([&](DbConnection& tx) {
    tx.Exec(
        "UPDATE calendar_google_credentials SET access_token_enc = ?, refresh_token_enc = ?, "
        "access_expires_at = ?,"
        " updated_at = UTC_TIMESTAMP(3) WHERE id = ?",
        {*access_enc, *refresh_enc, cred.expires_at, cred.id});
  });
  cred.stored_refresh_enc = *refresh_enc;
  return Status::Ok();
}

Result<GoogleCall> GoogleCredentials::WithGoogle(GoogleCredential& cred,
                                                 const std::function<GoogleCall(const std::string&)>& call) {
  bool refreshed = false;
  if (cred.expires_at > 0 && NowSeconds() + kExpirySlackSeconds >= cred.expires_at) {
    if (Status s = Refresh(cred); !s.ok()) return s;
    refreshed = true;
  }
  GoogleCall r = call(cred.access_token);
  if (r.unauthorized() && !refreshed) {
    if (Status s = Refresh(cred); !s.ok()) return s;
    r = call(cred.access_token);
  }
  return r;
}

}  // namespace rendezvous::calendar
