// The one URL kit of the server and its plugins: an absolute URL parsed once into a value,
// percent-encoding and decoding, application/x-www-form-urlencoded forms, and host checks. Which
// addresses a connection may reach is the address policy's (rendezvous/address_policy.hpp); requests go out
// through rendezvous/outbound.hpp. Pure functions, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rendezvous/status.hpp"

namespace rendezvous::net {

// An absolute, hierarchical URL "scheme://host[:port][/path][?query][#fragment]".
struct Url {
  std::string scheme;                   // lower-cased
  std::string host;                     // lower-cased; an IPv6 literal without its brackets
  bool ipv6 = false;                    // the host is an IPv6 literal (written in brackets)
  std::optional<int> port;              // when written (1 to 65535)
  std::string path;                     // "" or starting with '/', as written
  std::optional<std::string> query;     // without '?', as written
  std::optional<std::string> fragment;  // without '#', as written

  // The written port, else the scheme's (http 80, https 443, smtp 25, smtps 465); 0 when unknown.
  int EffectivePort() const;
  // The host as it stands in a URL: an IPv6 literal in brackets.
  std::string HostInUrl() const;
  // "host:port" with the effective port: where a connection goes.
  std::string Destination() const;
  // Same scheme, host and effective port.
  bool SameOrigin(const Url& other) const;
};

// Parses an absolute, hierarchical URL of printable ASCII: no spaces, control or non-ASCII
// characters, no backslash, no user information. The host is an RFC 3986 reg-name (without
// percent-escapes) or a bracketed IPv6 address; a port, when written, is 1 to 65535. kInvalid
// otherwise, with a message that says what is wrong ("URL has an invalid port") without echoing
// the input.
Result<Url> ParseUrl(std::string_view text);

// A host name as DNS knows it: 1 to 253 letters, digits, '-', '.' and '_' (an IPv4 literal is
// one too).
bool IsDnsName(std::string_view host);

// "localhost" (any case) or an IP literal of the loopback range (127.0.0.0/8, ::1) in its usual
// notation (dotted quad without leading zeros, IPv6 without brackets): RFC 8252 §7.3.
bool IsLoopbackHost(std::string_view host);

// Encodes everything but the RFC 3986 unreserved characters (A-Z a-z 0-9 - . _ ~), and '/' when
// keep_slash: safe as a path segment, a query name or value, a form value.
std::string PercentEncode(std::string_view in, bool keep_slash = false);

// Decodes %XX escapes; with plus_as_space, '+' is a space (query strings, form bodies). nullopt on
// a truncated or non-hex escape, or on an escaped NUL.
std::optional<std::string> PercentDecode(std::string_view in, bool plus_as_space);

// Decodes one application/x-www-form-urlencoded component: '+' is a space, %XX any byte (NUL
// included: the caller judges which characters it accepts). nullopt on a malformed escape.
std::optional<std::string> FormDecode(std::string_view in);

// Splits "a=1&b=2" into decoded pairs in order (PercentDecode with '+' as space). Empty pieces are
// skipped; "a" alone is ("a", ""). nullopt on a bad escape.
std::optional<std::vector<std::pair<std::string, std::string>>> ParseUrlEncoded(std::string_view in);

// "a=1&b=x%20y": the pairs joined, each name and value percent-encoded.
std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& params);

// Appends the parameters to `url`'s query ('?' or '&' as needed), each name and value
// percent-encoded; a fragment of `url` stays after the query.
std::string AppendQuery(std::string_view url, const std::vector<std::pair<std::string, std::string>>& params);

// Splits a raw request path ("/v2/a%20b/c") into decoded segments {"v2","a b","c"}. The path must
// start with '/'. nullopt when it does not or when a segment holds a bad escape.
std::optional<std::vector<std::string>> SplitPath(std::string_view raw_path);

}  // namespace rendezvous::net
