// Percent-encoding helpers for request targets, query strings and form bodies. Pure functions,
// thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rendezvous::core {

// Decodes %XX escapes. With plus_as_space, '+' becomes ' ' (query strings and form bodies).
// nullopt on a truncated or non-hex escape, or on an escaped NUL.
std::optional<std::string> PercentDecode(std::string_view in, bool plus_as_space);

// Encodes everything but RFC 3986 unreserved characters (and '/' when keep_slash).
std::string PercentEncode(std::string_view in, bool keep_slash = false);

// Splits "a=1&b=2" into decoded pairs in order. Empty pieces are skipped; "a" alone is ("a", "").
// nullopt on a bad escape.
std::optional<std::vector<std::pair<std::string, std::string>>> ParseUrlEncoded(std::string_view in);

// Splits a raw request path ("/v2/a%20b/c") into decoded segments {"v2","a b","c"}. The path must
// start with '/'. nullopt when it does not or when a segment holds a bad escape.
std::optional<std::vector<std::string>> SplitPath(std::string_view raw_path);

}  // namespace rendezvous::core
