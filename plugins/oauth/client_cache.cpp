#include "client_cache.hpp"

namespace rendezvous::oauth {
namespace {

// What an entry holds beyond its strings, and what each string adds (see token_cache.cpp).
constexpr size_t kEntryOverhead = 192;
constexpr size_t kStringOverhead = 48;

size_t Weigh(const std::string& client_id, const ClientCredentials& c) {
  size_t bytes = kEntryOverhead + client_id.size();
  for (const std::string& h : c.active_secret_hashes) bytes += h.size() + kStringOverhead;
  return bytes;
}

}  // namespace

ClientCache::ClientCache(ClientCacheLimits limits, Metrics* metrics)
    : enabled_(limits.max_entries > 0 && limits.max_bytes > 0),
      cache_(limits.max_entries > 0 ? limits.max_entries : 1,
             enabled_ ? std::chrono::milliseconds(kTimeToLive) : std::chrono::milliseconds(0), &Clock::now,
             limits.max_bytes, &Weigh) {
  if (!metrics) return;
  MetricFamily& lookups =
      metrics->Counter("oauth_client_cache_lookups_total",
                       "Client credential look-ups by outcome: hit (served from memory), miss (read from the "
                       "database), stale (in memory but the revocation log was not read lately).",
                       {"result"});
  hits_ = &lookups.With({"hit"});
  misses_ = &lookups.With({"miss"});
  stale_ = &lookups.With({"stale"});
  MetricFamily& evictions = metrics->Counter(
      "oauth_client_cache_evictions_total",
      "Cached client credentials dropped: bound (entries or bytes), revoked (a change to the client).",
      {"reason"});
  evicted_bound_ = &evictions.With({"bound"});
  evicted_revoked_ = &evictions.With({"revoked"});
  entries_ =
      &metrics->Gauge("oauth_client_cache_entries", "Clients whose credentials are held in memory.").With();
}

ClientCache::Ticket ClientCache::Take() const {
  return Ticket{generation_.load()};
}

std::optional<ClientCredentials> ClientCache::Get(const std::string& client_id) {
  if (!enabled_) return std::nullopt;
  std::optional<ClientCredentials> entry = cache_.Get(client_id);
  if (!entry) {
    if (misses_) misses_->Increment();
    return std::nullopt;
  }
  if (Clock::now().time_since_epoch().count() >= fresh_until_.load()) {
    if (stale_) stale_->Increment();
    return std::nullopt;
  }
  if (hits_) hits_->Increment();
  return entry;
}

void ClientCache::Put(const std::string& client_id, const ClientCredentials& credentials,
                      const Ticket& ticket) {
  if (!enabled_) return;
  cache_.Put(client_id, credentials);
  // An eviction since the ticket may have found nothing to drop: Evict moves the generation
  // before it drops, so one of the two sees the other.
  if (generation_.load() != ticket.generation) cache_.Erase(client_id);
}

void ClientCache::Evict(const std::string& client_id) {
  if (!enabled_) return;
  generation_.fetch_add(1);
  const bool present = cache_.Get(client_id).has_value();
  cache_.Erase(client_id);
  if (present && evicted_revoked_) evicted_revoked_->Increment();
}

void ClientCache::Clear() {
  generation_.fetch_add(1);
  cache_.EraseIf([](const std::string&, const ClientCredentials&) { return true; });
}

void ClientCache::SetFreshUntil(Clock::time_point until) {
  fresh_until_.store(until.time_since_epoch().count());
}

void ClientCache::PublishGauges() {
  if (entries_) entries_->Set(static_cast<double>(cache_.Size()));
  const uint64_t evicted = cache_.Evicted();
  if (evicted_bound_ && evicted > published_evictions_) {
    evicted_bound_->Add(static_cast<double>(evicted - published_evictions_));
  }
  published_evictions_ = evicted;
}

}  // namespace rendezvous::oauth
