#include "address_guard.hpp"

#include "rendezvous/address_policy.hpp"

namespace rendezvous::webhooks {
namespace {

Status UrlInvalid(std::string message) { return Status::Invalid("subscriberUrl", std::move(message)); }

}  // namespace

Result<net::Url> ParseSubscriberUrl(std::string_view url) {
  if (url.empty()) return UrlInvalid("subscriberUrl must not be empty");
  if (url.size() > kMaxUrlLength) {
    return UrlInvalid("subscriberUrl must be at most " + std::to_string(kMaxUrlLength) + " characters");
  }
  Result<net::Url> parsed = net::ParseUrl(url);
  if (!parsed.ok()) return UrlInvalid("subscriberUrl is invalid: " + parsed.status().message());
  if (parsed->scheme != "http" && parsed->scheme != "https") {
    return UrlInvalid("subscriberUrl must be an absolute http or https URL");
  }
  if (parsed->fragment) return UrlInvalid("subscriberUrl must not contain a fragment");
  if (!parsed->ipv6 && !net::IsDnsName(parsed->host)) return UrlInvalid("subscriberUrl has a malformed host");
  return parsed;
}

Result<std::string> CheckedAddress(const net::Url& url, bool allow_private, AddressRefusal* refusal) {
  Result<std::string> address = net::ResolveChecked(url.host, allow_private);
  // The policy answers kNotFound for a host that does not resolve, kForbidden for an address it refuses.
  const AddressRefusal why = address.ok()                                         ? AddressRefusal::kNone
                             : address.status().code() == ErrorCode::kNotFound ? AddressRefusal::kUnresolved
                                                                                : AddressRefusal::kNotPublic;
  if (refusal != nullptr) *refusal = why;
  switch (why) {
    case AddressRefusal::kNone:
      return address;
    case AddressRefusal::kUnresolved:
      return UrlInvalid("subscriberUrl's host " + url.host + " does not resolve");
    case AddressRefusal::kNotPublic:
      break;
  }
  return UrlInvalid("subscriberUrl must not point to a non-public address (" + address.status().message() + ")");
}

}  // namespace rendezvous::webhooks
