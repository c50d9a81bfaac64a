// Counts failed sign-ins per (email, client IP) in memory and refuses further attempts after
// `max_failures` within `window`. Per process: with several instances an attacker gets at most
// max_failures per instance and window. Bounded: at most `capacity` keys are tracked; when full,
// expired keys are dropped and, if that is not enough, the oldest half. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

namespace rendezvous::core {

class LoginThrottle {
 public:
  using Clock = std::chrono::steady_clock;
  using NowFn = std::function<Clock::time_point()>;

  LoginThrottle(int max_failures = 10, std::chrono::seconds window = std::chrono::minutes(15),
                size_t capacity = 100000, NowFn now = &Clock::now);

  // True when this key may try again (fewer than max_failures in the current window).
  bool Allowed(const std::string& key);
  void RecordFailure(const std::string& key);
  void Reset(const std::string& key);

  static std::string Key(const std::string& email, const std::string& ip) { return email + "|" + ip; }

 private:
  struct Entry {
    int failures = 0;
    Clock::time_point window_start;
  };
  void MakeRoom(Clock::time_point now);

  const int max_failures_;
  const std::chrono::seconds window_;
  const size_t capacity_;
  const NowFn now_;
  std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace rendezvous::core
