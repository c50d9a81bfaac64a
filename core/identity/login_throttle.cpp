#include "identity/login_throttle.hpp"

#include <algorithm>
#include <vector>

namespace rendezvous::core {

LoginThrottle::LoginThrottle(int max_failures, std::chrono::seconds window, size_t capacity, NowFn now)
    : max_failures_(max_failures), window_(window), capacity_(std::max<size_t>(capacity, 2)), now_(std::move(now)) {}

bool LoginThrottle::Allowed(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return true;
  if (now_() - it->second.window_start >= window_) {
    entries_.erase(it);
    return true;
  }
  return it->second.failures < max_failures_;
}

void LoginThrottle::RecordFailure(const std::string& key) {
  std::lock_guard lock(mu_);
  auto now = now_();
  auto it = entries_.find(key);
  if (it != entries_.end() && now - it->second.window_start < window_) {
    ++it->second.failures;
    return;
  }
  if (it != entries_.end()) {
    it->second = Entry{1, now};
    return;
  }
  if (entries_.size() >= capacity_) MakeRoom(now);
  entries_.emplace(key, Entry{1, now});
}

void LoginThrottle::Reset(const std::string& key) {
  std::lock_guard lock(mu_);
  entries_.erase(key);
}

void LoginThrottle::MakeRoom(Clock::time_point now) {
  std::erase_if(entries_, [&](const auto& kv) { return now - kv.second.window_start >= window_; });
  if (entries_.size() < capacity_) return;
  // Still full of live windows (a spray of addresses): forget the older half.
  std::vector<Clock::time_point> starts;
  starts.reserve(entries_.size());
  for (const auto& kv : entries_) starts.push_back(kv.second.window_start);
  auto middle = starts.begin() + static_cast<std::ptrdiff_t>(starts.size() / 2);
  std::nth_element(starts.begin(), middle, starts.end());
  Clock::time_point cutoff = *middle;
  std::erase_if(entries_, [&](const auto& kv) { return kv.second.window_start <= cutoff; });
}

}  // namespace rendezvous::core
