// The calendar plugin's one outbound HTTP helper (libcurl): bounded time and response size, no
// redirects, no proxies from the environment, http/https only. Optionally refuses to connect to
// any address that is not public by the host's address policy (rendezvous/net.hpp), checked on the
// socket curl opens, so DNS tricks do not get around it. Thread-safe: each call uses its own curl handle.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace rendezvous::calendar {

struct FetchRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  std::chrono::milliseconds timeout{10000};
  std::chrono::milliseconds connect_timeout{5000};
  size_t max_response_bytes = 1 << 20;
  bool block_private_networks = false;
};

enum class FetchOutcome {
  kOk,  // an HTTP answer arrived (any status)
  kTimeout,
  kConnectFailed,
  kTooLarge,  // the response exceeded max_response_bytes
  kBlocked,   // the address is not public and block_private_networks was set
  kBadUrl,
  kError,  // any other transport failure
};

struct FetchResult {
  FetchOutcome outcome = FetchOutcome::kError;
  long status = 0;
  std::string body;
  std::string content_type;
  std::string etag;           // the ETag and Last-Modified response headers ("" when absent), for
  std::string last_modified;  // conditional requests (If-None-Match / If-Modified-Since)
  std::string error;  // transport error text (never contains the URL's query)

  bool ok() const { return outcome == FetchOutcome::kOk; }
};

// Short label of an outcome for metrics and logs ("ok", "timeout", ...).
const char* OutcomeLabel(FetchOutcome outcome);

// Performs one request. Never throws.
FetchResult Fetch(const FetchRequest& request) noexcept;

}  // namespace rendezvous::calendar
