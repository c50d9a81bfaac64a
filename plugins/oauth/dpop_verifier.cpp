#include "dpop_verifier.hpp"

#include "rendezvous/crypto.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::oauth {
namespace {

constexpr int64_t kMaxFutureSeconds = 60;

// A proof's jti is kept while a proof carrying it could still pass the iat check: until
// iat + max_age, at most now + 60 + max_age.
int64_t JtiKeepSeconds(int64_t max_age) {
  return max_age + kMaxFutureSeconds;
}

// A jti is unique per key (RFC 9449 §11.1); hashing both bounds the row whatever the jti's length.
std::string JtiKey(const DpopProof& proof) {
  return crypto::Sha256Hex(proof.jkt + "." + proof.jti);
}

}  // namespace

DpopVerifier::DpopVerifier(Database& db, int64_t max_age)
    : max_age_(max_age), jtis_(db, JtiKeepSeconds(max_age)) {}

Result<DpopProof> DpopVerifier::Check(std::string_view proof, std::string_view method, std::string_view url,
                                      std::string_view access_token) {
  DpopExpectation expect;
  expect.method = method;
  expect.url = url;
  expect.access_token = access_token;
  expect.now = time::Now() / 1000;
  expect.max_age = max_age_;
  expect.max_future = kMaxFutureSeconds;
  return VerifyDpopProof(proof, expect, &keys_);
}

Result<bool> DpopVerifier::Claim(const DpopProof& proof) {
  return jtis_.Claim(JtiKey(proof));
}

Result<bool> DpopVerifier::ClaimResolving(const DpopProof& proof, const std::string& token_hash,
                                          std::optional<ResolvedToken>& token) {
  return jtis_.ClaimResolving(JtiKey(proof), token_hash, token);
}

Result<std::string> DpopVerifier::Accept(std::string_view proof, std::string_view method,
                                         std::string_view url, std::string_view access_token) {
  Result<DpopProof> verified = Check(proof, method, url, access_token);
  if (!verified.ok()) return verified.status();
  Result<bool> fresh = jtis_.Claim(JtiKey(*verified));
  if (!fresh.ok()) return fresh.status();
  if (!*fresh) return Status(ErrorCode::kInvalid, "the proof's jti was used before");
  return std::move(verified->jkt);
}

}  // namespace rendezvous::oauth
