// The identity tables and their SQL against a real MariaDB: users, sessions, API keys.
#include <chrono>
#include <future>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "identity/api_key_store.hpp"
#include "identity/session_store.hpp"
#include "identity/user_store.hpp"
#include "identity_test_db.hpp"
#include "rendezvous/crypto.hpp"

namespace rendezvous::core {
namespace {

class IdentityDbTest : public ::testing::Test {
 protected:
  IdentityDbTest() : db_(scratch_) { MigrateIdentity(scratch_); }

  // The id of a new user with this address and name (0, and a failure, when it cannot be created).
  int64_t NewUser(const std::string& email, const std::string& name) {
    auto user = users_.Create(email, name, "pw", "UTC", false);
    EXPECT_TRUE(user.ok()) << user.status().message();
    return user.ok() ? user->id : 0;
  }

  testing::ScratchDatabase scratch_;
  IdentityTestDatabase db_;
  UserStore users_{db_};
  prometheus::Registry registry_;  // for an ApiKeyStore's metrics
};

// What runs with a creation (a new user's default schedule) is on the creation's transaction: it
// sees the new row, its writes commit with it, and its failure leaves no user behind.
TEST_F(IdentityDbTest, CreateRunsAlsoOnItsTransactionAndItsFailureRollsTheUserBack) {
  auto refused = users_.Create(rendezvous::NewUser{"roll@example.com", "Roll", "", "UTC", "", false},
                               [](DbConnection& tx, const User& user) {
                                 tx.Exec("UPDATE users SET name = 'Seen' WHERE id = ?", {user.id});
                                 return Status::Invalid("schedule", "refused");
                               });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().field(), "schedule");
  EXPECT_FALSE(users_.FindByEmail("roll@example.com"));
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM users"), "0");

  int64_t seen = 0;
  auto made = users_.Create(rendezvous::NewUser{"roll@example.com", "Roll", "", "Europe/Berlin", "", false},
                            [&](DbConnection& tx, const User& user) {
                              seen = user.id;
                              EXPECT_EQ(user.time_zone, "Europe/Berlin");
                              EXPECT_EQ(user.username, "roll");
                              tx.Exec("UPDATE users SET name = 'Seen' WHERE id = ?", {user.id});
                              return Status::Ok();
                            });
  ASSERT_TRUE(made.ok()) << made.status().message();
  EXPECT_EQ(made->id, seen);
  EXPECT_EQ(users_.Find(seen)->name, "Seen");
}

TEST_F(IdentityDbTest, MigrationsCanRunTwice) {
  MigrateIdentity(scratch_);
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = "
                                "DATABASE() AND table_name IN ('users', 'api_keys', 'sessions')"),
            "3");
}

TEST_F(IdentityDbTest, CreateAndFindUsers) {
  auto created = users_.Create(" Ada@Example.COM ", "Ada Lovelace", "s3cret", "", true);
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_GT(created->id, 0);
  EXPECT_EQ(created->email, "ada@example.com");
  EXPECT_EQ(created->name, "Ada Lovelace");
  EXPECT_EQ(created->time_zone, "UTC");
  EXPECT_EQ(created->week_start, "Monday");
  EXPECT_TRUE(created->is_admin);
  EXPECT_TRUE(std::regex_match(created->created_at,
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
      << created->created_at;

  auto found = users_.Find(created->id);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->email, "ada@example.com");
  EXPECT_FALSE(users_.Find(created->id + 1000));

  auto by_email = users_.FindByEmail("ADA@example.com");
  ASSERT_TRUE(by_email);
  ASSERT_TRUE(by_email->password_hash);
  EXPECT_NE(*by_email->password_hash, "s3cret");
  EXPECT_TRUE(crypto::VerifyPassword("s3cret", *by_email->password_hash));
  EXPECT_FALSE(users_.FindByEmail("nobody@example.com"));
  EXPECT_FALSE(users_.FindByEmail("not an email"));
}

TEST_F(IdentityDbTest, UserWithoutPasswordCannotSignIn) {
  auto created = users_.Create("managed@example.com", "Managed", "", "Europe/Berlin", false);
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(created->time_zone, "Europe/Berlin");
  auto found = users_.FindByEmail("managed@example.com");
  ASSERT_TRUE(found);
  EXPECT_FALSE(found->password_hash);
}

TEST_F(IdentityDbTest, DuplicateEmailIsAConflict) {
  ASSERT_TRUE(users_.Create("dup@example.com", "One", "pw", "UTC", false).ok());
  auto again = users_.Create("DUP@example.com", "Two", "pw", "UTC", false);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), ErrorCode::kConflict);
}

