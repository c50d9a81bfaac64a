// The JSON envelopes of DESIGN §4 and the status -> error code mapping, shared by Response's
// builders and the server's own answers (404, 405, 413, 401 ...). Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "rendezvous/http.hpp"

namespace rendezvous::core {

// The HTTP status of an error category (the table in rendezvous/status.hpp); kOk is 200. The one
// place where a Status becomes a status code.
int HttpStatusFor(ErrorCode code);

// "validation_error" for 400, "unauthorized" for 401 ... "error" for a status without one.
std::string_view DefaultErrorCode(int status);

// Serializes JSON for the wire: invalid UTF-8 in strings is replaced, never thrown.
std::string DumpJson(const Json& value);

// Deepest nesting of arrays/objects in a JSON text (strings skipped). Stops counting past limit
// and returns limit + 1, so a hostile body costs one linear scan.
int JsonNestingDepth(std::string_view text, int limit);

constexpr int kMaxJsonDepth = 64;

}  // namespace rendezvous::core
