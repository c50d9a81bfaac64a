// RevocationFeed (revocation_log.hpp) against a real MariaDB: a log row evicts what it names
// whatever its id (a row with a smaller id that appears later is still applied, as where commit
// order and id order differ), each row once, and a feed that cannot read the log stops the cache
// from serving; the purger deletes the rows no feed reads any more.
#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "eventually.hpp"
#include "oauth_test_db.hpp"
#include "revocation_log.hpp"
#include "token_cache.hpp"
#include "token_purger.hpp"

namespace rendezvous::oauth {
namespace {

class OAuthRevocationFeedDb : public OAuthDbTest {
 protected:
  void SetUp() override { OpenDatabase(OAuthMigrations()); }

  static std::string Hash(int i) {
    const std::string h = std::to_string(i);
    return std::string(64 - h.size(), 'a') + h;
  }
  static ResolvedToken Token(int64_t grant) {
    ResolvedToken t;
    t.grant_id = grant;
    t.user_id = 1;
    t.client_id = "client";
    t.expires_in_ms = 600000;
    return t;
  }
  void Log(int64_t id, const std::string& kind, const std::string& subject) {
    scratch_.Exec("INSERT INTO oauth_revocations (id, created_at, kind, subject) VALUES (" +
                  std::to_string(id) + ", UTC_TIMESTAMP(3), '" + kind + "', '" + subject + "')");
  }

  TokenCache cache_{TokenCacheLimits{}};
};

TEST_F(OAuthRevocationFeedDb, RowsAreAppliedWhateverTheirIdOrder) {
  RevocationFeed feed(*db_, logger_, cache_);
  ASSERT_TRUE(feed.Poll());
  cache_.Put(Hash(1), Token(1), cache_.Take());
  cache_.Put(Hash(2), Token(2), cache_.Take());
  cache_.Put(Hash(3), Token(3), cache_.Take());
  ASSERT_TRUE(cache_.Get(Hash(1)).has_value());

  Log(100, "grant", "1");
  ASSERT_TRUE(feed.Poll());
  EXPECT_FALSE(cache_.Get(Hash(1)).has_value());
  EXPECT_TRUE(cache_.Get(Hash(2)).has_value());

  // A smaller id than one already applied: still applied.
  Log(50, "grant", "2");
  ASSERT_TRUE(feed.Poll());
  EXPECT_FALSE(cache_.Get(Hash(2)).has_value());
  EXPECT_TRUE(cache_.Get(Hash(3)).has_value());

  // A row already applied is not applied again: grant 1's new token stays.
  cache_.Put(Hash(4), Token(1), cache_.Take());
  ASSERT_TRUE(feed.Poll());
  EXPECT_TRUE(cache_.Get(Hash(4)).has_value());

  // A token named by its hash.
  Log(101, "token", Hash(3));
  ASSERT_TRUE(feed.Poll());
  EXPECT_FALSE(cache_.Get(Hash(3)).has_value());
  EXPECT_TRUE(cache_.Get(Hash(4)).has_value());
}

TEST_F(OAuthRevocationFeedDb, RecordRevocationWritesTheRowTheFeedReads) {
  RevocationFeed feed(*db_, logger_, cache_);
  ASSERT_TRUE(feed.Poll());
  cache_.Put(Hash(1), Token(7), cache_.Take());
  ResolvedToken other_user = Token(8);
  other_user.user_id = 2;
  cache_.Put(Hash(2), other_user, cache_.Take());
  db_->Transaction([](DbConnection& tx) { RecordRevocation(tx, Revocation{RevocationKind::kUser, "1"}); });
  EXPECT_EQ(scratch_.QueryValue("SELECT CONCAT(kind, ' ', subject) FROM oauth_revocations"), "user 1");
  ASSERT_TRUE(feed.Poll());
  EXPECT_FALSE(cache_.Get(Hash(1)).has_value());
  EXPECT_TRUE(cache_.Get(Hash(2)).has_value());
}

TEST_F(OAuthRevocationFeedDb, AFeedThatCannotReadTheLogStopsTheCacheServing) {
  RevocationFeed feed(*db_, logger_, cache_);
  ASSERT_TRUE(feed.Poll());
  cache_.Put(Hash(1), Token(1), cache_.Take());
  ASSERT_TRUE(cache_.Get(Hash(1)).has_value());
  scratch_.Exec("RENAME TABLE oauth_revocations TO oauth_revocations_away");
  EXPECT_FALSE(feed.Poll());
  // Within kMaxStaleness of the last good read the entry is served, then no more.
  EXPECT_TRUE(testing::Eventually("the cache to stop serving",
                                  {std::chrono::seconds(5), std::chrono::milliseconds(20)}, [&] {
                                    feed.Poll();
                                    return !cache_.Get(Hash(1)).has_value();
                                  }));
  scratch_.Exec("RENAME TABLE oauth_revocations_away TO oauth_revocations");
  ASSERT_TRUE(feed.Poll());
  EXPECT_TRUE(cache_.Get(Hash(1)).has_value());
}

TEST_F(OAuthRevocationFeedDb, ThePurgerDeletesTheRowsNoFeedReadsAnyMore) {
  scratch_.Exec(
      "INSERT INTO oauth_revocations (created_at, kind, subject) VALUES"
      " (UTC_TIMESTAMP(3) - INTERVAL 11 MINUTE, 'grant', '1'), (UTC_TIMESTAMP(3) - INTERVAL 9 MINUTE, "
      "'grant', '2'),"
      " (UTC_TIMESTAMP(3), 'grant', '3')");
  TokenPurger purger(*db_, logger_);
  EXPECT_EQ(purger.PurgeExpired(), 1u);
  EXPECT_EQ(scratch_.QueryValue("SELECT GROUP_CONCAT(subject ORDER BY subject) FROM oauth_revocations"),
            "2,3");
}

}  // namespace
}  // namespace rendezvous::oauth
