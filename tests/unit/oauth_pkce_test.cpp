#include "pkce.hpp"

#include <gtest/gtest.h>


namespace rendezvous::oauth {
namespace {

// RFC 7636 appendix B.
constexpr char kVerifier[] = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
constexpr char kChallenge[] = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

TEST(OAuthPkce, Rfc7636AppendixB) {
  EXPECT_EQ(S256Challenge(kVerifier), kChallenge);
  EXPECT_TRUE(VerifyS256(kVerifier, kChallenge));
  EXPECT_TRUE(IsValidCodeVerifier(kVerifier));
  EXPECT_TRUE(IsValidS256Challenge(kChallenge));
}

TEST(OAuthPkce, MismatchFails) {
  std::string other = kVerifier;
  other[0] = 'e';
  EXPECT_FALSE(VerifyS256(other, kChallenge));
  std::string challenge = kChallenge;
  challenge[10] = challenge[10] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(VerifyS256(kVerifier, challenge));
  // plain method: the verifier as its own challenge must not pass.
  std::string verifier43(43, 'a');
  EXPECT_FALSE(VerifyS256(verifier43, verifier43));
  EXPECT_FALSE(VerifyS256(kVerifier, ""));
  EXPECT_FALSE(VerifyS256(kVerifier, std::string(kChallenge) + "A"));
}

TEST(OAuthPkce, VerifierFormat) {
  EXPECT_FALSE(IsValidCodeVerifier(std::string(42, 'a')));
  EXPECT_TRUE(IsValidCodeVerifier(std::string(43, 'a')));
  EXPECT_TRUE(IsValidCodeVerifier(std::string(128, 'Z')));
  EXPECT_FALSE(IsValidCodeVerifier(std::string(129, 'a')));
  EXPECT_TRUE(IsValidCodeVerifier(std::string(40, 'a') + "-._~"));
  for (char bad : {'+', '/', '=', ' ', '%', '\0', '!', '\x80'}) {
    std::string v(43, 'a');
    v[20] = bad;
    EXPECT_FALSE(IsValidCodeVerifier(v)) << int(bad);
  }
  // A malformed verifier fails even when its hash would match.
  const std::string short_verifier(42, 'a');
  EXPECT_FALSE(VerifyS256(short_verifier, S256Challenge(short_verifier)));
}

TEST(OAuthPkce, ChallengeFormat) {
  EXPECT_FALSE(IsValidS256Challenge(""));
  EXPECT_FALSE(IsValidS256Challenge(std::string(kChallenge).substr(0, 42)));
  EXPECT_FALSE(IsValidS256Challenge(std::string(kChallenge) + "="));
  EXPECT_FALSE(IsValidS256Challenge(std::string(44, 'A')));
  std::string with_plus = kChallenge;
  with_plus[5] = '+';
  EXPECT_FALSE(IsValidS256Challenge(with_plus));
  // The last character may only carry 4 data bits: 'M' (12) is fine, 'N' (13) is not.
  std::string stray = kChallenge;
  stray.back() = 'N';
  EXPECT_FALSE(IsValidS256Challenge(stray));
  EXPECT_TRUE(IsValidS256Challenge(std::string(43, 'A')));
}

TEST(OAuthPkce, ChallengesOfManyVerifiersAreWellFormed) {
  for (int i = 0; i < 50; ++i) {
    std::string verifier(43 + i, char('a' + i % 26));
    const std::string c = S256Challenge(verifier);
    EXPECT_TRUE(IsValidS256Challenge(c)) << c;
    EXPECT_TRUE(VerifyS256(verifier, c));
  }
}

}  // namespace
}  // namespace rendezvous::oauth
