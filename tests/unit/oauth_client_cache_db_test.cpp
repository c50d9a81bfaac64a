// ClientService with its client cache against a real MariaDB, as two instances on one database
// (each its own caches and RevocationFeed): credentials are served from memory once read; every
// change to a client writes a 'client' row to the revocation log in its transaction; the instance
// that changed a client answers from the database at once, the other once its feed read the row;
// unknown client ids are never kept.
#include <chrono>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "client_cache.hpp"
#include "client_service.hpp"
#include "eventually.hpp"
#include "oauth_test_db.hpp"
#include "rendezvous/crypto.hpp"
#include "revocation_log.hpp"
#include "token_cache.hpp"

namespace rendezvous::oauth {
namespace {

class NoMail final : public Mailer {
 public:
  void Send(DbConnection&, const Mail&) override {}
};

// One instance: its caches, its feed and its service.
struct Instance {
  Instance(Database& db, UserDirectory& users, Mailer& mailer, Logger& logger)
      : feed(db, logger, tokens, &clients), service(db, users, mailer, logger, &tokens, &clients) {}
  TokenCache tokens{TokenCacheLimits{}};
  ClientCache clients{ClientCacheLimits{}};
  RevocationFeed feed;
  ClientService service;
};

class ClientCacheDb : public OAuthDbTest {
 protected:
  void SetUp() override {
    OpenDatabase(OAuthMigrations());
    a_ = std::make_unique<Instance>(*db_, users_, mailer_, logger_);
    b_ = std::make_unique<Instance>(*db_, users_, mailer_, logger_);
    ASSERT_TRUE(a_->feed.Poll());
    ASSERT_TRUE(b_->feed.Poll());
  }

  int ClientRows(const std::string& client_id) {
    return std::stoi(scratch_.QueryValue(
        "SELECT COUNT(*) FROM oauth_revocations WHERE kind = 'client' AND subject = '" + client_id + "'"));
  }

  static bool Accepts(Instance& i, const std::string& client_id, const std::string& secret) {
    return !AuthenticateClient(i.service.LoadCredentials(client_id), secret).has_value();
  }

