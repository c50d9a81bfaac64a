#include "pkce.hpp"

#include <cctype>
#include <cstdlib>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "rendezvous/crypto.hpp"

namespace rendezvous::oauth {
namespace {

bool IsBase64UrlChar(unsigned char c) { return std::isalnum(c) || c == '-' || c == '_'; }

int Base64UrlValue(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  return c == '-' ? 62 : 63;
}

}  // namespace

bool IsValidCodeVerifier(std::string_view verifier) {
  if (verifier.size() < kMinCodeVerifierLength || verifier.size() > kMaxCodeVerifierLength) {
    return false;
  }
  for (char ch : verifier) {
    const auto c = static_cast<unsigned char>(ch);
    if (!std::isalnum(c) && c != '-' && c != '.' && c != '_' && c != '~') return false;
  }
  return true;
}

bool IsValidS256Challenge(std::string_view challenge) {
  if (challenge.size() != kS256ChallengeLength) return false;
  for (char c : challenge) {
    if (!IsBase64UrlChar(static_cast<unsigned char>(c))) return false;
  }
  // 43 characters carry 258 bits for 256: the last character's low 2 bits must be zero.
  return (Base64UrlValue(static_cast<unsigned char>(challenge.back())) & 3) == 0;
}

std::string S256Challenge(std::string_view verifier) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(verifier.data(), verifier.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    std::abort();  // SHA-256 cannot fail short of a broken OpenSSL.
  }
  return crypto::Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(digest), length));
}

bool VerifyS256(std::string_view verifier, std::string_view challenge) {
  if (!IsValidCodeVerifier(verifier) || challenge.size() != kS256ChallengeLength) return false;
  const std::string expected = S256Challenge(verifier);
  return CRYPTO_memcmp(expected.data(), challenge.data(), kS256ChallengeLength) == 0;
}

}  // namespace rendezvous::oauth
