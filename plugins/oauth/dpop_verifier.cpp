#include "dpop_verifier.hpp"

#include "rendezvous/crypto.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::oauth {
namespace {

constexpr int64_t kMaxFutureSeconds = 60;

}  // namespace

DpopVerifier::DpopVerifier(Database& db, int64_t max_age)
    : max_age_(max_age), jtis_(db, max_age + kMaxFutureSeconds) {}

Result<std::string> DpopVerifier::Accept(std::string_view proof, std::string_view method,
                                         std::string_view url, std::string_view access_token) {
  DpopExpectation expect;
  expect.method = method;
  expect.url = url;
  expect.access_token = access_token;
  expect.now = time::Now() / 1000;
  expect.max_age = max_age_;
  expect.max_future = kMaxFutureSeconds;
  Result<DpopProof> verified = VerifyDpopProof(proof, expect, &keys_);
  if (!verified.ok()) return verified.status();
  // A jti is unique per key (RFC 9449 §11.1); hashing both bounds the row whatever the jti's
  // length. It is kept while a proof carrying it could still pass the iat check: until
  // iat + max_age, at most now + 60 + max_age.
  const std::string key = crypto::Sha256Hex(verified->jkt + "." + verified->jti);
  Result<bool> fresh = jtis_.Claim(key);
  if (!fresh.ok()) return fresh.status();
  if (!*fresh) return Status(ErrorCode::kInvalid, "the proof's jti was used before");
  return std::move(verified->jkt);
}

}  // namespace rendezvous::oauth
