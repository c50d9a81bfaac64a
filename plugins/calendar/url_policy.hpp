// Which URLs the calendar plugin accepts from callers: the connect flow's `redir` (only the app or
// API origin, never an open redirect) and ICS feed URLs (absolute http(s), no credentials, no
// spaces). URLs are parsed by the host's kit (rendezvous/url.hpp). Pure functions.
#pragma once

#include <optional>
#include <string>

#include "rendezvous/url.hpp"

namespace rendezvous::calendar {

using net::IsLoopbackHost;

// True when `url` is on the app or API origin (a safe `redir`).
bool IsAllowedRedirect(const std::string& url, const std::string& base_url, const std::string& app_url);

// An absolute http(s) URL (scheme lower-cased, host lower-cased without brackets); nullopt for
// anything else.
std::optional<net::Url> ParseFeedUrl(const std::string& url);

// Why `host`, when it is an address literal, is not public (rendezvous/address_policy.hpp); empty for a
// public address or a name (a name's addresses are checked on the connection, see rendezvous/outbound.hpp).
std::string NonPublicLiteral(const std::string& host);

// Holds a space, a control character or DEL.
bool HasControlOrSpace(const std::string& s);

}  // namespace rendezvous::calendar
