#include "identity/verified_resources.hpp"

#include <algorithm>
#include <utility>

#include "identity/user_store.hpp"
#include "rendezvous/digits.hpp"

namespace rendezvous::core {
namespace {

using Json = nlohmann::json;

// Table and column of a kind's verified resources (constants, never request input).
struct KindSql {
  const char* table;
  const char* column;  // also the JSON field and the request body field
  const char* noun;    // for messages
};

KindSql SqlOf(VerifiedKind kind) {
  return kind == VerifiedKind::kEmail ? KindSql{"verified_emails", "email", "email"}
                                      : KindSql{"verified_phones", "phone", "phone number"};
}

Status NotSignedIn() {
  return Status(ErrorCode::kUnauthenticated, "missing or invalid credentials");
}

// A verified resource as the API shows it: {id, email|phone, userId, createdAt}.
Json ResourceJson(VerifiedKind kind, const DbRow& row) {
  return Json{{"id", row.Int(1)},
              {SqlOf(kind).column, row.String(2)},
              {"userId", row.Int(3)},
              {"createdAt", SqlTimeToIso(row.String(4))}};
}

// The user's resource matching `where` (one condition with one `?`, bound to `value`).
std::optional<Json> FindResource(DbConnection& conn, VerifiedKind kind, int64_t user_id,
                                 const std::string& where, const DbValue& value) {
  const KindSql k = SqlOf(kind);
  std::optional<DbRow> row = conn.QueryOne(std::string("SELECT id, ") + k.column + ", user_id, created_at FROM " +
                                               k.table + " WHERE user_id = ? AND " + where,
                                           {user_id, value});
  if (!row) return std::nullopt;
  return ResourceJson(kind, *row);
}

// Reads the body's target field (email or phone) and normalises it.
Result<std::string> BodyTarget(VerifiedKind kind, const Json& body) {
  const char* field = SqlOf(kind).column;
  auto it = body.find(field);
  if (it == body.end() || !it->is_string()) {
    return Status(ErrorCode::kInvalid, std::string(field) + " is required and must be a string");
  }
  const auto& text = it->get_ref<const std::string&>();
  if (text.size() > 320) return Status(ErrorCode::kInvalid, std::string(field) + " is too long");
  return kind == VerifiedKind::kEmail ? NormalizeVerifiedEmail(text) : NormalizePhoneNumber(text);
}

enum class RequestResult { kQueued, kRateLimited, kNoUser };
struct RequestOutcome {
  RequestResult result = RequestResult::kQueued;
  std::chrono::seconds retry_after{0};
  bool per_user = false;  // which limit was hit
};

enum class VerifyResult { kVerified, kNoCode, kUsed, kLocked, kExpired, kWrong };
struct VerifyOutcome {
  VerifyResult result = VerifyResult::kNoCode;
  int attempts_left = 0;
  Json resource;
};

}  // namespace

VerifiedResourceService::VerifiedResourceService(Database& db, Mailer& mailer, SmsSender& sms, Logger& logger)
    : db_(db), mailer_(mailer), sms_(sms), logger_(logger) {}

Result<Json> VerifiedResourceService::RequestCode(VerifiedKind kind, int64_t user_id, const Json& body) {
  const char* field = SqlOf(kind).column;
  auto target = BodyTarget(kind, body);
  if (!target.ok()) return Status::Invalid(field, target.status().message());

  const std::string kind_name(VerifiedKindName(kind));
  const std::string code = GenerateVerificationCode();
  const std::string code_hash = HashVerificationCode(kind, user_id, *target, code);

  RequestOutcome outcome = db_.Transaction([&](DbConnection& tx) {
    RequestOutcome out;
    // One request of a user at a time: the counts below cannot be raced past the limits.
    if (!tx.QueryOne("SELECT id FROM users WHERE id = ? FOR UPDATE", {user_id})) {
      // The credential outlived its user (another instance's cache): nothing to attach a code to.
      out.result = RequestResult::kNoUser;
      return out;
    }
    tx.Exec(
        "DELETE FROM verification_requests WHERE user_id = ? AND requested_at <= UTC_TIMESTAMP(3) - INTERVAL "
        "? SECOND",
        {user_id, kVerificationRequestWindow.count()});

    auto window = [&](bool per_target) {
      const std::string sql = std::string("SELECT COUNT(*), COALESCE(TIMESTAMPDIFF(SECOND, MIN(requested_at), "
                                          "UTC_TIMESTAMP(3)), 0) FROM verification_requests "
                                          "WHERE user_id = ? AND kind = ?") +
                              (per_target ? " AND target = ?" : "");
      std::optional<DbRow> row = per_target ? tx.QueryOne(sql, {user_id, kind_name, *target})
                                            : tx.QueryOne(sql, {user_id, kind_name});
      return std::pair{static_cast<int>(row->Int(1)), std::chrono::seconds(row->Int(2))};
    };
    auto [target_count, target_age] = window(true);
    if (auto wait = VerificationRequestRetryAfter(target_count, target_age)) {
      out.result = RequestResult::kRateLimited;
      out.retry_after = *wait;
      return out;
    }
    auto [user_count, user_age] = window(false);
    if (user_count >= kMaxVerificationRequestsPerUserHour) {
      out.result = RequestResult::kRateLimited;
      out.retry_after = std::max(std::chrono::seconds(1), kVerificationRequestWindow - user_age);
      out.per_user = true;
      return out;
    }

    tx.Exec(
        "INSERT INTO verification_requests (user_id, kind, target, requested_at) VALUES (?, ?, ?, "
        "UTC_TIMESTAMP(3))",
        {user_id, kind_name, *target});
    tx.Exec(
        "INSERT INTO verification_codes (user_id, kind, target, code_hash, attempts, created_at, expires_at, "
        "consumed_at) VALUES (?, ?, ?, ?, 0, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL ? SECOND, NULL) "
        "ON DUPLICATE KEY UPDATE code_hash = VALUES(code_hash), attempts = 0, created_at = "
        "VALUES(created_at), "
        "expires_at = VALUES(expires_at), consumed_at = NULL",
        {user_id, kind_name, *target, code_hash, kVerificationCodeTtl.count()});

    const std::string text = "Your Rendezvous verification code is " + code +
                             ". It expires in 10 minutes. If you did not ask for it, ignore this message.";
    if (kind == VerifiedKind::kEmail) {
      mailer_.Send(tx, Mail{*target, "Your verification code", text});
    } else {
      sms_.Send(tx, Sms{*target, text});
    }
    return out;
  });

  if (outcome.result == RequestResult::kNoUser) return NotSignedIn();
  if (outcome.result == RequestResult::kRateLimited) {
    const std::string seconds = std::to_string(outcome.retry_after.count());
    const std::string message =
        outcome.per_user
            ? "too many verification codes requested in the last hour; try again in " + seconds + " seconds"
            : "too many verification codes requested for this " + std::string(SqlOf(kind).noun) +
                  " in the last hour; try again in " + seconds + " seconds";
    return Status::RateLimited(message, static_cast<int>(outcome.retry_after.count()))
        .WithDetails(Json{{"retryAfter", outcome.retry_after.count()}});
  }
  logger_.Info("verification code requested", {{"user_id", user_id}, {"kind", kind_name}});
  return Json{{field, *target}, {"expiresIn", kVerificationCodeTtl.count()}};
}

Result<Json> VerifiedResourceService::VerifyCode(VerifiedKind kind, int64_t user_id, const Json& body) {
  const KindSql k = SqlOf(kind);
  auto target = BodyTarget(kind, body);
  if (!target.ok()) return Status::Invalid(k.column, target.status().message());
  auto code_it = body.find("code");
  if (code_it == body.end() || !code_it->is_string() ||
      !IsWellFormedVerificationCode(code_it->get_ref<const std::string&>())) {
    return Status::Invalid("code", "code is required: the six digits sent to the " + std::string(k.noun));
  }
  const std::string kind_name(VerifiedKindName(kind));
  const std::string presented = HashVerificationCode(kind, user_id, *target, code_it->get<std::string>());

  VerifyOutcome outcome = db_.Transaction([&](DbConnection& tx) {
    VerifyOutcome out;
    std::optional<DbRow> row = tx.QueryOne(
        "SELECT id, code_hash, attempts, expires_at <= UTC_TIMESTAMP(3), consumed_at IS NOT NULL "
        "FROM verification_codes WHERE user_id = ? AND kind = ? AND target = ? FOR UPDATE",
        {user_id, kind_name, *target});
    if (!row) return out;  // kNoCode
    const int64_t code_id = row->Int(1);
    StoredVerificationCode stored{row->String(2), static_cast<int>(row->Int(3)), row->Bool(4), row->Bool(5)};
    const CodeCheck check = CheckVerificationCode(stored, presented);
    out.attempts_left = check.attempts_left;
    switch (check.verdict) {
      case CodeVerdict::kUsed:
        out.result = VerifyResult::kUsed;
        return out;
      case CodeVerdict::kLocked:
        out.result = VerifyResult::kLocked;
        return out;
      case CodeVerdict::kExpired:
        out.result = VerifyResult::kExpired;
        return out;
      case CodeVerdict::kWrong: {
        tx.Exec("UPDATE verification_codes SET attempts = ? WHERE id = ?", {check.attempts, code_id});
        out.result = VerifyResult::kWrong;
        return out;
      }
      case CodeVerdict::kAccepted: {
        tx.Exec("UPDATE verification_codes SET consumed_at = UTC_TIMESTAMP(3) WHERE id = ?", {code_id});
        break;
      }
      case CodeVerdict::kReplayed:
        break;
    }
    // Verified once per user and target: a second verification keeps the first row.
    tx.Exec(std::string("INSERT INTO ") + k.table + " (user_id, " + k.column +
                ", created_at) VALUES (?, ?, UTC_TIMESTAMP(3)) ON DUPLICATE KEY UPDATE id = id",
            {user_id, *target});
    auto resource = FindResource(tx, kind, user_id, std::string(k.column) + " = ?", *target);
    out.result = VerifyResult::kVerified;
    out.resource = resource.value_or(Json());
    return out;
  });

  const std::string noun = k.noun;
  auto refused = [](std::string reason, std::string message) {
    return Status::Invalid("code", std::move(message)).WithReason(std::move(reason));
  };
  switch (outcome.result) {
    case VerifyResult::kVerified:
      logger_.Info("verified resource confirmed", {{"user_id", user_id}, {"kind", kind_name}});
      return outcome.resource;
    case VerifyResult::kNoCode:
      return refused("invalid_verification_code",
                     "no verification code was requested for this " + noun + "; request one first");
    case VerifyResult::kUsed:
      return refused("invalid_verification_code",
                     "the verification code is wrong or was already used; request a new one");
    case VerifyResult::kLocked:
      // Too many tries: a rate limit with no time to wait (only a new code helps), so no retry_after.
      return Status(ErrorCode::kRateLimited,
                    "too many wrong codes were entered; this code no longer works, request a new one")
          .WithReason("verification_code_locked")
          .WithDetails(Json{{"field", "code"}, {"attemptsLeft", 0}});
    case VerifyResult::kExpired:
      return refused("verification_code_expired",
                     "the verification code expired (codes live 10 minutes); request a new one");
    case VerifyResult::kWrong:
      break;
  }
  const std::string message =
      outcome.attempts_left > 0
          ? "the verification code is wrong; " + std::to_string(outcome.attempts_left) + " attempt(s) left"
          : "the verification code is wrong; no attempts left, this code no longer works: request a new one";
  return refused("invalid_verification_code", message).WithDetails(Json{{"attemptsLeft", outcome.attempts_left}});
}

Json VerifiedResourceService::List(VerifiedKind kind, int64_t user_id, const Pagination& page) {
  const KindSql k = SqlOf(kind);
  auto [total, items] = db_.Run([&](DbConnection& conn) {
    std::optional<DbRow> count = conn.QueryOne(std::string("SELECT COUNT(*) FROM ") + k.table + " WHERE user_id = ?", {user_id});
    const int64_t n = count ? count->Int(1) : 0;
    Json list = Json::array();
    for (const DbRow& row : conn.Query(std::string("SELECT id, ") + k.column + ", user_id, created_at FROM " +
                                           k.table + " WHERE user_id = ? ORDER BY id LIMIT ? OFFSET ?",
                                       {user_id, page.take, page.skip})) {
      list.push_back(ResourceJson(kind, row));
    }
    return std::pair{n, list};
  });
  return Json{{"data", items}, {"pagination", page.ToJson(total)}};
}

Result<Json> VerifiedResourceService::Get(VerifiedKind kind, int64_t user_id, const std::string& id_text) {
  const Status not_found = Status::NotFound("verified " + std::string(SqlOf(kind).noun) + " not found");
  const std::optional<int64_t> id = text::ParseDigits(id_text);
  if (!id) return not_found;
  auto resource =
      db_.Run([&](DbConnection& conn) { return FindResource(conn, kind, user_id, "id = ?", *id); });
  if (!resource) return not_found;
  return *resource;
}

}  // namespace rendezvous::core
