#include "http/request_parser.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace rendezvous::core {
namespace {

constexpr size_t kMaxEmptyLines = 8;
constexpr size_t kMaxChunkLineBytes = 1024;
constexpr size_t kMaxLengthDigits = 15;

bool IsTchar(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= '0' && u <= '9') return true;
  if ((u | 0x20) >= 'a' && (u | 0x20) <= 'z') return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), IsTchar); }

// Field values: visible ASCII, space, tab and obs-text; never a control character.
bool IsFieldValue(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    unsigned char u = static_cast<unsigned char>(c);
    return u == '\t' || (u >= 0x20 && u != 0x7F);
  });
}

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Splits a comma-separated field value into trimmed, lower-cased, non-empty elements.
std::vector<std::string> ListElements(std::string_view value) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string_view::npos) comma = value.size();
    std::string_view element = TrimOws(value.substr(start, comma - start));
    if (!element.empty()) out.push_back(Lower(element));
    start = comma + 1;
  }
  return out;
}

}  // namespace

RequestParser::Outcome RequestParser::Fail(int status, std::string message) {
  error_status_ = status;
  error_message_ = std::move(message);
  return Outcome::kError;
}

RequestParser::Outcome RequestParser::Finish() {
  phase_ = Phase::kHead;
  started_ = false;
  empty_lines_ = 0;
  scanned_ = 0;
  expect_continue_ = false;
  body_begun_ = false;
  content_length_ = 0;
  chunk_left_ = 0;
  trailer_bytes_ = 0;
  return Outcome::kComplete;
}

ParsedRequest RequestParser::Take() {
  ParsedRequest out = std::move(request_);
  request_ = ParsedRequest{};
  return out;
}

RequestParser::Outcome RequestParser::Parse(std::string& in) {
  if (error_status_ != 0) return Outcome::kError;
  if (phase_ == Phase::kHead) {
    Outcome head = ParseHead(in);
    if (head != Outcome::kComplete) return head;
    if (phase_ == Phase::kHead) return Finish();
  }
  if (phase_ == Phase::kLengthBody) {
    if (!in.empty()) body_begun_ = true;
    if (in.size() < content_length_) return Outcome::kNeedMore;
    request_.body.assign(in, 0, content_length_);
    in.erase(0, content_length_);
    return Finish();
  }
  return ParseChunked(in);
}

