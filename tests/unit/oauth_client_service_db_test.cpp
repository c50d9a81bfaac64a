// ClientService against a real MariaDB through the host's connection pool: the row lock keeps
// concurrent secret operations within the limits, VerifySecret, owner scoping, and the review
// mail written with the review's transaction.
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "client_service.hpp"
#include "oauth_test_db.hpp"

namespace rendezvous::oauth {
namespace {

// Records each mail in a table with the caller's transaction, so a mail "exists" exactly when
// the review commits.
class TableMailer final : public Mailer {
 public:
  void Send(DbConnection& tx, const Mail& mail) override {
    tx.Exec("INSERT INTO test_mails (recipient, subject, body) VALUES (?, ?, ?)", {mail.to, mail.subject, mail.text});
  }
};

class ClientServiceDb : public OAuthDbTest {
 protected:
  void SetUp() override {
    OpenDatabase(OAuthMigrations());
    scratch_.Exec("CREATE TABLE test_mails (id BIGINT AUTO_INCREMENT PRIMARY KEY, recipient TEXT, subject TEXT, body TEXT)");
    service_ = std::make_unique<ClientService>(*db_, users_, mailer_, logger_);
  }

  std::pair<OAuthClient, std::optional<std::string>> NewConfidential(int64_t owner = 1) {
    auto r = service_->Create(AppClient(owner, {"BOOKING_READ"}));
    EXPECT_TRUE(r.ok()) << r.status().message();
    return *r;
  }

  TableMailer mailer_;
  std::unique_ptr<ClientService> service_;
};

TEST_F(ClientServiceDb, ConcurrentGeneratesNeverMakeThreeActiveSecrets) {
  auto [client, secret] = NewConfidential();
  constexpr int kThreads = 6;
  std::atomic<int> ok{0}, conflict{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, id = client.client_id] {
      auto r = service_->GenerateSecret(id, std::nullopt);
      if (r.ok()) ++ok;
      else if (r.status().code() == ErrorCode::kConflict) ++conflict;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(conflict.load(), kThreads - 1);
  EXPECT_EQ(service_->Get(client.client_id)->secrets.size(), 2u);
}

TEST_F(ClientServiceDb, ConcurrentRevokesKeepOneSecret) {
  auto [client, secret] = NewConfidential();
  auto second = service_->GenerateSecret(client.client_id, std::nullopt);
  ASSERT_TRUE(second.ok());
  const std::vector<int64_t> ids = {client.secrets[0].secret_id, second->info.secret_id};
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  threads.reserve(ids.size());
  for (int64_t sid : ids) {
    threads.emplace_back([&, sid, &client = client] {
      if (service_->RevokeSecret(client.client_id, sid, std::nullopt).ok()) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(service_->Get(client.client_id)->secrets.size(), 1u);
}

TEST_F(ClientServiceDb, VerifySecretChecksActiveSecretsOnly) {
  auto [client, secret] = NewConfidential();
  ASSERT_TRUE(secret);
  EXPECT_TRUE(service_->VerifySecret(client.client_id, *secret));
  EXPECT_FALSE(service_->VerifySecret(client.client_id, *secret + "x"));
  EXPECT_FALSE(service_->VerifySecret(client.client_id, ""));
  EXPECT_FALSE(service_->VerifySecret("unknown", *secret));
  auto [other, other_secret] = NewConfidential();
  EXPECT_FALSE(service_->VerifySecret(other.client_id, *secret));

  // Rotation: both valid, then the old one fails at once.
  auto second = service_->GenerateSecret(client.client_id, std::nullopt);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(service_->VerifySecret(client.client_id, *secret));
  EXPECT_TRUE(service_->VerifySecret(client.client_id, second->secret));
  ASSERT_TRUE(service_->RevokeSecret(client.client_id, client.secrets[0].secret_id, std::nullopt).ok());
  EXPECT_FALSE(service_->VerifySecret(client.client_id, *secret));
  EXPECT_TRUE(service_->VerifySecret(client.client_id, second->secret));
}

TEST_F(ClientServiceDb, ActingOwnerSeesOnlyOwnClients) {
  auto [client, secret] = NewConfidential(1);
  EXPECT_TRUE(service_->Get(client.client_id, 1).ok());
  EXPECT_EQ(service_->Get(client.client_id, 2).status().code(), ErrorCode::kNotFound);
  ClientUpdate u;
  u.name = "Stolen";
  EXPECT_EQ(service_->Update(client.client_id, 2, u).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(service_->GenerateSecret(client.client_id, 2).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(service_->RevokeSecret(client.client_id, client.secrets[0].secret_id, 2).code(), ErrorCode::kNotFound);
  EXPECT_EQ(service_->Get(client.client_id)->settings.name, "App");
  EXPECT_EQ(service_->ListByOwner(1).size(), 1u);
  EXPECT_EQ(service_->ListByOwner(1)[0].secrets.size(), 1u);
  EXPECT_TRUE(service_->ListByOwner(2).empty());
  EXPECT_EQ(service_->ListByState(ClientState::kPending).size(), 1u);
  EXPECT_TRUE(service_->ListByState(ClientState::kApproved).empty());
}

// Ids that cannot name a client (non-ASCII, invalid UTF-8, control characters, too long) are
// simply not found, wherever they come in; the database never sees them.
TEST_F(ClientServiceDb, IdsThatCannotNameAClientAreNotFound) {
  NewConfidential(1);
  for (const std::string& id : {std::string("cl\xc3\xa9nt"), std::string("\xff\xfe"), std::string("a\x01b"),
                                std::string("a b"), std::string(65, 'a'), std::string("")}) {
    EXPECT_EQ(service_->Get(id).status().code(), ErrorCode::kNotFound);
    EXPECT_EQ(service_->Get(id, 1).status().code(), ErrorCode::kNotFound);
    EXPECT_EQ(service_->Review(id, true, "").status().code(), ErrorCode::kNotFound);
    ClientUpdate u;
    u.name = "X";
    EXPECT_EQ(service_->Update(id, 1, u).status().code(), ErrorCode::kNotFound);
    EXPECT_EQ(service_->GenerateSecret(id, 1).status().code(), ErrorCode::kNotFound);
    EXPECT_FALSE(service_->VerifySecret(id, "secret"));
    EXPECT_FALSE(service_->LoadCredentials(id).has_value());
  }
}

TEST_F(ClientServiceDb, ReviewMailsTheOwnerInItsTransaction) {
  auto [client, secret] = NewConfidential(2);
  auto reviewed = service_->Review(client.client_id, false, "  Unclear purpose  ");
  ASSERT_TRUE(reviewed.ok()) << reviewed.status().message();
  EXPECT_EQ(reviewed->state, ClientState::kRejected);
  EXPECT_EQ(reviewed->review_reason, "Unclear purpose");
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM test_mails"), "1");
  EXPECT_EQ(scratch_.QueryValue("SELECT recipient FROM test_mails"), "user2@example.com");
  EXPECT_EQ(scratch_.QueryValue("SELECT subject FROM test_mails"), "Your OAuth client \"App\" was rejected");
  EXPECT_NE(scratch_.QueryValue("SELECT body FROM test_mails").find("Unclear purpose"), std::string::npos);

  // A refused review sends nothing.
  EXPECT_EQ(service_->Review(client.client_id, true, "").status().code(), ErrorCode::kConflict);
  EXPECT_EQ(service_->Review(client.client_id, false, std::string(1001, 'x')).status().code(), ErrorCode::kInvalid);
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM test_mails"), "1");
}

}  // namespace
}  // namespace rendezvous::oauth
