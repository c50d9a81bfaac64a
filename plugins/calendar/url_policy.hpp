// Which URLs the calendar plugin accepts from callers: the connect flow's `redir` (only the app or
// API origin, never an open redirect) and ICS feed URLs (absolute http(s), no credentials, no
// spaces). Pure functions.
#pragma once

#include <optional>
#include <string>

namespace rendezvous::calendar {

// True when `url` is on the app or API origin (a safe `redir`).
bool IsAllowedRedirect(const std::string& url, const std::string& base_url, const std::string& app_url);

struct FeedUrl {
  std::string scheme;  // "http" or "https", lower-cased
  std::string host;    // lower-cased, without brackets
};

// The scheme and host of an absolute http(s) URL without user info; nullopt otherwise.
std::optional<FeedUrl> ParseFeedUrl(const std::string& url);

// "localhost" or a loopback address literal.
bool IsLoopbackHost(const std::string& host);

// Why `host`, when it is an address literal, is not public (rendezvous/net.hpp); empty for a
// public address or a name (a name's addresses are checked on the connection, see http_fetch.hpp).
std::string NonPublicLiteral(const std::string& host);

// Holds a space, a control character or DEL.
bool HasControlOrSpace(const std::string& s);

}  // namespace rendezvous::calendar