// kComplete here means the head is complete; phase_ says whether a body follows.
RequestParser::Outcome RequestParser::ParseHead(std::string& in) {
  if (!started_) {
    size_t pos = 0;
    while (in.size() - pos >= 2 && in[pos] == '\r' && in[pos + 1] == '\n') {
      pos += 2;
      if (++empty_lines_ > kMaxEmptyLines) return Fail(400, "malformed request: empty lines instead of a request line");
    }
    if (pos) in.erase(0, pos);
    if (in.empty() || (in.size() == 1 && in[0] == '\r')) return Outcome::kNeedMore;
    started_ = true;
  }

  // The same bytes get the same answer however they arrive: a bare LF within the line's limit is
  // found before the limit is, and a '\r' at the end may begin the line's CRLF.
  const size_t lf = in.find('\n');
  if (lf != std::string::npos && lf <= limits_.max_line_bytes && (lf == 0 || in[lf - 1] != '\r'))
    return Fail(400, "malformed request line: lines must end in CRLF");
  size_t line_end = lf == std::string::npos || lf == 0 || in[lf - 1] != '\r' ? std::string::npos : lf - 1;
  if (line_end == std::string::npos) {
    if (in.size() - (in.back() == '\r' ? 1 : 0) > limits_.max_line_bytes) return Fail(414, "request line too long");
    return Outcome::kNeedMore;
  }
  if (line_end > limits_.max_line_bytes) return Fail(414, "request line too long");

  // The request line is checked as soon as it is complete, so a garbage line is refused at once.
  std::string_view line(in.data(), line_end);
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
    return Fail(400, "malformed request line: expected METHOD target HTTP/1.1");
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(method)) return Fail(400, "malformed request line: bad method");
  if (target.empty() || !std::all_of(target.begin(), target.end(), [](char c) {
        unsigned char u = static_cast<unsigned char>(c);
        return u > 0x20 && u < 0x7F;
      }))
    return Fail(400, "malformed request line: bad request target");
  if (version == "HTTP/1.1") request_.minor_version = 1;
  else if (version == "HTTP/1.0") request_.minor_version = 0;
  else if (version.size() == 8 && version.substr(0, 5) == "HTTP/" && std::isdigit(static_cast<unsigned char>(version[5])) &&
           version[6] == '.' && std::isdigit(static_cast<unsigned char>(version[7])))
    return Fail(505, "HTTP version not supported: only HTTP/1.1 and HTTP/1.0");
  else return Fail(400, "malformed request line: bad HTTP version");

  size_t from = scanned_ > 3 ? scanned_ - 3 : 0;
  size_t head_end = in.find("\r\n\r\n", std::max(from, line_end));
  if (head_end == std::string::npos) {
    if (in.size() > limits_.max_head_bytes) return Fail(431, "request header fields too large");
    scanned_ = in.size();
    return Outcome::kNeedMore;
  }
  if (head_end + 4 > limits_.max_head_bytes) return Fail(431, "request header fields too large");

  request_.method.assign(method);
  request_.target.assign(target);
  request_.headers.clear();

  size_t content_lengths = 0;
  std::string content_length;
  std::string transfer_encoding;
  size_t hosts = 0;
  std::vector<std::string> connection;
  std::string expect;

  size_t pos = line_end + 2;
  while (pos < head_end + 2) {
    size_t end = in.find("\r\n", pos);
    std::string_view field(in.data() + pos, end - pos);
    pos = end + 2;
    if (field.front() == ' ' || field.front() == '\t') return Fail(400, "malformed header field: folded line");
    size_t colon = field.find(':');
    if (colon == std::string_view::npos || colon == 0) return Fail(400, "malformed header field: no name");
    std::string_view name = field.substr(0, colon);
    if (!IsToken(name)) return Fail(400, "malformed header field name");
    std::string_view value = TrimOws(field.substr(colon + 1));
    if (!IsFieldValue(value)) return Fail(400, "malformed header field value");
    if (request_.headers.size() >= limits_.max_fields) return Fail(431, "too many header fields");
    std::string lower = Lower(name);
    if (lower == "content-length") {
      for (const auto& element : ListElements(value)) {
        if (element.size() > kMaxLengthDigits || !std::all_of(element.begin(), element.end(), [](char c) { return c >= '0' && c <= '9'; }))
          return Fail(400, "malformed Content-Length");
        if (!content_length.empty() && element != content_length) return Fail(400, "conflicting Content-Length values");
        content_length = element;
      }
      if (content_length.empty()) return Fail(400, "malformed Content-Length");
      ++content_lengths;
    } else if (lower == "transfer-encoding") {
      transfer_encoding += (transfer_encoding.empty() ? "" : ",") + std::string(value);
    } else if (lower == "host") {
      ++hosts;
    } else if (lower == "connection") {
      for (auto& element : ListElements(value)) connection.push_back(std::move(element));
    } else if (lower == "expect") {
      expect = Lower(value);
    }
    request_.headers.emplace_back(std::move(lower), std::string(value));
  }

  bool http11 = request_.minor_version == 1;
  if (hosts > 1 || (http11 && hosts == 0)) return Fail(400, "a request must carry exactly one Host field");
  auto has = [&connection](const char* token) {
    return std::find(connection.begin(), connection.end(), token) != connection.end();
  };
  request_.keep_alive = http11 ? !has("close") : has("keep-alive") && !has("close");

  bool chunked = false;
  if (!transfer_encoding.empty()) {
    if (!http11) return Fail(400, "Transfer-Encoding is not allowed in HTTP/1.0");
    if (content_lengths) return Fail(400, "a request must not carry both Content-Length and Transfer-Encoding");
    auto codings = ListElements(transfer_encoding);
    if (codings.size() != 1 || codings[0] != "chunked") return Fail(501, "only the chunked transfer coding is supported");
    chunked = true;
  }
  if (!expect.empty() && expect != "100-continue") return Fail(417, "only the expectation 100-continue is supported");

  in.erase(0, head_end + 4);
  scanned_ = 0;
  if (chunked) {
    expect_continue_ = !expect.empty();
    phase_ = Phase::kChunkSize;
    return Outcome::kComplete;
  }
  size_t length = content_length.empty() ? 0 : std::stoull(content_length);
  if (length > limits_.max_body_bytes)
    return Fail(413, "request body exceeds " + std::to_string(limits_.max_body_bytes) + " bytes");
  if (length > 0) {
    expect_continue_ = !expect.empty();
    content_length_ = length;
    phase_ = Phase::kLengthBody;
  }
  return Outcome::kComplete;
}

