// Where webhook deliveries may go (DESIGN §6): subscriber URLs are absolute http(s) URLs without
// credentials, and unless private networks are allowed their host must resolve only to public
// addresses (the host's one address policy, rendezvous/net.hpp). The delivery engine connects to the very address that was checked, so a name whose
// DNS answer changes between the check and the connection cannot reach an internal service.
// Pure functions (Resolve* ask the system resolver, blocking); thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/status.hpp"

namespace rendezvous::webhooks {

inline constexpr size_t kMaxUrlLength = 2048;

struct SubscriberUrl {
  std::string scheme;  // "http" or "https"
  std::string host;    // lower-cased; IPv6 literals without brackets
  int port = 0;        // the explicit port, or the scheme's default
};

// Parses an absolute http(s) URL: no user information, no fragment, no spaces, control or
// non-ASCII characters, at most kMaxUrlLength bytes. The message says what is wrong.
Result<SubscriberUrl> ParseSubscriberUrl(std::string_view url);

// Why a numeric address is not public (rendezvous/net.hpp's policy); empty for a public address,
// nullopt when `address` is not a numeric address at all.
std::optional<std::string> ClassifyAddress(std::string_view address);

// The address to connect to for `url`: the first address `host` resolves to. Unless
// `allow_private`, every address must be public (kInvalid naming the first one that is not and
// why). The check of create, update and every send.
Result<std::string> CheckedAddress(const SubscriberUrl& url, bool allow_private);

}  // namespace rendezvous::webhooks
