// TokenCache (token_cache.hpp): bounds by entries and bytes, expiry with the token, no serving
// while the revocation log has not been read lately, evictions by what a revocation names, and a
// Put that lost a race with a revocation keeps nothing.
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "token_cache.hpp"

namespace rendezvous::oauth {
namespace {

using Clock = TokenCache::Clock;

std::string Hash(int i) {
  std::string h = std::to_string(i);
  return std::string(64 - h.size(), '0') + h;
}

ResolvedToken Token(int64_t grant, int64_t user = 7, const std::string& client = "client-a",
                    int64_t expires_in_ms = 60000) {
  ResolvedToken t;
  t.grant_id = grant;
  t.user_id = user;
  t.client_id = client;
  t.scopes = {"BOOKING_READ"};
  t.scope_text = "BOOKING_READ";
  t.expires_in_ms = expires_in_ms;
  return t;
}

// The cache may serve for the next minute (as after a read of the log just now).
void MakeFresh(TokenCache& cache) {
  cache.SetFreshUntil(Clock::now() + std::chrono::minutes(1));
}

void PutNow(TokenCache& cache, int i, const ResolvedToken& token) {
  cache.Put(Hash(i), token, cache.Take());
}

TEST(OAuthTokenCache, KeepsAtMostItsEntries) {
  TokenCache cache(TokenCacheLimits{160, 1 << 30});
  cache.SetFreshUntil(Clock::now() + std::chrono::minutes(1));
  for (int i = 0; i < 1000; ++i) PutNow(cache, i, Token(i));
  EXPECT_LE(cache.Size(), 160u);
  EXPECT_GE(cache.Evicted(), 1000u - 160u);
  // The most recent entries are there.
  EXPECT_TRUE(cache.Get(Hash(999)).has_value());
  EXPECT_FALSE(cache.Get(Hash(0)).has_value());
}

TEST(OAuthTokenCache, KeepsAtMostItsBytes) {
  const size_t max_bytes = 64 * 1024;
  TokenCache cache(TokenCacheLimits{1000000, max_bytes});
  cache.SetFreshUntil(Clock::now() + std::chrono::minutes(1));
  ResolvedToken heavy = Token(1);
  for (int s = 0; s < 20; ++s) heavy.scopes.insert("SCOPE_" + std::to_string(s) + std::string(40, 'x'));
  for (int i = 0; i < 2000; ++i) PutNow(cache, i, heavy);
  EXPECT_LE(cache.Bytes(), max_bytes);
  EXPECT_GT(cache.Size(), 0u);
  EXPECT_LT(cache.Size(), 2000u);
}

TEST(OAuthTokenCache, AnEntryLeavesWithItsToken) {
  TokenCache cache(TokenCacheLimits{});
  MakeFresh(cache);
  PutNow(cache, 1, Token(1, 7, "client-a", /*expires_in_ms=*/30));
  PutNow(cache, 2, Token(2, 7, "client-a", /*expires_in_ms=*/0));  // expired when read: not kept
  EXPECT_TRUE(cache.Get(Hash(1)).has_value());
  EXPECT_FALSE(cache.Get(Hash(2)).has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(40));  // past the token's expiry, not a wait for work
  EXPECT_FALSE(cache.Get(Hash(1)).has_value());
}

TEST(OAuthTokenCache, ServesNothingUnlessTheLogWasReadLately) {
  TokenCache cache(TokenCacheLimits{});
  PutNow(cache, 1, Token(1));
  EXPECT_FALSE(cache.Get(Hash(1)).has_value());  // never read
  cache.SetFreshUntil(Clock::now() + std::chrono::minutes(1));
  EXPECT_TRUE(cache.Get(Hash(1)).has_value());
  cache.SetFreshUntil(Clock::now() - std::chrono::milliseconds(1));
  EXPECT_FALSE(cache.Get(Hash(1)).has_value());
  cache.SetFreshUntil(Clock::now() + std::chrono::minutes(1));
  EXPECT_TRUE(cache.Get(Hash(1)).has_value());  // kept, served again once the log was read
}

TEST(OAuthTokenCache, ARevocationDropsWhatItNames) {
  TokenCache cache(TokenCacheLimits{});
  MakeFresh(cache);
  PutNow(cache, 1, Token(10, 7, "client-a"));
  PutNow(cache, 2, Token(11, 7, "client-a"));
  PutNow(cache, 3, Token(12, 8, "client-a"));
  PutNow(cache, 4, Token(13, 9, "client-b"));
  PutNow(cache, 5, Token(14, 9, "client-b"));

  cache.Evict(Revocation{RevocationKind::kToken, Hash(5)});
  EXPECT_FALSE(cache.Get(Hash(5)).has_value());
  EXPECT_TRUE(cache.Get(Hash(4)).has_value());

  cache.Evict(Revocation{RevocationKind::kGrant, "10"});
  EXPECT_FALSE(cache.Get(Hash(1)).has_value());
  EXPECT_TRUE(cache.Get(Hash(2)).has_value());

  cache.Evict(Revocation{RevocationKind::kUser, "7"});
  EXPECT_FALSE(cache.Get(Hash(2)).has_value());
  EXPECT_TRUE(cache.Get(Hash(3)).has_value());

  cache.Evict(Revocation{RevocationKind::kClient, "client-b"});
  EXPECT_FALSE(cache.Get(Hash(4)).has_value());
  EXPECT_TRUE(cache.Get(Hash(3)).has_value());

  // A subject that cannot name a grant drops everything rather than guess.
  cache.Evict(Revocation{RevocationKind::kGrant, "not a number"});
  EXPECT_EQ(cache.Size(), 0u);
}

TEST(OAuthTokenCache, APutThatRacedARevocationKeepsNothing) {
  TokenCache cache(TokenCacheLimits{});
  MakeFresh(cache);
  // A reader takes its ticket, reads the token live; a revocation is applied before it puts.
  const TokenCache::Ticket ticket = cache.Take();
  cache.Evict(Revocation{RevocationKind::kGrant, "10"});
  cache.Put(Hash(1), Token(10), ticket);
  EXPECT_FALSE(cache.Get(Hash(1)).has_value());
  // With a ticket taken after it, the same put is kept.
  cache.Put(Hash(1), Token(10), cache.Take());
  EXPECT_TRUE(cache.Get(Hash(1)).has_value());
  // Clear counts as a revocation of everything.
  const TokenCache::Ticket before_clear = cache.Take();
  cache.Clear();
  cache.Put(Hash(2), Token(11), before_clear);
  EXPECT_EQ(cache.Size(), 0u);
}

TEST(OAuthTokenCache, NoEntriesMeansNoCache) {
  TokenCache cache(TokenCacheLimits{0, 1 << 20});
  MakeFresh(cache);
  EXPECT_FALSE(cache.enabled());
  PutNow(cache, 1, Token(1));
  EXPECT_FALSE(cache.Get(Hash(1)).has_value());
  EXPECT_EQ(cache.Size(), 0u);
}

TEST(OAuthTokenCache, RevocationKindsHaveTheirLogNames) {
  for (RevocationKind k :
       {RevocationKind::kToken, RevocationKind::kGrant, RevocationKind::kUser, RevocationKind::kClient}) {
    EXPECT_EQ(ParseRevocationKind(RevocationKindName(k)), k);
  }
  EXPECT_FALSE(ParseRevocationKind("tokens").has_value());
  EXPECT_FALSE(ParseRevocationKind("").has_value());
}

}  // namespace
}  // namespace rendezvous::oauth