TEST_F(IdentityDbTest, CreateValidatesFields) {
  EXPECT_EQ(users_.Create("bad", "N", "pw", "UTC", false).status().code(), ErrorCode::kInvalid);
  EXPECT_EQ(users_.Create("a@b.c", "", "pw", "UTC", false).status().code(), ErrorCode::kInvalid);
  EXPECT_EQ(users_.Create("a@b.c", "N", "pw", "Nowhere/Land", false).status().code(), ErrorCode::kInvalid);
  EXPECT_EQ(users_.Create("a@b.c", "N", std::string(1025, 'p'), "UTC", false).status().code(),
            ErrorCode::kInvalid);
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM users"), "0");
}

TEST_F(IdentityDbTest, UpdateProfile) {
  auto user = users_.Create("u@example.com", "Old", "pw", "UTC", false);
  ASSERT_TRUE(user.ok());
  ProfilePatch patch;
  patch.time_zone = "America/New_York";
  patch.week_start = "Sunday";
  auto updated = users_.Update(user->id, patch);
  ASSERT_TRUE(updated.ok()) << updated.status().message();
  EXPECT_EQ(updated->name, "Old");
  EXPECT_EQ(updated->time_zone, "America/New_York");
  EXPECT_EQ(updated->week_start, "Sunday");
  EXPECT_EQ(updated->created_at, user->created_at);

  ProfilePatch rename;
  rename.name = "New";
  EXPECT_EQ(users_.Update(user->id, rename)->name, "New");
  EXPECT_EQ(users_.Find(user->id)->time_zone, "America/New_York");
  EXPECT_EQ(users_.Update(user->id + 99, rename).status().code(), ErrorCode::kNotFound);
}

TEST_F(IdentityDbTest, UsernamesDerivedFromTheEmailWithSuffixes) {
  auto ann = users_.Create("Ann@example.com", "Ann", "pw", "UTC", false);
  ASSERT_TRUE(ann.ok()) << ann.status().message();
  EXPECT_EQ(ann->username, "ann");
  EXPECT_EQ(ann->time_format, 12);
  EXPECT_EQ(users_.Create("ann@example.org", "Ann Two", "", "UTC", false)->username, "ann1");
  EXPECT_EQ(users_.Create("ann@example.net", "Ann Three", "", "UTC", false)->username, "ann2");
  // "ann1" is taken by now, so the user whose own base is "ann1" gets the next free one.
  EXPECT_EQ(users_.Create("ann1@example.com", "Ann One", "", "UTC", false)->username, "ann11");
  // A username with LIKE's wildcards in it is matched literally.
  EXPECT_EQ(users_.Create("a_n@example.com", "A", "", "UTC", false)->username, "a_n");
  EXPECT_EQ(users_.Create("a_n@example.org", "A", "", "UTC", false)->username, "a_n1");
  EXPECT_EQ(users_.Create("\xc3\xb6@example.com", "O", "", "UTC", false)->username, "user");
  EXPECT_EQ(users_.Find(ann->id)->username, "ann");
  EXPECT_EQ(users_.FindByEmail("ann@example.org")->user.username, "ann1");
}

TEST_F(IdentityDbTest, ChosenUsernamesAreCheckedAndUnique) {
  rendezvous::NewUser fields{"bob@example.com", "Bob", "pw", "UTC", "builder.bob", false};
  auto bob = users_.Create(fields);
  ASSERT_TRUE(bob.ok()) << bob.status().message();
  EXPECT_EQ(bob->username, "builder.bob");

  rendezvous::NewUser same{"robert@example.com", "Robert", "pw", "UTC", "builder.bob", false};
  auto taken = users_.Create(same);
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.status().code(), ErrorCode::kConflict);
  EXPECT_EQ(taken.status().reason(), "username_taken");

  rendezvous::NewUser bad{"robert@example.com", "Robert", "pw", "UTC", "Robert!", false};
  EXPECT_EQ(users_.Create(bad).status().field(), "username");
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM users"), "1");
  // A derived name steps around a chosen one.
  EXPECT_EQ(users_.Create("builder.bob@example.org", "B", "", "UTC", false)->username, "builder.bob1");
}

