#include "busy_cache.hpp"

#include <algorithm>

namespace rendezvous::calendar {
namespace {

constexpr std::chrono::seconds kFreshAfterFailure{10};

std::vector<BusyPeriod> Overlapping(const std::vector<BusyPeriod>& periods, time::Millis from, time::Millis to) {
  std::vector<BusyPeriod> out;
  for (const BusyPeriod& p : periods) {
    if (p.start < to && p.end > from) out.push_back(p);
  }
  return out;
}

}  // namespace

BusyCache::BusyCache(std::chrono::seconds fresh, std::chrono::seconds stale, size_t max_users)
    : fresh_(fresh), stale_(std::max(stale, fresh)), max_users_(max_users) {}

std::optional<CollectedBusy> BusyCache::Fresh(int64_t user_id, time::Millis from, time::Millis to,
                                              Clock::time_point now) {
  if (fresh_.count() == 0) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = users_.find(user_id);
  if (it == users_.end()) return std::nullopt;
  for (const Entry& e : it->second) {
    if (e.from <= from && to <= e.to && now < e.fresh_until) {
      CollectedBusy out;
      out.periods = Overlapping(e.busy.periods, from, to);
      out.failures = e.busy.failures;
      out.sources = e.busy.sources;
      return out;
    }
  }
  return std::nullopt;
}

std::optional<BusyCache::Known> BusyCache::LastKnown(int64_t user_id, const std::string& source, int64_t source_id,
                                                     time::Millis from, time::Millis to, Clock::time_point now) {
  if (stale_.count() == 0) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = users_.find(user_id);
  if (it == users_.end()) return std::nullopt;
  const Entry* best = nullptr;
  Clock::time_point best_said;
  for (const Entry& e : it->second) {
    if (e.from > from || to > e.to) continue;
    const bool failed = std::any_of(e.busy.failures.begin(), e.busy.failures.end(), [&](const BusySourceError& f) {
      return f.source == source && f.source_id == source_id;
    });
    Clock::time_point said = e.fetched;
    if (failed) {
      auto stand_in = e.stand_ins.find({source, source_id});
      if (stand_in == e.stand_ins.end()) continue;
      said = stand_in->second;
    }
    if (now - said > stale_) continue;
    if (!best || said > best_said) {
      best = &e;
      best_said = said;
    }
  }
  if (!best) return std::nullopt;
  Known out{{}, best_said};
  for (const BusyPeriod& p : Overlapping(best->busy.periods, from, to)) {
    if (p.source == source && p.source_id == source_id) out.periods.push_back(p);
  }
  return out;
}

void BusyCache::Put(int64_t user_id, time::Millis from, time::Millis to, const CollectedBusy& busy,
                    Clock::time_point now, const std::map<std::pair<std::string, int64_t>, Clock::time_point>& stand_ins) {
  if (stale_.count() == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (users_.size() >= max_users_ && users_.count(user_id) == 0) {
    for (auto it = users_.begin(); it != users_.end();) {
      std::vector<Entry>& entries = it->second;
      entries.erase(std::remove_if(entries.begin(), entries.end(),
                                   [&](const Entry& e) { return now - e.fetched > stale_; }),
                    entries.end());
      it = entries.empty() ? users_.erase(it) : std::next(it);
    }
    if (users_.size() >= max_users_) users_.clear();
  }
  std::vector<Entry>& entries = users_[user_id];
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [&](const Entry& e) {
                                 return now - e.fetched > stale_ || (from <= e.from && e.to <= to);
                               }),
                entries.end());
  if (entries.size() >= kWindowsPerUser) {
    entries.erase(std::min_element(entries.begin(), entries.end(),
                                   [](const Entry& a, const Entry& b) { return a.fetched < b.fetched; }));
  }
  const std::chrono::seconds fresh = busy.failures.empty() ? fresh_ : std::min(fresh_, kFreshAfterFailure);
  entries.push_back(Entry{from, to, now, now + fresh, busy, stand_ins});
}

void BusyCache::Forget(int64_t user_id) {
  std::lock_guard<std::mutex> lock(mu_);
  users_.erase(user_id);
}

}  // namespace rendezvous::calendar
