// Verification codes for e-mails and phone numbers (spec §5.3 VERIFIED_RESOURCES_WRITE): the
// targets' syntax, code generation and hashing, the attempt rules and the request rate limit.
// Pure functions, thread-safe, no I/O (GenerateVerificationCode reads OpenSSL's RNG).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rendezvous/status.hpp"

namespace rendezvous::core {

enum class VerifiedKind { kEmail, kPhone };
// "email" | "phone" (as stored in verification_codes.kind).
std::string_view VerifiedKindName(VerifiedKind kind);

inline constexpr size_t kVerificationCodeDigits = 6;
inline constexpr std::chrono::seconds kVerificationCodeTtl{600};
inline constexpr int kMaxVerificationAttempts = 5;         // wrong codes before a code is dead
inline constexpr int kMaxVerificationRequestsPerHour = 5;  // per user and target
inline constexpr std::chrono::seconds kVerificationRequestWindow{3600};

// An e-mail address that can be verified: NormalizeEmail (trimmed, ASCII lower-cased, by the one
// rule text::IsEmailAddress, which keeps out what a mail header could not carry).
Result<std::string> NormalizeVerifiedEmail(std::string_view email);

// A phone number in E.164 (+ and 7..15 digits, the first not 0), taken as it is: no spaces,
// dashes or brackets are removed. kInvalid otherwise.
Result<std::string> NormalizePhoneNumber(std::string_view phone);

// Six decimal digits from RAND_bytes, uniformly distributed (rejection sampling). Aborts (throws
// std::runtime_error) if the RNG fails.
std::string GenerateVerificationCode();

// True for exactly six ASCII digits.
bool IsWellFormedVerificationCode(std::string_view code);

// What is stored instead of the code: lower-case hex SHA-256 over a domain tag, the kind, the
// user and the target, then the code, so a hash cannot be replayed for another user or target.
std::string HashVerificationCode(VerifiedKind kind, int64_t user_id, std::string_view target,
                                 std::string_view code);

// The stored state of a target's latest code.
struct StoredVerificationCode {
  std::string code_hash;
  int attempts = 0;       // wrong codes presented so far
  bool expired = false;   // expires_at has passed
  bool consumed = false;  // it verified the target already
};

enum class CodeVerdict {
  kAccepted,  // right code, live: verify the target and consume the code
  kReplayed,  // the code that already verified the target: answer the verified resource again
  kUsed,      // the code was consumed and another one was presented
  kLocked,    // kMaxVerificationAttempts wrong codes were presented before: the code is dead
  kExpired,   // past its life
  kWrong,     // wrong code: attempts went up by one (attempts_left may now be 0: dead)
};

struct CodeCheck {
  CodeVerdict verdict = CodeVerdict::kWrong;
  int attempts = 0;       // the attempts count to store
  int attempts_left = 0;  // wrong codes still allowed after this one
};

// Decides a presented code (by its hash) against the stored one. The hash comparison is constant
// time. A locked or expired code is refused before the comparison, so it cannot be probed.
CodeCheck CheckVerificationCode(const StoredVerificationCode& stored, std::string_view presented_hash);

// The request rate limit: `requests_in_window` earlier requests for the target within the last
// hour, the oldest made `oldest_age` ago. nullopt when one more is allowed; otherwise how long to
// wait (at least 1 s) until the oldest leaves the window.
std::optional<std::chrono::seconds> VerificationRequestRetryAfter(int requests_in_window,
                                                                  std::chrono::seconds oldest_age);

}  // namespace rendezvous::core