TEST_F(IdentityDbTest, UpdateUsernameAndTimeFormat) {
  auto ada = users_.Create("ada@example.com", "Ada", "pw", "UTC", false);
  auto bob = users_.Create("bob@example.com", "Bob", "pw", "UTC", false);
  ASSERT_TRUE(ada.ok() && bob.ok());
  ProfilePatch patch;
  patch.username = "countess";
  patch.time_format = 24;
  auto updated = users_.Update(ada->id, patch);
  ASSERT_TRUE(updated.ok()) << updated.status().message();
  EXPECT_EQ(updated->username, "countess");
  EXPECT_EQ(updated->time_format, 24);
  // Keeping one's own username is no conflict.
  EXPECT_TRUE(users_.Update(ada->id, patch).ok());

  ProfilePatch steal;
  steal.username = "countess";
  steal.name = "Not Bob";
  auto refused = users_.Update(bob->id, steal);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kConflict);
  EXPECT_EQ(refused.status().reason(), "username_taken");
  // Nothing of the refused patch was written.
  EXPECT_EQ(users_.Find(bob->id)->username, "bob");
  EXPECT_EQ(users_.Find(bob->id)->name, "Bob");
  // The old name is free again.
  EXPECT_EQ(users_.Create("ada@example.org", "Ada Two", "", "UTC", false)->username, "ada");
}

TEST_F(IdentityDbTest, ConcurrentCreationsGetDistinctUsernames) {
  constexpr int kThreads = 8;
  std::vector<std::future<Result<User>>> results;
  for (int i = 0; i < kThreads; ++i) {
    results.push_back(std::async(std::launch::async, [this, i] {
      return users_.Create("sam@host" + std::to_string(i) + ".example.com", "Sam", "", "UTC", false);
    }));
  }
  std::set<std::string> names;
  for (auto& r : results) {
    Result<User> user = r.get();
    ASSERT_TRUE(user.ok()) << user.status().message();
    names.insert(user->username);
  }
  std::set<std::string> expected = {"sam"};
  for (int i = 1; i < kThreads; ++i) expected.insert("sam" + std::to_string(i));
  EXPECT_EQ(names, expected);
}

// Users made before usernames existed (identity migrations 1 and 2, rows as the old code wrote
// them) get theirs from migration 3, in id order, as a new user would.
TEST(IdentityUsernameMigration, GivesExistingUsersUsernames) {
  testing::ScratchDatabase scratch;
  MigrateIdentity(scratch, 2);
  const char* insert =
      "INSERT INTO users (email, name, time_zone, week_start, password_hash, is_admin, created_at, "
      "updated_at) "
      "VALUES ";
  scratch.Exec(
      std::string(insert) +
      "('ann@example.com', 'Ann', 'UTC', 'Monday', NULL, 0, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)),"
      "('ann@example.org', 'Ann 2', 'UTC', 'Monday', NULL, 0, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)),"
      "('ann1@example.com', 'Ann 3', 'UTC', 'Monday', NULL, 0, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)),"
      "('Mixed.Case+tag@example.com', 'M', 'UTC', 'Sunday', NULL, 1, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)),"
      "('\xc3\xb6@example.com', 'O', 'UTC', 'Monday', NULL, 0, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)),"
      "('" +
      std::string(70, 'l') +
      "@example.com', 'L', 'UTC', 'Monday', NULL, 0, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)),"
      "('" +
      std::string(70, 'l') +
      "@example.org', 'L2', 'UTC', 'Monday', NULL, 0, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))");
  const std::string before =
      scratch.QueryValue("SELECT GROUP_CONCAT(CONCAT(id, email, name) ORDER BY id) FROM users");

  MigrateIdentity(scratch);
  IdentityTestDatabase db(scratch);
  UserStore users(db);
  std::vector<std::string> names;
  for (int64_t id = 1; id <= 7; ++id) {
    std::optional<User> u = users.Find(id);
    ASSERT_TRUE(u) << id;
    EXPECT_EQ(u->time_format, 12);
    names.push_back(u->username);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"ann", "ann1", "ann11", "mixed.casetag", "user",
                                             std::string(64, 'l'), std::string(63, 'l') + "1"}));
  // The rest of each row is as it was, and the column is now required and unique.
  EXPECT_EQ(scratch.QueryValue("SELECT GROUP_CONCAT(CONCAT(id, email, name) ORDER BY id) FROM users"),
            before);
  EXPECT_EQ(
      scratch.QueryValue("SELECT IS_NULLABLE FROM information_schema.columns WHERE table_schema = DATABASE() "
                         "AND table_name = 'users' AND column_name = 'username'"),
      "NO");
  EXPECT_THROW(scratch.Exec("UPDATE users SET username = 'ann' WHERE id = 2"), std::exception);
  // Users created after the migration continue the same rule.
  EXPECT_EQ(users.Create("ann@example.net", "Ann 4", "", "UTC", false)->username, "ann2");
  // Running the migration again changes nothing.
  MigrateIdentity(scratch);
  EXPECT_EQ(users.Find(2)->username, "ann1");
}

