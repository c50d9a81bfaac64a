// From a framed request (RequestParser) to the parts the router and handlers use. Pure functions,
// thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "http/request_parser.hpp"
#include "rendezvous/http.hpp"

namespace rendezvous::core {

struct RequestTarget {
  std::string raw_path;   // as sent, starts with '/'
  std::string raw_query;  // after '?', "" when none
};

// Origin-form ("/a/b?c") and absolute-form ("http://host/a/b?c", RFC 9112 §3.2.2). nullopt for
// anything else (authority-form, asterisk-form, a fragment).
std::optional<RequestTarget> SplitTarget(std::string_view target);

// GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS; nullopt for any other token.
std::optional<Method> ParseMethod(std::string_view token);

// Methods the server knows of but never serves (TRACE, CONNECT): 405 where the path exists.
bool IsKnownUnservedMethod(std::string_view token);

// Copies the fields into request.headers: names lower-cased, repeated fields joined with ", "
// (Cookie with "; ").
void CopyHeaders(ParsedRequest& parsed, Request& request);

}  // namespace rendezvous::core
