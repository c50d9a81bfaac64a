#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include <prometheus/registry.h>

#include "identity/api_key_store.hpp"
#include "rendezvous/crypto.hpp"

namespace rendezvous::core {
namespace {

// A database that is down: counts calls and throws like the real pool does.
class DownDatabase : public Database {
 public:
  int calls = 0;
  bool Ping() noexcept override { return false; }
  void RunTransaction(const std::function<void(DbConnection&)>&) override { Called(); }
  void RunAutocommit(const std::function<void(DbConnection&)>&) override { Called(); }

 protected:
  virtual void Called() {
    ++calls;
    throw DatabaseUnavailable("down");
  }
};

// A database that must not be reached: any use fails the test (and throws so that the caller
// cannot carry on as if it had answered).
class UnreachableDatabase final : public DownDatabase {
 protected:
  void Called() override {
    ADD_FAILURE() << "the database was called";
    DownDatabase::Called();
  }
};

TEST(IdentityApiKeyFormat, MalformedTokensNeverReachTheDatabase) {
  UnreachableDatabase db;
  prometheus::Registry registry;
  ApiKeyStore store(db, registry, "rdv_", std::chrono::seconds(5));
  std::string body = crypto::RandomToken(32);
  ASSERT_EQ(body.size(), 43u);
  const std::string bad[] = {
      "",
      "rdv_",
      "rdv-" + body,                  // a different separator
      "xyz_" + body,                  // wrong prefix
      "RDV_" + body,                  // prefix is case-sensitive
      "rdv_" + body.substr(1),        // one character short
      "rdv_" + body + "A",            // one character long
      "rdv_" + body.substr(1) + "=",  // padding is not part of the alphabet
      "rdv_" + body.substr(1) + "+",  // standard alphabet
      "rdv_" + body.substr(1) + ".",
      "rdv_" + body.substr(1) + " ",
      std::string("rdv_") + std::string(42, 'A') + '\0',
      std::string(100000, 'r'),
  };
  for (const auto& token : bad) {
    EXPECT_FALSE(store.WellFormed(token)) << token.substr(0, 60);
    EXPECT_FALSE(store.Resolve(token).has_value());
  }
  EXPECT_EQ(db.calls, 0);
}

TEST(IdentityApiKeyFormat, HonoursTheConfiguredPrefix) {
  UnreachableDatabase db;
  prometheus::Registry registry;
  ApiKeyStore store(db, registry, "cal_live_", std::chrono::seconds(5));
  std::string body = crypto::RandomToken(32);
  EXPECT_TRUE(store.WellFormed("cal_live_" + body));
  EXPECT_FALSE(store.WellFormed("rdv_" + body));
  EXPECT_EQ(db.calls, 0);
}

TEST(IdentityApiKeyResolve, WellFormedTokenIsLookedUpAndDatabaseErrorsPropagate) {
  DownDatabase db;
  prometheus::Registry registry;
  ApiKeyStore store(db, registry, "rdv_", std::chrono::seconds(5));
  std::string token = "rdv_" + crypto::RandomToken(32);
  ASSERT_TRUE(store.WellFormed(token));
  EXPECT_THROW(store.Resolve(token), DatabaseUnavailable);
  // A failed look-up is not cached: the next request asks again.
  EXPECT_THROW(store.Resolve(token), DatabaseUnavailable);
  EXPECT_EQ(db.calls, 2);
}

TEST(IdentityApiKeyCreate, ValidatesTheNameBeforeTouchingTheDatabase) {
  UnreachableDatabase db;
  prometheus::Registry registry;
  ApiKeyStore store(db, registry, "rdv_", std::chrono::seconds(5));
  auto created = store.Create(1, std::string(101, 'n'));
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), ErrorCode::kInvalid);
  EXPECT_EQ(db.calls, 0);
}

}  // namespace
}  // namespace rendezvous::core