TEST_F(IdentityDbTest, SessionsLiveUntilDeletedOrExpired) {
  auto user = users_.Create("s@example.com", "S", "pw", "UTC", false);
  ASSERT_TRUE(user.ok());
  SessionStore sessions(db_, std::chrono::hours(1));
  auto s = sessions.Create(user->id);
  ASSERT_TRUE(SessionStore::WellFormedToken(s.token));
  EXPECT_NE(s.token, s.csrf_token);
  // Only the hash is stored.
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM sessions WHERE id_hash = '" + s.token + "'"), "0");
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM sessions WHERE id_hash = '" +
                                crypto::Sha256Hex(s.token) + "'"),
            "1");

  auto found = sessions.Find(s.token);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->user.id, user->id);
  EXPECT_EQ(found->user.email, "s@example.com");
  EXPECT_EQ(found->csrf_token, s.csrf_token);
  EXPECT_FALSE(sessions.Find(crypto::RandomToken(32)));
  EXPECT_FALSE(sessions.Find("short"));

  auto other = sessions.Create(user->id);
  sessions.Delete(s.token);
  EXPECT_FALSE(sessions.Find(s.token));
  ASSERT_TRUE(sessions.Find(other.token));

  scratch_.Exec("UPDATE sessions SET expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND");
  EXPECT_FALSE(sessions.Find(other.token));
  // The next sign-in sweeps expired rows.
  auto third = sessions.Create(user->id);
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM sessions"), "1");
  EXPECT_TRUE(sessions.Find(third.token));
}

TEST_F(IdentityDbTest, ApiKeysCreateResolveRevoke) {
  const int64_t user = NewUser("k@example.com", "K");
  ApiKeyStore keys(db_, registry_, "rdv_", std::chrono::seconds(5));

  auto created = keys.Create(user, "ci");
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_EQ(created->key.rfind("rdv_", 0), 0u);
  EXPECT_EQ(created->key.size(), 4u + 43u);
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM api_keys WHERE key_hash = '" +
                                crypto::Sha256Hex(created->key) + "'"),
            "1");
  EXPECT_EQ(scratch_.QueryValue("SELECT hint FROM api_keys"), created->key.substr(created->key.size() - 4));
  EXPECT_EQ(scratch_.QueryValue("SELECT last_used_at IS NULL FROM api_keys"), "1");

  auto principal = keys.Resolve(created->key);
  ASSERT_TRUE(principal);
  EXPECT_EQ(principal->kind, kApiKey);
  EXPECT_EQ(principal->user_id, user);
  EXPECT_EQ(principal->credential_id, created->id);
  EXPECT_TRUE(principal->all_scopes);
  EXPECT_TRUE(principal->HasScope("BOOKING_WRITE"));
  EXPECT_EQ(scratch_.QueryValue("SELECT last_used_at IS NOT NULL FROM api_keys"), "1");
  EXPECT_EQ(CounterValue(registry_, "identity_api_key_cache_total", "miss"), 1);
  ASSERT_TRUE(keys.Resolve(created->key));
  EXPECT_EQ(CounterValue(registry_, "identity_api_key_cache_total", "hit"), 1);

  // Unknown well-formed keys resolve to nothing (and are cached as such).
  EXPECT_FALSE(keys.Resolve("rdv_" + crypto::RandomToken(32)));

  // Revocation takes effect at once on this instance.
  EXPECT_TRUE(keys.Revoke(user, created->id).ok());
  EXPECT_FALSE(keys.Resolve(created->key));
  EXPECT_EQ(scratch_.QueryValue("SELECT revoked_at IS NOT NULL FROM api_keys"), "1");
  EXPECT_TRUE(keys.Revoke(user, created->id).ok());  // idempotent
}

