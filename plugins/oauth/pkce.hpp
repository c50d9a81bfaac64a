// PKCE (RFC 7636) with the S256 method only: format checks for the verifier and the challenge,
// and the verification done at the token endpoint. Pure functions over OpenSSL, thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace rendezvous::oauth {

inline constexpr size_t kMinCodeVerifierLength = 43;
inline constexpr size_t kMaxCodeVerifierLength = 128;
inline constexpr size_t kS256ChallengeLength = 43;  // base64url of 32 bytes, no padding

// RFC 7636 §4.1: 43..128 characters of [A-Za-z0-9-._~].
bool IsValidCodeVerifier(std::string_view verifier);
// An S256 challenge: exactly 43 base64url characters ([A-Za-z0-9-_]) whose last one carries no
// stray bits (i.e. it decodes to exactly 32 bytes canonically).
bool IsValidS256Challenge(std::string_view challenge);
// BASE64URL(SHA256(ASCII(verifier))), RFC 7636 §4.2.
std::string S256Challenge(std::string_view verifier);
// True when the verifier is well-formed and S256Challenge(verifier) equals `challenge`; the
// comparison is constant-time.
bool VerifyS256(std::string_view verifier, std::string_view challenge);

}  // namespace rendezvous::oauth