  NoMail mailer_;
  std::unique_ptr<Instance> a_, b_;
};

TEST_F(ClientCacheDb, CredentialsAreServedFromMemoryOnceRead) {
  auto created = a_->service.Create(AppClient(1, {"BOOKING_READ"}));
  ASSERT_TRUE(created.ok());
  const std::string id = created->first.client_id, secret = *created->second;
  EXPECT_FALSE(a_->clients.Get(id).has_value());
  EXPECT_TRUE(Accepts(*a_, id, secret));
  std::optional<ClientCredentials> cached = a_->clients.Get(id);
  ASSERT_TRUE(cached.has_value());
  ASSERT_EQ(cached->active_secret_hashes.size(), 1u);
  EXPECT_EQ(cached->active_secret_hashes[0], crypto::Sha256Hex(secret));
  EXPECT_FALSE(Accepts(*a_, id, secret + "x"));
  EXPECT_FALSE(Accepts(*a_, id, ""));
}

TEST_F(ClientCacheDb, UnknownClientIdsAreNeverKept) {
  for (int i = 0; i < 200; ++i) {
    const std::string id = "unknown-" + std::to_string(i);
    EXPECT_FALSE(a_->service.LoadCredentials(id).has_value());
    EXPECT_FALSE(a_->service.LoadCredentials(id).has_value());  // still read, still nothing
  }
  EXPECT_EQ(a_->clients.Size(), 0u);
}

TEST_F(ClientCacheDb, ARevokedSecretIsRefusedHereAtOnceAndElsewhereAfterTheFeedsRead) {
  auto created = a_->service.Create(AppClient(1, {"BOOKING_READ"}));
  ASSERT_TRUE(created.ok());
  const std::string id = created->first.client_id, old_secret = *created->second;
  const int64_t old_secret_id = created->first.secrets.at(0).secret_id;
  auto rotated = a_->service.GenerateSecret(id, std::nullopt);
  ASSERT_TRUE(rotated.ok());
  const std::string new_secret = rotated->secret;
  ASSERT_TRUE(b_->feed.Poll());

  // Both instances hold the client with both secrets.
  for (Instance* i : {a_.get(), b_.get()}) {
    EXPECT_TRUE(Accepts(*i, id, old_secret));
    EXPECT_TRUE(Accepts(*i, id, new_secret));
    ASSERT_TRUE(i->clients.Get(id).has_value());
  }

  ASSERT_TRUE(a_->service.RevokeSecret(id, old_secret_id, std::nullopt).ok());
  EXPECT_FALSE(Accepts(*a_, id, old_secret)) << "the revoking instance still accepts the revoked secret";
  EXPECT_TRUE(Accepts(*a_, id, new_secret));
  // B's cache still holds the old secret until its feed reads the log row...
  ASSERT_TRUE(b_->clients.Get(id).has_value());
  EXPECT_EQ(b_->clients.Get(id)->active_secret_hashes.size(), 2u);
  ASSERT_TRUE(b_->feed.Poll());
  // ...which drops it.
  EXPECT_FALSE(b_->clients.Get(id).has_value());
  EXPECT_FALSE(Accepts(*b_, id, old_secret));
  EXPECT_TRUE(Accepts(*b_, id, new_secret));
}

TEST_F(ClientCacheDb, AFeedThatCannotReadTheLogStopsTheClientCacheServing) {
  auto created = a_->service.Create(AppClient(1, {"BOOKING_READ"}));
  ASSERT_TRUE(created.ok());
  const std::string id = created->first.client_id;
  ASSERT_TRUE(a_->service.LoadCredentials(id).has_value());
  ASSERT_TRUE(a_->clients.Get(id).has_value());
  scratch_.Exec("RENAME TABLE oauth_revocations TO oauth_revocations_away");
  EXPECT_FALSE(a_->feed.Poll());
  // Within kMaxStaleness of the last good read the entry is served, then no more.
  EXPECT_TRUE(testing::Eventually("the client cache to stop serving",
                                  {std::chrono::seconds(5), std::chrono::milliseconds(20)}, [&] {
                                    a_->feed.Poll();
                                    return !a_->clients.Get(id).has_value();
                                  }));
  // LoadCredentials reads the database meanwhile.
  EXPECT_TRUE(a_->service.LoadCredentials(id).has_value());
  scratch_.Exec("RENAME TABLE oauth_revocations_away TO oauth_revocations");
  ASSERT_TRUE(a_->feed.Poll());
  EXPECT_TRUE(a_->clients.Get(id).has_value());
}

TEST_F(ClientCacheDb, EveryChangeToAClientWritesAClientRow) {
  auto created = a_->service.Create(AppClient(1, {"BOOKING_READ"}));
  ASSERT_TRUE(created.ok());
  const std::string id = created->first.client_id;
  EXPECT_EQ(ClientRows(id), 0);

  ASSERT_TRUE(a_->service.Review(id, true, "").ok());
  EXPECT_EQ(ClientRows(id), 1);
  auto generated = a_->service.GenerateSecret(id, std::nullopt);
  ASSERT_TRUE(generated.ok());
  EXPECT_EQ(ClientRows(id), 2);
  ASSERT_TRUE(a_->service.RevokeSecret(id, generated->info.secret_id, std::nullopt).ok());
  EXPECT_EQ(ClientRows(id), 3);
  ClientUpdate redirects;
  redirects.redirect_uris = std::vector<std::string>{"https://app.example.com/other"};
  ASSERT_TRUE(a_->service.Update(id, std::nullopt, redirects).ok());
  EXPECT_EQ(ClientRows(id), 4);
  ClientUpdate scopes;
  scopes.add_scopes = {"BOOKING_WRITE"};
  ASSERT_TRUE(a_->service.Update(id, std::nullopt, scopes).ok());
  EXPECT_EQ(ClientRows(id), 5);
  // A save that changes nothing writes nothing.
  ASSERT_TRUE(a_->service.Update(id, std::nullopt, ClientUpdate{}).ok());
  EXPECT_EQ(ClientRows(id), 5);
  // A refused change writes nothing either.
  EXPECT_FALSE(a_->service.RevokeSecret(id, generated->info.secret_id, std::nullopt).ok());
  EXPECT_EQ(ClientRows(id), 5);

  // A rejection (of a client without an owner to mail too).
  NewClient orphan = AppClient(1, {"BOOKING_READ"});
  auto second = a_->service.Create(orphan);
  ASSERT_TRUE(second.ok());
  scratch_.Exec("UPDATE oauth_clients SET owner_id = 999 WHERE client_id = '" + second->first.client_id +
                "'");
  ASSERT_TRUE(a_->service.Review(second->first.client_id, false, "no").ok());
  EXPECT_EQ(ClientRows(second->first.client_id), 1);
}

}  // namespace
}  // namespace rendezvous::oauth
