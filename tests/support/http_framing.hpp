// The one HTTP/1.1 framer of tests/ and bench/: it reads requests or answers off a byte stream,
// one at a time (the head, then a body framed by Content-Length, by chunks, or by the end of the
// stream), and writes them. The peers the tests run (LoopbackHttpServer, TlsPeer, the scripted
// and hostile peers), the raw client (raw_http.hpp) and the benches' receiver and minimal client
// all frame with it. It is written apart from the product's own parsers (core/http, core/net) so
// that a test sees the wire as another party would.
//
// Strict and bounded, since what it reads may be the product misbehaving: a head over
// HttpLimits::max_head, a body over max_body, a malformed start line or header line (no colon, a
// space before the colon, a folded line, a control character, a bare CR or LF), a Content-Length
// that is not digits or differs from another one, Content-Length beside Transfer-Encoding, a bad
// chunk size line or a chunk not ended by CRLF: each ends the stream with an error and a reason,
// nothing is guessed.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rendezvous::testing {

// One request or answer as read.
struct HttpMessage {
  std::string method;                                         // a request's
  std::string target;                                         // a request's: the path and query as sent
  int status = 0;                                             // an answer's
  std::string reason;                                         // an answer's
  std::string version;                                        // "HTTP/1.1"
  std::vector<std::pair<std::string, std::string>> headers;   // in order; names lower-cased, values trimmed
  std::vector<std::pair<std::string, std::string>> trailers;  // a chunked body's trailer fields, likewise
  std::string head;  // as it came: the start line and the header lines, without the blank line
  std::string body;  // the body itself (the chunks joined)

  // The first value of the header ("" when absent).
  std::string Header(std::string_view lower_name) const;
  size_t Count(std::string_view lower_name) const;
  // The connection ends after this message: `Connection: close`, or HTTP/1.0 without keep-alive.
  bool ClosesConnection() const;
};

enum class HttpKind { kRequest, kResponse };

// Why a stream could not be framed.
enum class HttpFramingError {
  kNone,
  kMalformed,     // the start line, a header line, a Content-Length or a chunk is not HTTP/1.1
  kHeadTooLarge,  // the head (or a chunked body's trailer) is over max_head
  kBodyTooLarge,  // the body is over max_body
  kUnsupported,   // a request's Transfer-Encoding other than chunked
  kTruncated,     // the stream ended before a message did
};

struct HttpLimits {
  size_t max_head = 64 * 1024;
  size_t max_body = 8 * 1024 * 1024;
};

// Reads the messages of one stream (one connection, one direction). Not thread-safe.
class HttpReader {
 public:
  enum class Result {
    kNeedMore,  // `in` ran out first: call again once more bytes are appended
    kMessage,   // a whole message was read: message() / Take()
    kError,     // the bytes cannot be framed (error(), reason()): the stream is done
  };

  explicit HttpReader(HttpKind kind, HttpLimits limits = {});

  // The answer being read is to a HEAD request: no body, whatever its head says. For that answer
  // only (call it before the answer's bytes are read).
  void AnswerToHead() { answer_to_head_ = true; }

  // `in` holds the stream's bytes not read yet: the caller only appends to it. Read takes one
  // message from the front of `in` as far as `in` goes, and removes what it took.
  Result Read(std::string& in);
  // The stream ended: kMessage when that ends the message being read (an answer whose body runs
  // to the close), else kError (kTruncated; Idle() tells a close between messages apart).
  Result End();

  // The head of the message being read is in (message() has it, not the body yet): the moment a
  // server answers `Expect: 100-continue`. It stays so when the body then fails.
  bool HeadRead() const { return head_read_; }
  // Nothing of a next message has been read.
  bool Idle() const { return state_ == State::kStart || state_ == State::kComplete; }
  const HttpMessage& message() const { return message_; }
  // The message read; the reader then waits for the next one.
  HttpMessage Take();
  HttpFramingError error() const { return error_; }
  const std::string& reason() const { return reason_; }

 private:
  enum class State {
    kStart,
    kHead,
    kLength,
    kChunkSize,
    kChunkData,
    kChunkEnd,
    kTrailer,
    kUntilClose,
    kComplete,
    kFailed
  };

  Result Fail(HttpFramingError error, std::string reason);
  // Sets the body's framing from the head just parsed; false (and failed) when it cannot.
  bool FrameBody();
  void Reset();

  HttpKind kind_;
  HttpLimits limits_;
  State state_ = State::kStart;
  bool answer_to_head_ = false;
  bool head_read_ = false;
  size_t scanned_ = 0;    // bytes of `in` searched for the head's end already
  size_t remaining_ = 0;  // of the Content-Length body or of the chunk
  size_t trailer_bytes_ = 0;
  HttpMessage message_;
  std::vector<std::pair<std::string, std::string>> spare_;  // header strings of earlier messages
  HttpFramingError error_ = HttpFramingError::kNone;
  std::string reason_;
};

// Parses a head (the start line and header lines, without the blank line) into `out`'s start
// line, headers and head; false with `reason` set when it is malformed.
bool ParseHttpHead(std::string_view head, HttpKind kind, HttpMessage& out, std::string& reason);
// One header line ("Name: value", a CRLF at its end allowed): the name lower-cased, the value
// trimmed. False when it is not a header line.
bool SplitHttpHeaderLine(std::string_view line, std::string& lower_name, std::string& value);

// A request: "METHOD target HTTP/1.1", `Host: 127.0.0.1` unless a Host line is given, the header
// lines as given ("Name: value"), Content-Length when there is a body or the method sends one
// (POST, PUT, PATCH) and no Content-Length or Transfer-Encoding line is given, then the body as
// it is (chunked by the caller when it says so: HttpChunkedBody).
std::string HttpRequestText(std::string_view method, std::string_view target,
                            const std::vector<std::string>& header_lines = {}, std::string_view body = {});
// The same request appended to `out` (a buffer kept from request to request).
void AppendHttpRequest(std::string& out, std::string_view method, std::string_view target,
                       const std::vector<std::string>& header_lines, std::string_view body);
// An answer: the status line with its usual reason, the header lines as given, Content-Length
// (not for 1xx, 204 and 304, nor beside a given Content-Length or Transfer-Encoding line), then
// the body as it is.
std::string HttpResponseText(int status, const std::vector<std::string>& header_lines = {},
                             std::string_view body = {});
// A chunked body of `chunks` (each non-empty), its last chunk and no trailer.
std::string HttpChunkedBody(const std::vector<std::string>& chunks);
// The usual reason phrase of a status ("Status" for one not listed).
std::string_view HttpReason(int status);

}  // namespace rendezvous::testing
