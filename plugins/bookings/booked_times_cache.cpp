#include "booked_times_cache.hpp"

namespace rendezvous::bookings {

std::optional<std::vector<BookedTime>> BookedTimesCache::Find(int64_t host, int64_t version, time::Millis from,
                                                             time::Millis to) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(host);
  if (it == entries_.end() || it->second.version != version || from < it->second.from || to > it->second.to) {
    return std::nullopt;
  }
  recent_.splice(recent_.begin(), recent_, it->second.age);
  return it->second.times;
}

void BookedTimesCache::Put(int64_t host, int64_t version, time::Millis from, time::Millis to,
                           std::vector<BookedTime> times) {
  if (times.size() > max_times_ || max_hosts_ == 0) return;
  std::lock_guard lock(mu_);
  auto it = entries_.find(host);
  if (it != entries_.end()) {
    recent_.erase(it->second.age);
    entries_.erase(it);
  }
  while (entries_.size() >= max_hosts_) {
    entries_.erase(recent_.back());
    recent_.pop_back();
  }
  recent_.push_front(host);
  entries_.emplace(host, Entry{version, from, to, std::move(times), recent_.begin()});
}

}  // namespace rendezvous::bookings
