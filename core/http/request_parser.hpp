// HTTP/1.1 request framing (RFC 9112) for one connection: finds where each request ends in the
// bytes a client sends, so pipelined requests are taken one by one and no byte of a refused body is
// ever read as a request.
//
// Strict where leniency lets a request be read two ways (request smuggling): lines end in CRLF,
// no whitespace before a field's colon, no folded lines, one Content-Length value, no
// Content-Length beside Transfer-Encoding, chunked the only transfer coding. Every error is final:
// the connection answers it and closes.
//
// Not thread-safe: one parser per connection, used under the connection's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rendezvous::core {

struct ParsedRequest {
  std::string method;  // the token as sent (case-sensitive, RFC 9110 §9.1)
  std::string target;  // the raw request-target
  int minor_version = 1;  // HTTP/1.<minor_version>
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, values trimmed
  std::string body;    // de-chunked
  bool keep_alive = true;  // what the client asked for (Connection and version)
};

class RequestParser {
 public:
  struct Limits {
    size_t max_line_bytes = 8192;    // request line; longer: 414
    size_t max_head_bytes = 16384;   // request line and fields; more: 431
    size_t max_fields = 100;         // more: 431
    size_t max_body_bytes = 1048576; // declared or de-chunked; more: 413 (before reading it)
  };

  enum class Outcome {
    kNeedMore,   // no complete request yet; everything seen so far is valid
    kComplete,   // Take() holds a request; its bytes are gone from the buffer
    kError,      // error_status()/error_message(); the connection must answer and close
  };

  explicit RequestParser(Limits limits) : limits_(limits) {}

  // Looks for one complete request at the front of `in` (bytes received and not yet consumed). On
  // kComplete the request's bytes are erased from `in`; on kNeedMore nothing is erased except the
  // empty lines a client may send between requests, and chunked bodies, whose decoded bytes move
  // into the parser as they arrive.
  Outcome Parse(std::string& in);

  ParsedRequest Take();

  // Between requests: no byte of the next one has arrived.
  bool idle() const { return phase_ == Phase::kHead && !started_; }
  // The head of the current request is complete; its body is still arriving.
  bool in_body() const { return phase_ != Phase::kHead; }
  // The current request sent `Expect: 100-continue` and its body has not begun.
  bool expects_continue() const { return in_body() && expect_continue_ && !body_begun_; }
  // Bytes held for the current request outside the connection's buffer (decoded chunks).
  size_t held_bytes() const { return request_.body.size(); }
  // Bytes of the body still expected, when Content-Length declared them (0 otherwise).
  size_t declared_body_bytes() const { return phase_ == Phase::kLengthBody ? content_length_ : 0; }

  int error_status() const { return error_status_; }
  const std::string& error_message() const { return error_message_; }

 private:
  enum class Phase { kHead, kLengthBody, kChunkSize, kChunkData, kChunkDataEnd, kTrailers };

  Outcome ParseHead(std::string& in);
  Outcome ParseChunked(std::string& in);
  Outcome Fail(int status, std::string message);
  Outcome Finish();

  Limits limits_;
  Phase phase_ = Phase::kHead;
  bool started_ = false;
  size_t empty_lines_ = 0;  // empty lines before the current request, however they arrived
  size_t scanned_ = 0;  // head bytes already searched for the blank line
  ParsedRequest request_;
  bool expect_continue_ = false;
  bool body_begun_ = false;
  size_t content_length_ = 0;
  size_t chunk_left_ = 0;
  size_t trailer_bytes_ = 0;
  int error_status_ = 0;
  std::string error_message_;
};

}  // namespace rendezvous::core
