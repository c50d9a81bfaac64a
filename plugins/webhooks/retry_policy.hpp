// What an attempt's outcome means for a delivery (DESIGN §6): 2xx succeeded; timeouts,
// connection errors, 429 and 5xx are retried after the delays of the configured schedule, each
// with ±20% jitter, a longer Retry-After being honoured up to the schedule's longest delay; 410
// fails and disables the webhook; anything else (other 4xx, 1xx, 3xx — redirects are not
// followed —, an address refused by the guard) fails at once. Pure logic; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace rendezvous::webhooks {

enum class Verdict { kSucceeded, kRetry, kFailed, kGone };

// `status` is the HTTP status, 0 when no answer arrived; `transport_retryable` says whether such
// a transport failure is worth retrying (a timeout, a refused connection: yes; a refused address:
// no).
Verdict Classify(long status, bool transport_retryable);

// Milliseconds to wait before the next attempt once `attempts_made` (1-based) attempts of this
// round failed, or nullopt when the schedule is spent. `unit` in [0, 1] picks the jitter (the
// scheduled delay times 0.8 .. 1.2). `retry_after_seconds`, when longer, replaces the delay, capped
// at the schedule's longest delay.
std::optional<int64_t> NextDelayMillis(const std::vector<long>& schedule, size_t attempts_made, double unit,
                                       std::optional<int64_t> retry_after_seconds = std::nullopt);

// The longest a delivery's retries can wait in all, in seconds (rounded up): every delay of the
// schedule at its longest (NextDelayMillis with the most jitter and a Retry-After at its cap).
int64_t LongestRetryWaitSeconds(const std::vector<long>& schedule);

// A Retry-After value (RFC 9110): delay seconds or an HTTP date, as seconds from `now_unix`
// (never negative). nullopt when it is neither.
std::optional<int64_t> ParseRetryAfter(std::string_view value, int64_t now_unix);

}  // namespace rendezvous::webhooks
