// Responses as bytes on the wire (RFC 9112): status line, fields, body. Pure functions,
// thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "rendezvous/http.hpp"

namespace rendezvous::core {

struct WireContext {
  std::string_view request_id;
  bool keep_alive = true;
  bool head = false;  // a HEAD request: Content-Length of the body that is not sent
};

// "OK", "Not Found" ...; "Unknown" for a code without a registered phrase.
std::string_view ReasonPhrase(int status);

// The whole response: X-Request-Id, Date, Content-Type, the response's own headers (those whose
// name or value could not be written safely are dropped and named in `dropped`), Content-Length and
// Connection. 1xx, 204 and 304 carry neither Content-Length nor a body.
std::string SerializeResponse(const Response& response, const WireContext& context, std::string* dropped = nullptr);

// True for names the server writes itself (Connection, Content-Length, Transfer-Encoding, Date,
// X-Request-Id, Content-Type): a handler's header of that name is dropped.
bool IsReservedResponseHeader(std::string_view name);

}  // namespace rendezvous::core
