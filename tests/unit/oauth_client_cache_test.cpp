// ClientCache (client_cache.hpp): bounds by entries and bytes, no serving while the revocation log
// has not been read lately, an eviction drops exactly the client it names, and a Put that lost a
// race with an eviction keeps nothing.
#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "client_cache.hpp"

namespace rendezvous::oauth {
namespace {

using Clock = ClientCache::Clock;

std::string Id(int i) {
  return "client-" + std::to_string(i);
}

ClientCredentials Confidential(const std::string& hash = std::string(64, 'a')) {
  ClientCredentials c;
  c.kind = ClientKind::kConfidential;
  c.active_secret_hashes = {hash};
  return c;
}

// The cache may serve for the next minute (as after a read of the log just now).
void MakeFresh(ClientCache& cache) {
  cache.SetFreshUntil(Clock::now() + std::chrono::minutes(1));
}

void PutNow(ClientCache& cache, int i, const ClientCredentials& c = Confidential()) {
  cache.Put(Id(i), c, cache.Take());
}

TEST(OAuthClientCache, ServesWhatWasPut) {
  ClientCache cache(ClientCacheLimits{});
  MakeFresh(cache);
  ClientCredentials two = Confidential(std::string(64, 'b'));
  two.active_secret_hashes.push_back(std::string(64, 'c'));
  PutNow(cache, 1, two);
  std::optional<ClientCredentials> got = cache.Get(Id(1));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->kind, ClientKind::kConfidential);
  EXPECT_EQ(got->active_secret_hashes, two.active_secret_hashes);
  EXPECT_FALSE(cache.Get(Id(2)).has_value());
}

TEST(OAuthClientCache, KeepsAtMostItsEntries) {
  ClientCache cache(ClientCacheLimits{80, 1 << 30});
  MakeFresh(cache);
  for (int i = 0; i < 1000; ++i) PutNow(cache, i);
  EXPECT_LE(cache.Size(), 80u);
  EXPECT_GE(cache.Evicted(), 1000u - 80u);
  EXPECT_TRUE(cache.Get(Id(999)).has_value());
  EXPECT_FALSE(cache.Get(Id(0)).has_value());
}

TEST(OAuthClientCache, KeepsAtMostItsBytes) {
  const size_t max_bytes = 16 * 1024;
  ClientCache cache(ClientCacheLimits{1000000, max_bytes});
  MakeFresh(cache);
  ClientCredentials heavy = Confidential();
  for (int i = 0; i < 10; ++i)
    heavy.active_secret_hashes.push_back(std::string(64, static_cast<char>('b' + i)));
  for (int i = 0; i < 2000; ++i) PutNow(cache, i, heavy);
  EXPECT_LE(cache.Bytes(), max_bytes);
  EXPECT_GT(cache.Size(), 0u);
  EXPECT_LT(cache.Size(), 2000u);
}

TEST(OAuthClientCache, ServesNothingUnlessTheLogWasReadLately) {
  ClientCache cache(ClientCacheLimits{});
  PutNow(cache, 1);
  EXPECT_FALSE(cache.Get(Id(1)).has_value());  // never read
  MakeFresh(cache);
  EXPECT_TRUE(cache.Get(Id(1)).has_value());
  cache.SetFreshUntil(Clock::now() - std::chrono::milliseconds(1));
  EXPECT_FALSE(cache.Get(Id(1)).has_value());
  MakeFresh(cache);
  EXPECT_TRUE(cache.Get(Id(1)).has_value());
}

TEST(OAuthClientCache, AnEvictionDropsTheClientItNames) {
  ClientCache cache(ClientCacheLimits{});
  MakeFresh(cache);
  PutNow(cache, 1);
  PutNow(cache, 2);
  cache.Evict(Id(1));
  EXPECT_FALSE(cache.Get(Id(1)).has_value());
  EXPECT_TRUE(cache.Get(Id(2)).has_value());
  cache.Evict("a client never cached");
  EXPECT_TRUE(cache.Get(Id(2)).has_value());
  cache.Clear();
  EXPECT_EQ(cache.Size(), 0u);
}

TEST(OAuthClientCache, APutThatRacedAnEvictionKeepsNothing) {
  ClientCache cache(ClientCacheLimits{});
  MakeFresh(cache);
  // A reader takes its ticket and reads the old secret; the secret is revoked before it puts.
  const ClientCache::Ticket ticket = cache.Take();
  cache.Evict(Id(1));
  cache.Put(Id(1), Confidential(), ticket);
  EXPECT_FALSE(cache.Get(Id(1)).has_value());
  // With a ticket taken after it, the same put is kept.
  cache.Put(Id(1), Confidential(), cache.Take());
  EXPECT_TRUE(cache.Get(Id(1)).has_value());
  // Clear counts as an eviction of everything.
  const ClientCache::Ticket before_clear = cache.Take();
  cache.Clear();
  cache.Put(Id(2), Confidential(), before_clear);
  EXPECT_EQ(cache.Size(), 0u);
}

TEST(OAuthClientCache, NoEntriesMeansNoCache) {
  ClientCache cache(ClientCacheLimits{0, 1 << 20});
  MakeFresh(cache);
  EXPECT_FALSE(cache.enabled());
  PutNow(cache, 1);
  EXPECT_FALSE(cache.Get(Id(1)).has_value());
  EXPECT_EQ(cache.Size(), 0u);
}

}  // namespace
}  // namespace rendezvous::oauth
