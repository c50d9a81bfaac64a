#include "identity/verified_codes.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <openssl/rand.h>

#include "identity/validation.hpp"
#include "notify/sms_sender.hpp"
#include "rendezvous/crypto.hpp"

namespace rendezvous::core {

std::string_view VerifiedKindName(VerifiedKind kind) {
  return kind == VerifiedKind::kEmail ? "email" : "phone";
}

Result<std::string> NormalizeVerifiedEmail(std::string_view email) {
  return NormalizeEmail(email);
}

Result<std::string> NormalizePhoneNumber(std::string_view phone) {
  if (!IsE164PhoneNumber(phone)) {
    return Status(ErrorCode::kInvalid,
                  "phone must be an E.164 number: '+', the country code and the number, 7 to 15 digits, no "
                  "spaces or dashes (e.g. +15551234567)");
  }
  return std::string(phone);
}

std::string GenerateVerificationCode() {
  // 2^32 - (2^32 mod 10^6): values at or above it would favour small codes.
  constexpr uint64_t kRange = 1000000;
  constexpr uint64_t kLimit = (uint64_t{1} << 32) - ((uint64_t{1} << 32) % kRange);
  for (;;) {
    unsigned char raw[4];
    if (RAND_bytes(raw, sizeof raw) != 1) throw std::runtime_error("RAND_bytes failed");
    const uint64_t v = (uint64_t{raw[0]} << 24) | (uint64_t{raw[1]} << 16) | (uint64_t{raw[2]} << 8) | raw[3];
    if (v >= kLimit) continue;
    std::string code = std::to_string(v % kRange);
    return std::string(kVerificationCodeDigits - code.size(), '0') + code;
  }
}

bool IsWellFormedVerificationCode(std::string_view code) {
  return code.size() == kVerificationCodeDigits &&
         std::all_of(code.begin(), code.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string HashVerificationCode(VerifiedKind kind, int64_t user_id, std::string_view target,
                                 std::string_view code) {
  std::string data = "rendezvous-verification-code-v1";
  data += '\n';
  data += VerifiedKindName(kind);
  data += '\n';
  data += std::to_string(user_id);
  data += '\n';
  data += target;
  data += '\n';
  data += code;
  return crypto::Sha256Hex(data);
}

CodeCheck CheckVerificationCode(const StoredVerificationCode& stored, std::string_view presented_hash) {
  CodeCheck check;
  check.attempts = stored.attempts;
  check.attempts_left = std::max(0, kMaxVerificationAttempts - stored.attempts);
  const bool matches = crypto::ConstantTimeEquals(stored.code_hash, presented_hash);
  if (stored.consumed) {
    check.verdict = matches ? CodeVerdict::kReplayed : CodeVerdict::kUsed;
    return check;
  }
  if (stored.attempts >= kMaxVerificationAttempts) {
    check.verdict = CodeVerdict::kLocked;
    return check;
  }
  if (stored.expired) {
    check.verdict = CodeVerdict::kExpired;
    return check;
  }
  if (matches) {
    check.verdict = CodeVerdict::kAccepted;
    return check;
  }
  check.verdict = CodeVerdict::kWrong;
  check.attempts = stored.attempts + 1;
  check.attempts_left = std::max(0, kMaxVerificationAttempts - check.attempts);
  return check;
}

std::optional<std::chrono::seconds> VerificationRequestRetryAfter(int requests_in_window,
                                                                  std::chrono::seconds oldest_age) {
  if (requests_in_window < kMaxVerificationRequestsPerHour) return std::nullopt;
  return std::max(std::chrono::seconds(1), kVerificationRequestWindow - oldest_age);
}

}  // namespace rendezvous::core
