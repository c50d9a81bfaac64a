// The calendar plugin's outbound requests (Google, ICS feeds) go through the host's one client,
// rendezvous/outbound.hpp: bounded time and response size, no redirects, no proxy, no content
// encoding (a feed arrives as it is, so its size is what max_response_bytes bounds), http/https
// only, and with block_private_networks the address policy checked on every address. These are
// its names here, and the calendar's own defaults.
#pragma once

#include "rendezvous/outbound.hpp"

namespace rendezvous::calendar {

using FetchRequest = net::HttpRequest;
using FetchResult = net::HttpResponse;
using FetchOutcome = net::HttpOutcome;
using net::OutcomeLabel;

// Performs one request with the calendar's user agent and a feed's validators (ETag, Last-Modified:
// FetchResult::Header) kept for conditional requests. Never throws.
inline FetchResult Fetch(FetchRequest request) noexcept {
  request.user_agent = "rendezvous-calendar/1";
  request.keep_headers = {"etag", "last-modified"};
  return net::Perform(request);
}

}  // namespace rendezvous::calendar
