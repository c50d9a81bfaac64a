// The calendar plugin's options (from its config) and limits, shared by its logic classes.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "rendezvous/status.hpp"

namespace rendezvous::calendar {

struct CalendarOptions {
  std::string base_url;
  std::string app_url;
  std::string encryption_key;               // raw 32 bytes; empty: connecting and saving feeds answer 503
  bool ics_allow_private_networks = false;  // plugins.calendar.ics_allow_private_networks
  // plugins.calendar.busy_times: the time all sources of a user get for the slots of a booking
  // page, and the cache in front of them (busy_cache.hpp; 0 s: no cache).
  std::chrono::milliseconds busy_timeout{5000};
  std::chrono::seconds busy_cache_fresh{60};
  std::chrono::seconds busy_cache_stale{3600};
  // plugins.calendar.ics_memory_bytes: the parsed feeds kept (per URL, for every user naming it)
  // hold at most this much memory together (HeldBytes); the least recently used go first.
  size_t ics_memory_bytes = size_t{256} << 20;
};

using Deadline = std::chrono::steady_clock::time_point;

// Credentials and feed URLs are stored encrypted with this key (crypto.hpp): it must be 32 bytes.
inline bool EncryptionConfigured(const std::string& key) {
  return key.size() == 32;
}
// 503 not_configured unless EncryptionConfigured(key).
Status RequireEncryption(const std::string& key);
// 409 reconnect_required: the stored Google credential cannot be used any more (Google refused
// its refresh token, or it cannot be decrypted); only connecting again helps.
Status ReconnectRequired(const std::string& message);

// Limits (documented in docs/calendar.md and, for the ceilings, docs/operations.md).

constexpr int kStateTtlSeconds = 600;
// The time the outside calls of one API request (feeds saved, busy times asked) may take together.
constexpr std::chrono::milliseconds kRequestBudget{20000};
constexpr int64_t kMaxBusyRangeSeconds = 93LL * 86400;
constexpr size_t kMaxIcsUrlsPerRequest = 10;
constexpr size_t kMaxIcsFeedsPerUser = 50;
constexpr size_t kMaxIcsBytes = 2 << 20;
// Busy-time refreshes (ICS downloads and parses, Google free/busy queries) run on the plugin's own
// threads, never on the API's: this many, with this many refreshes waiting at most.
constexpr size_t kRefreshThreads = 8;
constexpr size_t kRefreshQueue = 1024;
// Feed text being parsed at once, process-wide (a parse takes several times its text in memory).
constexpr size_t kIcsParseBytesAtOnce = 8 << 20;
// A user's feeds count together up to this many bytes of feed text; feeds beyond it are left out
// (named failed). A feed not read yet counts as kMaxIcsBytes until it is.
constexpr size_t kMaxIcsBytesPerUser = 32 << 20;
// After this much large work (feed text parsed, busy-times answers written) and a second without
// any, free memory goes back to the system.
constexpr size_t kTrimAfterBytes = 4 << 20;
constexpr std::chrono::milliseconds kTrimWhenQuiet{1000};
// A slots answer (slots, create, reschedule, reopen) waits for a refresh at most this long after
// the refresh started (and never beyond plugins.calendar.busy_times.timeout_ms), and at most this
// many such requests wait at once; the others answer at once with what is known.
constexpr std::chrono::milliseconds kSlotWait{1000};
constexpr int kMaxSlotWaiters = 2;
constexpr size_t kMaxUrlLength = 2048;
constexpr size_t kMaxEventUidLength = 1024;
// Calendar and feed names are stored in VARCHAR(255) columns, cut to this many bytes.
constexpr size_t kMaxNameBytes = 255;

}  // namespace rendezvous::calendar
