// The outbound client's reader of one HTTP/1.1 answer from the bytes of a connection: the status
// line and headers (interim 1xx answers skipped, at most kMaxInterimAnswers of them), then a body
// framed by Content-Length, chunks, or the connection's end. The bytes come from receivers the
// server does not trust, so everything is bounded: the head (and the trailers) at 64 KiB, a chunk's
// size line at 1 KiB and its size at 15 hex digits, the body at the request's max_response_bytes,
// of which the first keep_response_bytes are kept. An answer with both Content-Length and
// Transfer-Encoding is refused. Bytes after the answer's end mark the connection as not reusable.
// Pure: no I/O, no clock (its fuzz target: tests/fuzz/response_reader_fuzz.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "rendezvous/outbound.hpp"

namespace rendezvous::net {

class ResponseReader {
 public:
  static constexpr size_t kMaxHead = 64 * 1024;  // an answer's status line and headers, or its trailers
  static constexpr size_t kMaxChunkLine = 1024;
  static constexpr size_t kKeptValueLimit = 1024;
  static constexpr int kMaxInterimAnswers = 16;

  enum class Step {
    kMore,      // the answer has not ended: feed more
    kDone,      // the answer ended (response filled)
    kTooLarge,  // the body is longer than max_response_bytes (status and what was kept stay)
    kBad,       // not a valid answer: why()
  };

  // `request` (its method and limits) and `response` outlive the reader; the reader fills
  // response's status, content_type, kept headers and body.
  ResponseReader(const HttpRequest& request, HttpResponse& response)
      : request_(request), response_(response) {}

  // The next bytes of the connection. After kDone, kTooLarge or kBad the reader takes no more.
  Step Feed(const char* p, size_t n);
  // The peer closed the connection: kDone when that ends the answer, kBad otherwise.
  Step End();

  // Some byte of an answer arrived.
  bool started() const { return started_; }
  // The answer ended on its framing, nothing followed it and neither side asked to close: the
  // connection may carry another request.
  bool reusable() const { return state_ == State::kDone && !close_ && !extra_; }
  const std::string& why() const { return why_; }

 private:
  enum class State { kHead, kBody, kUntilClose, kChunkSize, kChunkData, kChunkEnd, kTrailers, kDone };

  Step Bad(std::string why);
  Step Body(const char* p, size_t n);
  Step Head(const char* p, size_t n, size_t& used);
  Step ParseHead();
  void Keep(std::string_view name, std::string_view value);
  Step Line(const char* p, size_t n, size_t& used);

  const HttpRequest& request_;
  HttpResponse& response_;
  State state_ = State::kHead;
  std::string head_;
  std::string line_;
  uint64_t remaining_ = 0;
  uint64_t received_ = 0;
  size_t trailers_ = 0;
  int interim_ = 0;
  bool started_ = false;
  bool close_ = false;
  bool extra_ = false;
  bool over_ = false;  // kTooLarge or kBad was returned
  std::string why_;
};

}  // namespace rendezvous::net
