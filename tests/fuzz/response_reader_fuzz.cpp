// libFuzzer target: the outbound client's reader of an answer (core/net/response_reader.hpp), fed
// bytes a hostile receiver chooses. The same bytes must read the same way however they arrive:
// all at once, or in pieces of 1..8 bytes (the first input byte picks the size, and whether the
// connection then closes) — the same step, status, body, kept headers and reason. Whatever the
// bytes, the kept body stays within keep_response_bytes, a finished answer has a final status,
// and only a finished answer may leave the connection reusable.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "response_reader.hpp"

namespace {

using rendezvous::net::HttpRequest;
using rendezvous::net::HttpResponse;
using rendezvous::net::ResponseReader;

std::string Read(std::string_view data, size_t piece, bool close, bool head_request) {
  HttpRequest request;
  request.method = head_request ? "HEAD" : "GET";
  request.max_response_bytes = 4096;
  request.keep_response_bytes = 100;
  request.keep_headers = {"etag", "retry-after"};
  HttpResponse response;
  ResponseReader reader(request, response);
  ResponseReader::Step step = ResponseReader::Step::kMore;
  // Every byte is fed, also after the answer's end (as a connection would receive it later).
  for (size_t at = 0; at < data.size(); at += piece) {
    const std::string_view part = data.substr(at, piece);
    step = reader.Feed(part.data(), part.size());
  }
  if (step == ResponseReader::Step::kMore && close) step = reader.End();
  if (response.body.size() > request.keep_response_bytes) __builtin_trap();
  if (reader.reusable() && step != ResponseReader::Step::kDone) __builtin_trap();
  if (step == ResponseReader::Step::kDone && (response.status < 200 || response.status > 999))
    __builtin_trap();
  if (step == ResponseReader::Step::kBad && reader.why().empty()) __builtin_trap();
  if (response.headers.size() > request.keep_headers.size()) __builtin_trap();
  std::string out = std::to_string(static_cast<int>(step)) + " " + std::to_string(response.status) + " " +
                    response.content_type + "|" + response.body + "|" + reader.why();
  for (const auto& [name, value] : response.headers) out += "|" + name + ":" + value;
  // Bytes after the answer spoil reuse whether they came in the same piece or later.
  if (step == ResponseReader::Step::kDone) out += reader.reusable() ? " reusable" : " spoiled";
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t piece = 1 + (data[0] & 7);
  const bool close = (data[0] & 8) != 0;
  const bool head = (data[0] & 16) != 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string whole = Read(bytes, bytes.size() + 1, close, head);
  const std::string pieces = Read(bytes, piece, close, head);
  if (whole != pieces) __builtin_trap();
  return 0;
}
