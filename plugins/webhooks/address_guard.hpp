// Where webhook deliveries may go (DESIGN §6): subscriber URLs are absolute http(s) URLs without
// credentials or fragment (parsed by the host's kit, rendezvous/url.hpp, once per create or
// update and once per claimed delivery), and unless private networks are allowed their host must
// resolve only to public addresses (the host's one address policy, rendezvous/address_policy.hpp). The
// delivery engine connects to the very address that was checked, so a name whose DNS answer
// changes between the check and the connection cannot reach an internal service.
// Pure functions (CheckedAddress asks the system resolver, blocking); thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "rendezvous/status.hpp"
#include "rendezvous/url.hpp"

namespace rendezvous::webhooks {

inline constexpr size_t kMaxUrlLength = 2048;

// Parses an absolute http(s) URL whose host is a DNS name or an address: no user information, no
// fragment, no spaces, control or non-ASCII characters, no backslash, at most kMaxUrlLength bytes.
// kInvalid on the field subscriberUrl, with a message that says what is wrong.
Result<net::Url> ParseSubscriberUrl(std::string_view url);

// What CheckedAddress found wrong, for the caller that decides on a retry.
enum class AddressRefusal {
  kNone,
  kUnresolved,  // the host did not resolve: it may later
  kNotPublic,   // an address is not public: that will not change by waiting
};

// The address to connect to for `url`: the first address its host resolves to. Unless
// `allow_private`, every address must be public. kInvalid on the field subscriberUrl otherwise,
// naming the first address that is not public and why; `refusal`, when given, says which. The
// check of create, update and every send.
Result<std::string> CheckedAddress(const net::Url& url, bool allow_private, AddressRefusal* refusal = nullptr);

}  // namespace rendezvous::webhooks