RequestParser::Outcome RequestParser::ParseChunked(std::string& in) {
  while (true) {
    switch (phase_) {
      case Phase::kChunkSize: {
        size_t end = in.find("\r\n");
        if (end == std::string::npos) {
          if (in.size() > kMaxChunkLineBytes) return Fail(400, "malformed chunk size line");
          return Outcome::kNeedMore;
        }
        if (end > kMaxChunkLineBytes) return Fail(400, "malformed chunk size line");
        body_begun_ = true;
        std::string_view line(in.data(), end);
        size_t digits = 0;
        size_t size = 0;
        while (digits < line.size() && std::isxdigit(static_cast<unsigned char>(line[digits]))) {
          if (digits == kMaxLengthDigits) return Fail(400, "malformed chunk size");
          char c = line[digits];
          size = size * 16 + static_cast<size_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
          ++digits;
        }
        std::string_view rest = TrimOws(line.substr(digits));
        if (digits == 0 || (!rest.empty() && rest.front() != ';') || !IsFieldValue(rest))
          return Fail(400, "malformed chunk size");
        in.erase(0, end + 2);
        if (size == 0) {
          phase_ = Phase::kTrailers;
        } else {
          if (size > limits_.max_body_bytes - std::min(limits_.max_body_bytes, request_.body.size()))
            return Fail(413, "request body exceeds " + std::to_string(limits_.max_body_bytes) + " bytes");
          chunk_left_ = size;
          phase_ = Phase::kChunkData;
        }
        break;
      }
      case Phase::kChunkData: {
        size_t take = std::min(chunk_left_, in.size());
        request_.body.append(in, 0, take);
        in.erase(0, take);
        chunk_left_ -= take;
        if (chunk_left_ > 0) return Outcome::kNeedMore;
        phase_ = Phase::kChunkDataEnd;
        break;
      }
      case Phase::kChunkDataEnd: {
        if (in.size() < 2) {
          if (!in.empty() && in[0] != '\r') return Fail(400, "malformed chunk: data longer than its size");
          return Outcome::kNeedMore;
        }
        if (in[0] != '\r' || in[1] != '\n') return Fail(400, "malformed chunk: data longer than its size");
        in.erase(0, 2);
        phase_ = Phase::kChunkSize;
        break;
      }
      case Phase::kTrailers: {
        size_t end = in.find("\r\n");
        if (end == std::string::npos) {
          if (trailer_bytes_ + in.size() > limits_.max_head_bytes) return Fail(431, "trailer fields too large");
          return Outcome::kNeedMore;
        }
        trailer_bytes_ += end + 2;
        if (trailer_bytes_ > limits_.max_head_bytes) return Fail(431, "trailer fields too large");
        std::string_view line(in.data(), end);
        if (!IsFieldValue(line)) return Fail(400, "malformed trailer field");
        in.erase(0, end + 2);
        // Trailer fields are read and dropped: nothing here acts on them.
        if (line.empty()) return Finish();
        break;
      }
      case Phase::kHead:
      case Phase::kLengthBody:
        return Outcome::kNeedMore;
    }
  }
}

}  // namespace rendezvous::core
