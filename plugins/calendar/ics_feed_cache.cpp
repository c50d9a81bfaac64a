#include "ics_feed_cache.hpp"

#include <algorithm>
#include <vector>

namespace rendezvous::calendar {
namespace {

constexpr std::chrono::seconds kFeedFreshAfterFailure{10};

}  // namespace

IcsFeedCache::IcsFeedCache(RefreshPool& pool, std::chrono::seconds stale, size_t max_bytes,
                           size_t max_entries, std::function<void(size_t)> held_changed)
    : pool_(pool),
      stale_(stale),
      max_bytes_(max_bytes),
      max_entries_(max_entries),
      held_changed_(std::move(held_changed)) {}

void IcsFeedCache::Drop(Entry& e) {
  held_ -= std::min(held_, e.held);
  e.calendar.reset();
  e.bytes = 0;
  e.held = 0;
}

IcsFeedCache::Answer IcsFeedCache::StandIn(const Entry& e, Clock::time_point now) const {
  Answer a;
  if (e.calendar && now - e.good_at <= stale_) {
    a.calendar = e.calendar;
    a.bytes = e.bytes;
  }
  return a;
}

IcsFeedCache::Ticket IcsFeedCache::Start(const std::string& key, std::chrono::seconds fresh,
                                         std::chrono::milliseconds refresh_budget, Downloader download) {
  Ticket t;
  t.key = key;
  std::unique_lock<std::mutex> lock(mu_);
  const Clock::time_point now = Clock::now();
  if (entries_.count(key) == 0 && entries_.size() >= max_entries_) {
    Evict(now);
    if (held_changed_) held_changed_(held_);
  }
  Entry& e = entries_[key];
  e.used_at = now;
  if (e.flight) {
    t.flight = e.flight;
    return t;
  }
  if (e.calendar && !e.failure && now - e.good_at < fresh) {
    t.ready = Answer{e.calendar, e.bytes, std::nullopt, false};
    return t;
  }
  if (e.failure && now - e.failed_at < std::min(fresh, kFeedFreshAfterFailure)) {
    t.ready = StandIn(e, now);
    t.ready->failure = e.failure;
    return t;
  }
  auto flight = std::make_shared<Flight>();
  flight->started = now;
  e.flight = flight;
  std::optional<Validators> validators;
  if (e.calendar) validators = e.validators;
  const Clock::time_point refresh_deadline = now + refresh_budget;
  lock.unlock();
  const bool started = pool_.Submit([this, key, flight, validators, refresh_deadline, download] {
    Download d;
    try {
      d = download(validators, refresh_deadline);
    } catch (const std::exception& ex) {
      d.kind = Download::Kind::kFailed;
      d.failure = Status(ErrorCode::kUpstreamFailed, std::string("could not be read: ") + ex.what());
    }
    Finish(key, flight, std::move(d));
  });
  lock.lock();
  if (started) {
    t.flight = flight;
    return t;
  }
  Entry& again = entries_[key];
  if (again.flight == flight) again.flight.reset();
  t.ready = StandIn(again, Clock::now());
  if (!t.ready->calendar)
    t.ready->failure =
        Status(ErrorCode::kUpstreamTimeout, "was not read: too many calendars are being read at once");
  t.ready->pending = true;
  return t;
}

IcsFeedCache::Answer IcsFeedCache::Await(const Ticket& t, Clock::time_point deadline,
                                         std::chrono::milliseconds max_wait) {
  if (t.ready) return *t.ready;
  std::unique_lock<std::mutex> lock(mu_);
  const Clock::time_point until = std::min(deadline, t.flight->started + max_wait);
  cv_.wait_until(lock, until, [&] { return t.flight->done; });
  if (t.flight->done) return t.flight->answer;
  auto it = entries_.find(t.key);
  Answer a = it == entries_.end() ? Answer{} : StandIn(it->second, Clock::now());
  if (!a.calendar) a.failure = Status(ErrorCode::kUpstreamTimeout, "did not answer in time");
  a.pending = true;
  return a;
}

void IcsFeedCache::Finish(const std::string& key, const std::shared_ptr<Flight>& flight, Download d) {
  std::shared_ptr<const CompactIcs> dropped;  // freed outside the lock
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Clock::time_point now = Clock::now();
    Entry& e = entries_[key];
    if (e.flight == flight) e.flight.reset();
    e.used_at = now;
    Answer a;
    switch (d.kind) {
      case Download::Kind::kParsed:
        dropped = e.calendar;
        Drop(e);
        e.calendar = std::move(d.calendar);
        e.bytes = d.bytes;
        e.held = d.held_bytes;
        held_ += e.held;
        a = Answer{e.calendar, e.bytes, std::nullopt, false};
        // Heavier than the whole bound: answered to the callers waiting for it, not kept (keeping
        // it would push out every other feed and then go itself).
        if (e.held > max_bytes_) Drop(e);
        e.validators = std::move(d.validators);
        e.good_at = now;
        e.failure.reset();
        break;
      case Download::Kind::kNotModified:
        e.good_at = now;
        e.failure.reset();
        a = Answer{e.calendar, e.bytes, std::nullopt, false};
        break;
      case Download::Kind::kFailed:
        e.failure = d.failure;
        e.failed_at = now;
        a = StandIn(e, now);
        a.failure = d.failure;
        break;
    }
    flight->answer = std::move(a);
    flight->done = true;
    Evict(now);
    if (held_changed_) held_changed_(held_);
  }
  cv_.notify_all();
}

void IcsFeedCache::Evict(Clock::time_point now) {
  // Parses not confirmed within `stale` are of no use any more.
  for (auto& [key, e] : entries_) {
    if (e.calendar && !e.flight && now - e.good_at > stale_) Drop(e);
  }
  if (held_ <= max_bytes_ && entries_.size() <= max_entries_) return;
  std::vector<std::map<std::string, Entry>::iterator> order;
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (!it->second.flight) order.push_back(it);
  }
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a->second.used_at < b->second.used_at; });
  for (auto it : order) {
    if (held_ <= max_bytes_ && entries_.size() <= max_entries_ * 9 / 10) break;
    Drop(it->second);
    entries_.erase(it);
  }
}

std::optional<size_t> IcsFeedCache::KnownBytes(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || !it->second.calendar) return std::nullopt;
  return it->second.bytes;
}

size_t IcsFeedCache::kept_bytes() {
  std::lock_guard<std::mutex> lock(mu_);
  return held_;
}

}  // namespace rendezvous::calendar
