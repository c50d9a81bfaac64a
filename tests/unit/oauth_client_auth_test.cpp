// Client authentication (RFC 6749 §2.3.1) as the §7.2 table answers it.
#include <gtest/gtest.h>

#include "client_auth.hpp"
#include "rendezvous/crypto.hpp"

namespace rendezvous::oauth {
namespace {

ClientCredentials Confidential(std::vector<std::string> secrets) {
  ClientCredentials c;
  c.kind = ClientKind::kConfidential;
  for (const auto& s : secrets) c.active_secret_hashes.push_back(crypto::Sha256Hex(s));
  return c;
}

TEST(OAuthClientAuth, NoClientIsClientNotFound) {
  EXPECT_EQ(AuthenticateClient(std::nullopt, "anything"), TokenError::ClientNotFound());
  EXPECT_EQ(AuthenticateClient(std::nullopt, ""), TokenError::ClientNotFound());
}

TEST(OAuthClientAuth, ConfidentialClientNeedsAnActiveSecret) {
  const ClientCredentials c = Confidential({"old-secret", "new-secret"});
  EXPECT_EQ(AuthenticateClient(c, "old-secret"), std::nullopt);  // both secrets work during rotation
  EXPECT_EQ(AuthenticateClient(c, "new-secret"), std::nullopt);
  EXPECT_EQ(AuthenticateClient(c, "new-secreT"), TokenError::InvalidClientCredentials());
  EXPECT_EQ(AuthenticateClient(c, ""), TokenError::InvalidClientCredentials());
  EXPECT_EQ(AuthenticateClient(c, std::string(kMaxClientSecretLength + 1, 'x')), TokenError::InvalidClientCredentials());
  // A revoked secret is simply no longer among the active hashes.
  EXPECT_EQ(AuthenticateClient(Confidential({"new-secret"}), "old-secret"), TokenError::InvalidClientCredentials());
  EXPECT_EQ(AuthenticateClient(Confidential({}), "new-secret"), TokenError::InvalidClientCredentials());
}

TEST(OAuthClientAuth, PublicClientSendsNoSecret) {
  ClientCredentials p;
  p.kind = ClientKind::kPublic;
  EXPECT_EQ(AuthenticateClient(p, ""), std::nullopt);
  EXPECT_EQ(AuthenticateClient(p, "a-secret"), TokenError::InvalidClientCredentials());
}

}  // namespace
}  // namespace rendezvous::oauth