TEST_F(IdentityDbTest, ApiKeyOwnershipAndUnknownUser) {
  const int64_t a = NewUser("a@example.com", "A");
  const int64_t b = NewUser("b@example.com", "B");
  ApiKeyStore keys(db_, registry_, "rdv_", std::chrono::seconds(0));
  auto key = keys.Create(a, "");
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(scratch_.QueryValue("SELECT name FROM api_keys"), "default");
  EXPECT_EQ(keys.Revoke(b, key->id).code(), ErrorCode::kNotFound);
  EXPECT_TRUE(keys.Resolve(key->key));
  EXPECT_EQ(keys.Revoke(a, key->id + 1).code(), ErrorCode::kNotFound);
  EXPECT_EQ(keys.Create(b + 1000, "x").status().code(), ErrorCode::kNotFound);
}

TEST_F(IdentityDbTest, AnotherInstanceHonoursARevokedKeyAtMostForTheCacheTtl) {
  const int64_t user = NewUser("ttl@example.com", "T");
  auto now = std::chrono::steady_clock::time_point(std::chrono::hours(1));
  prometheus::Registry registry_a, registry_b;
  ApiKeyStore instance_a(db_, registry_a, "rdv_", std::chrono::seconds(5));
  ApiKeyStore instance_b(db_, registry_b, "rdv_", std::chrono::seconds(5), 10000, [&] { return now; });
  auto key = instance_a.Create(user, "k");
  ASSERT_TRUE(key.ok());
  ASSERT_TRUE(instance_b.Resolve(key->key));  // warms b's cache
  ASSERT_TRUE(instance_a.Revoke(user, key->id).ok());
  now += std::chrono::milliseconds(4999);
  EXPECT_TRUE(instance_b.Resolve(key->key));  // still cached on b: the documented bound
  now += std::chrono::milliseconds(1);
  EXPECT_FALSE(instance_b.Resolve(key->key));
}

TEST_F(IdentityDbTest, LastUsedIsWrittenAtMostOncePerMinute) {
  const int64_t user = NewUser("lu@example.com", "L");
  ApiKeyStore keys(db_, registry_, "rdv_", std::chrono::seconds(0));
  auto key = keys.Create(user, "k");
  ASSERT_TRUE(key.ok());
  ASSERT_TRUE(keys.Resolve(key->key));
  scratch_.Exec("UPDATE api_keys SET last_used_at = '2001-01-01 00:00:00.000'");
  ASSERT_TRUE(keys.Resolve(key->key));  // stale: rewritten
  std::string first = scratch_.QueryValue("SELECT last_used_at FROM api_keys");
  EXPECT_NE(first.substr(0, 4), "2001");
  scratch_.Exec("UPDATE api_keys SET last_used_at = UTC_TIMESTAMP(3) - INTERVAL 30 SECOND");
  std::string recent = scratch_.QueryValue("SELECT last_used_at FROM api_keys");
  ASSERT_TRUE(keys.Resolve(key->key));  // fresh: left alone
  EXPECT_EQ(scratch_.QueryValue("SELECT last_used_at FROM api_keys"), recent);
}

}  // namespace
}  // namespace rendezvous::core
