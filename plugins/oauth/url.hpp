// URL handling for OAuth: parsing absolute URLs (redirect URIs, client logo/website), loopback
// detection (RFC 8252 §7.3 / RFC 9700 §2.1), percent-encoding of query components and
// application/x-www-form-urlencoded decoding. Pure functions, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rendezvous/status.hpp"

namespace rendezvous::oauth {

// The parts of an absolute URL "scheme://host[:port][/path][?query][#fragment]". Views point into
// the string given to ParseAbsoluteUrl, which must outlive them.
struct UrlParts {
  std::string scheme;          // lower-cased
  std::string_view host;       // as written; IPv6 literals keep their brackets ("[::1]")
  std::optional<int> port;     // when written
  std::string_view path;       // "" or starting with '/'
  bool has_query = false;
  std::string_view query;      // without '?'
  bool has_fragment = false;
  std::string_view fragment;   // without '#'
};

// Parses an absolute, hierarchical URL of printable ASCII (no spaces, no backslashes, no user
// info). The error message says what is wrong, without echoing the input.
Result<UrlParts> ParseAbsoluteUrl(std::string_view url);

// True for "localhost" (any case), an IPv4 literal in 127.0.0.0/8, and "[::1]".
bool IsLoopbackHost(std::string_view host);

// Percent-encodes everything but the RFC 3986 unreserved characters (A-Z a-z 0-9 - . _ ~), so
// the result is safe as a query name or value.
std::string PercentEncode(std::string_view text);

// Decodes one application/x-www-form-urlencoded component: '+' is a space, %XX a byte. nullopt on
// a malformed escape.
std::optional<std::string> FormDecode(std::string_view text);

// Appends the parameters to `url`'s query ('?' or '&' as needed), each name and value
// percent-encoded. A fragment in `url` (never in a registered redirect URI) would be kept after
// the query.
std::string AppendQuery(std::string_view url,
                        const std::vector<std::pair<std::string, std::string>>& params);

}  // namespace rendezvous::oauth
