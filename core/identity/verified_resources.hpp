// Verified e-mails and phone numbers of a user (spec §5.3 VERIFIED_RESOURCES_WRITE: "verify an
// email; verify a phone number"). The routes (verified_resource_routes.hpp) read the request and
// answer; this service decides, stores and sends, and reports every failure as a Status that the
// routes turn into the error envelope (Response::FromStatus).
//
// A request stores a fresh six-digit code (its hash only, 10 minutes of life, replacing any earlier
// code of the target) and queues it by mail or SMS in the same transaction. At most 5 requests per
// user and target, and 20 per user and kind, within an hour (kRateLimited with retry_after). A code
// allows 5 wrong attempts, then it is dead until a new one is requested. See
// docs/verified-resources.md.
//
// Thread-safe. The Database, Mailer, SmsSender and Logger must outlive the service. Calls may
// throw DatabaseUnavailable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "identity/verified_codes.hpp"
#include "notify/sms_sender.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"
#include "rendezvous/mailer.hpp"
#include "rendezvous/pagination.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::core {

inline constexpr int kMaxVerificationRequestsPerUserHour = 20;  // per kind, all targets together
// The lists' pages: 100 by default, at most 250, skipping at most a million.
inline constexpr PaginationLimits kVerifiedListLimits{100, 250, 1000000};

class VerifiedResourceService {
 public:
  VerifiedResourceService(Database& db, Mailer& mailer, SmsSender& sms, Logger& logger);

  // `body` {email} or {phone}: stores and sends a code; answers {email|phone, expiresIn}.
  // Invalid naming the field; kRateLimited with retry_after and details {retryAfter};
  // kUnauthenticated when the user no longer exists.
  Result<nlohmann::json> RequestCode(VerifiedKind kind, int64_t user_id, const nlohmann::json& body);
  // `body` {email|phone, code}: answers the verified resource {id, email|phone, userId, createdAt}.
  // A wrong, used, unknown or expired code is Invalid naming "code" with the reason
  // invalid_verification_code or verification_code_expired (details attemptsLeft after a wrong
  // one); a dead code (too many wrong ones) is kRateLimited, reason verification_code_locked.
  Result<nlohmann::json> VerifyCode(VerifiedKind kind, int64_t user_id, const nlohmann::json& body);
  // The user's resources, oldest first, one page of them: {data: [..], pagination: {total, skip,
  // take}}. The routes read the pagination (ParsePagination with kVerifiedListLimits).
  nlohmann::json List(VerifiedKind kind, int64_t user_id, const Pagination& page);
  // One of the user's resources by the id's text; NotFound for another user's, an unknown or a
  // malformed id.
  Result<nlohmann::json> Get(VerifiedKind kind, int64_t user_id, const std::string& id);

 private:
  Database& db_;
  Mailer& mailer_;
  SmsSender& sms_;
  Logger& logger_;
};

}  // namespace rendezvous::core
