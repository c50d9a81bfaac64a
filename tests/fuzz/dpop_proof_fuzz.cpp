// libFuzzer target: DPoP proofs (JWS compact form, base64url, JSON header and claims, the JWK)
// through the whole check, signature included. Input layout: the proof, then optionally '\n' and
// the access token its ath must match.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "dpop_proof.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view token;
  if (auto nl = input.find('\n'); nl != std::string_view::npos) {
    token = input.substr(nl + 1);
    input = input.substr(0, nl);
  }
  rendezvous::oauth::DpopExpectation expect;
  expect.method = "GET";
  expect.url = "https://api.example.com/v2/me";
  expect.access_token = token;
  expect.now = 1'800'000'000;
  auto parsed = rendezvous::oauth::ParseDpopProof(input);
  if (parsed.ok()) {
    // A parsed proof has a thumbprint, a base64url SHA-256 digest.
    if (rendezvous::oauth::JwkThumbprint(parsed->jwk).size() != 43) __builtin_trap();
    if (!parsed->claims.is_object() || parsed->signature.empty()) __builtin_trap();
  } else if (parsed.status().message().empty()) {
    __builtin_trap();
  }
  auto verified = rendezvous::oauth::VerifyDpopProof(input, expect);
  // Nothing passes the parse-only check without passing ParseDpopProof.
  if (verified.ok() && !parsed.ok()) __builtin_trap();
  rendezvous::oauth::NormalizeHtu(input);
  return 0;
}
