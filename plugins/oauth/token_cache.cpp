#include "token_cache.hpp"

#include <exception>

namespace rendezvous::oauth {
namespace {

// What an entry holds beyond its strings, and what each string adds (its characters and the
// bookkeeping of a node or a heap block): an estimate that keeps the byte bound honest.
constexpr size_t kEntryOverhead = 256;
constexpr size_t kStringOverhead = 48;

size_t Weigh(const std::string& hash, const ResolvedToken& t) {
  size_t bytes = kEntryOverhead + hash.size() + t.client_id.size() + t.dpop_jkt.size() + t.scope_text.size();
  for (const std::string& s : t.scopes) bytes += s.size() + kStringOverhead;
  return bytes;
}

MetricFamily* LookupFamily(Metrics* metrics) {
  if (!metrics) return nullptr;
  return &metrics->Counter("oauth_token_cache_lookups_total",
                           "Access token look-ups by outcome: hit (served from memory), miss (read from the "
                           "database), stale (in memory but the revocation log was not read lately).",
                           {"result"});
}

MetricFamily* EvictionFamily(Metrics* metrics) {
  if (!metrics) return nullptr;
  return &metrics->Counter("oauth_token_cache_evictions_total",
                           "Cached access tokens dropped: bound (entries or bytes), revoked (a revocation "
                           "named them).",
                           {"reason"});
}

}  // namespace

TokenCache::TokenCache(TokenCacheLimits limits, Metrics* metrics)
    : enabled_(limits.max_entries > 0 && limits.max_bytes > 0),
      cache_(limits.max_entries > 0 ? limits.max_entries : 1,
             enabled_ ? decltype(cache_)::kNoExpiry : std::chrono::milliseconds(0), &Clock::now,
             limits.max_bytes, [](const std::string& hash, const Entry& e) { return Weigh(hash, e.token); }) {
  if (MetricFamily* lookups = LookupFamily(metrics)) {
    hits_ = &lookups->With({"hit"});
    misses_ = &lookups->With({"miss"});
    stale_ = &lookups->With({"stale"});
  }
  if (MetricFamily* evictions = EvictionFamily(metrics)) {
    evicted_bound_ = &evictions->With({"bound"});
    evicted_revoked_ = &evictions->With({"revoked"});
  }
  if (metrics) {
    entries_ = &metrics->Gauge("oauth_token_cache_entries", "Access tokens held in memory.").With();
    bytes_ =
        &metrics->Gauge("oauth_token_cache_bytes", "What the access tokens held in memory weigh (estimate).")
             .With();
  }
}

TokenCache::Ticket TokenCache::Take() const {
  return Ticket{generation_.load(), Clock::now()};
}

std::optional<ResolvedToken> TokenCache::Get(const std::string& hash) {
  if (!enabled_) return std::nullopt;
  const Clock::time_point now = Clock::now();
  std::optional<Entry> entry = cache_.Get(hash);
  if (!entry) {
    if (misses_) misses_->Increment();
    return std::nullopt;
  }
  if (now >= entry->expires) {
    cache_.Erase(hash);
    if (misses_) misses_->Increment();
    return std::nullopt;
  }
  if (now.time_since_epoch().count() >= fresh_until_.load()) {
    if (stale_) stale_->Increment();
    return std::nullopt;
  }
  if (hits_) hits_->Increment();
  return std::move(entry->token);
}

void TokenCache::Put(const std::string& hash, const ResolvedToken& token, const Ticket& ticket) {
  if (!enabled_ || token.expires_in_ms <= 0) return;
  cache_.Put(hash, Entry{token, ticket.taken + std::chrono::milliseconds(token.expires_in_ms)});
  // A revocation applied since the ticket may name this token and have found nothing to drop:
  // Evict moves the generation before it drops, so one of the two sees the other.
  if (generation_.load() != ticket.generation) cache_.Erase(hash);
}

void TokenCache::Evict(const Revocation& revocation) {
  if (!enabled_) return;
  generation_.fetch_add(1);
  uint64_t dropped = 0;
  if (revocation.kind == RevocationKind::kToken) {
    if (cache_.Get(revocation.subject)) dropped = 1;
    cache_.Erase(revocation.subject);
  } else {
    int64_t id = 0;
    if (revocation.kind != RevocationKind::kClient) {
      try {
        id = std::stoll(revocation.subject);
      } catch (const std::exception&) {
        Clear();  // a subject we cannot read: drop everything rather than guess
        return;
      }
    }
    cache_.EraseIf([&](const std::string&, const Entry& e) {
      bool match = false;
      switch (revocation.kind) {
        case RevocationKind::kGrant:
          match = e.token.grant_id == id;
          break;
        case RevocationKind::kUser:
          match = e.token.user_id == id;
          break;
        case RevocationKind::kClient:
          match = e.token.client_id == revocation.subject;
          break;
        case RevocationKind::kToken:
          break;
      }
      dropped += match ? 1 : 0;
      return match;
    });
  }
  if (evicted_revoked_ && dropped > 0) evicted_revoked_->Add(static_cast<double>(dropped));
}

void TokenCache::Clear() {
  generation_.fetch_add(1);
  cache_.EraseIf([](const std::string&, const Entry&) { return true; });
}

void TokenCache::SetFreshUntil(Clock::time_point until) {
  fresh_until_.store(until.time_since_epoch().count());
}

void TokenCache::PublishGauges() {
  if (entries_) entries_->Set(static_cast<double>(cache_.Size()));
  if (bytes_) bytes_->Set(static_cast<double>(cache_.Bytes()));
  const uint64_t evicted = cache_.Evicted();
  if (evicted_bound_ && evicted > published_evictions_) {
    evicted_bound_->Add(static_cast<double>(evicted - published_evictions_));
  }
  published_evictions_ = evicted;
}

}  // namespace rendezvous::oauth
