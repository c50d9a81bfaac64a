#include "calendar_service.hpp"
#include "json_fields.hpp"
#include "rendezvous/crypto.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::calendar {
namespace {

constexpr int64_t kExpirySlackSeconds = 60;

int64_t NowSeconds() {
  return time::Now() / 1000;
}

}  // namespace

Result<std::optional<CalendarService::Credential>> CalendarService::LoadCredential(int64_t user_id) {
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
  if (Status s = RequireEncryption(); !s.ok()) return s;
  auto access = crypto::Decrypt(options_.encryption_key, row->access);
  auto refresh = crypto::Decrypt(options_.encryption_key, row->refresh);
  if (!access.ok() || !refresh.ok()) {
    logger_.Error("a stored Google credential cannot be decrypted (was the encryption key changed?)",
                  {{"user_id", user_id}});
    return Status::Conflict("the stored Google credential cannot be used; connect the calendar again")
        .WithReason("reconnect_required");
  }
  return std::optional<Credential>(Credential{row->id, *access, *refresh, row->expires});
}

Status CalendarService::RefreshCredential(Credential& cred) {
  if (cred.refresh_token.empty())
    return Status(ErrorCode::kUpstreamFailed, "Google gave no refresh token for this calendar; connect it again");
  const GoogleCall r = google_.Refresh(cred.refresh_token);
  if (!r.ok() || StringField(r.body, "access_token").empty()) {
    Status failure = GoogleFailure(r, "the token refresh");
    if (r.transport != FetchOutcome::kOk) return failure;
    return Status(failure.code(), failure.message() + "; connect the calendar again");
  }
  cred.access_token = StringField(r.body, "access_token");
  cred.expires_at = r.body.contains("expires_in") && r.body["expires_in"].is_number_integer()
                        ? NowSeconds() + r.body["expires_in"].get<int64_t>()
                        : 0;
  const std::string rotated = StringField(r.body, "refresh_token");
  if (!rotated.empty()) cred.refresh_token = rotated;
  auto access_enc = crypto::Encrypt(options_.encryption_key, cred.access_token);
  auto refresh_enc = crypto::Encrypt(options_.encryption_key, cred.refresh_token);
  if (!access_enc.ok() || !refresh_enc.ok())
    return Status(ErrorCode::kUnavailable, "credential encryption failed").WithReason("not_configured");
  db_.Transaction([&](DbConnection& tx) {
    tx.Exec(
        "UPDATE calendar_google_credentials SET access_token_enc = ?, refresh_token_enc = ?, "
        "access_expires_at = ?,"
        " updated_at = UTC_TIMESTAMP(3) WHERE id = ?",
        {*access_enc, *refresh_enc, cred.expires_at, cred.id});
  });
  return Status::Ok();
}

Result<GoogleCall> CalendarService::WithGoogle(Credential& cred,
                                               const std::function<GoogleCall(const std::string&)>& call) {
  bool refreshed = false;
  if (cred.expires_at > 0 && NowSeconds() + kExpirySlackSeconds >= cred.expires_at) {
    if (Status s = RefreshCredential(cred); !s.ok()) return s;
    refreshed = true;
  }
  GoogleCall r = call(cred.access_token);
  if (r.unauthorized() && !refreshed) {
    if (Status s = RefreshCredential(cred); !s.ok()) return s;
    r = call(cred.access_token);
  }
  return r;
}

}  // namespace rendezvous::calendar
