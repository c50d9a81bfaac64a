#include "retry_policy.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "rendezvous/text.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::webhooks {

Verdict Classify(long status, bool transport_retryable) {
  if (status == 0) return transport_retryable ? Verdict::kRetry : Verdict::kFailed;
  if (status >= 200 && status < 300) return Verdict::kSucceeded;
  if (status == 410) return Verdict::kGone;
  if (status == 429 || (status >= 500 && status < 600)) return Verdict::kRetry;
  return Verdict::kFailed;
}

std::optional<int64_t> NextDelayMillis(const std::vector<long>& schedule, size_t attempts_made, double unit,
                                       std::optional<int64_t> retry_after_seconds) {
  if (attempts_made == 0 || attempts_made > schedule.size()) return std::nullopt;
  unit = std::clamp(unit, 0.0, 1.0);
  const double base = static_cast<double>(schedule[attempts_made - 1]) * 1000.0;
  auto delay = static_cast<int64_t>(base * (0.8 + 0.4 * unit));
  if (retry_after_seconds) {
    const int64_t longest = *std::max_element(schedule.begin(), schedule.end()) * 1000;
    const int64_t asked = std::min(*retry_after_seconds, longest / 1000 + 1) * 1000;
    if (asked > delay) delay = std::min(asked, longest);
  }
  return delay;
}

int64_t LongestRetryWaitSeconds(const std::vector<long>& schedule) {
  int64_t total_ms = 0;
  for (size_t attempt = 1; attempt <= schedule.size(); ++attempt) {
    total_ms += NextDelayMillis(schedule, attempt, 1.0, std::numeric_limits<int32_t>::max()).value_or(0);
  }
  return (total_ms + 999) / 1000;
}

std::optional<int64_t> ParseRetryAfter(std::string_view value, int64_t now_unix) {
  value = text::Trim(value);
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (value.size() > 9) return int64_t{999999999};
    return std::stoll(std::string(value));
  }
  // IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
  const auto at = time::ParseHttpDate(value);
  if (!at) return std::nullopt;
  return std::max<int64_t>(0, *at / 1000 - now_unix);
}

}  // namespace rendezvous::webhooks
