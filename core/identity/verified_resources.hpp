// Verified e-mails and phone numbers of a user (spec §5.3 VERIFIED_RESOURCES_WRITE: "verify an
// email; verify a phone number"), on the api listener:
//   POST /v2/verified-resources/emails/verification-code/request  {email}        -> 200
//   POST /v2/verified-resources/emails/verification-code/verify   {email, code}  -> 200 verified e-mail
//   GET  /v2/verified-resources/emails?skip&take                                 -> data [..] + pagination
//   GET  /v2/verified-resources/emails/:id                                       -> verified e-mail
// and the same under /phones with {phone} / {phone, code}. Every route needs a bearer API key or
// OAuth token with VERIFIED_RESOURCES_WRITE (the spec names no read scope; reads need it too).
//
// A request stores a fresh six-digit code (its hash only, 10 minutes of life, replacing any earlier
// code of the target) and queues it by mail or SMS in the same transaction. At most 5 requests per
// user and target, and 20 per user and kind, within an hour (429 with Retry-After). A code allows
// 5 wrong attempts, then it is dead until a new one is requested. See docs/verified-resources.md.
//
// Thread-safe. The Database, Mailer, SmsSender and Logger must outlive the service, and the
// service the routes it registered.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "identity/verified_codes.hpp"
#include "mail/sms_sender.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/http.hpp"
#include "rendezvous/log.hpp"
#include "rendezvous/mailer.hpp"

namespace rendezvous::core {

inline constexpr int kMaxVerificationRequestsPerUserHour = 20;  // per kind, all targets together
inline constexpr int64_t kDefaultVerifiedPageSize = 100;
inline constexpr int64_t kMaxVerifiedPageSize = 250;
inline constexpr int64_t kMaxVerifiedSkip = 1000000;

class VerifiedResourceService {
 public:
  VerifiedResourceService(Database& db, Mailer& mailer, SmsSender& sms, Logger& logger);

  void RegisterRoutes(const std::function<void(Route)>& add);

  Response RequestCode(VerifiedKind kind, Request& req);
  Response VerifyCode(VerifiedKind kind, Request& req);
  Response List(VerifiedKind kind, Request& req);
  Response Get(VerifiedKind kind, Request& req);

 private:
  Database& db_;
  Mailer& mailer_;
  SmsSender& sms_;
  Logger& logger_;
};

}  // namespace rendezvous::core
