#include "http_framing.hpp"

#include <algorithm>
#include <array>

namespace rendezvous::testing {
namespace {

// The longest chunk size line (size and extensions) read.
constexpr size_t kMaxChunkLine = 4096;
// Content-Length digits: 18 fit a size_t without overflow.
constexpr size_t kMaxLengthDigits = 18;
// Header strings a reader keeps for reuse.
constexpr size_t kMaxSpareFields = 64;

char LowerChar(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return LowerChar(x) == LowerChar(y); });
}

// Byte classes, by table: the framer runs per request in the benches' receiver and client.
constexpr unsigned char kTokenChar = 1;  // RFC 9110 tchar
constexpr unsigned char kBadChar = 2;    // a control character other than HTAB (a bare CR or LF too), DEL
constexpr std::array<unsigned char, 256> kCharClass = [] {
  std::array<unsigned char, 256> t{};
  for (int c = 0; c < 256; ++c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
        std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos) {
      t[c] = kTokenChar;
    } else if ((c < 0x20 && c != '\t') || c == 0x7f) {
      t[c] = kBadChar;
    }
  }
  return t;
}();

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (kCharClass[static_cast<unsigned char>(c)] != kTokenChar) return false;
  }
  return true;
}

bool HasBadControl(std::string_view s) {
  for (char c : s) {
    if (kCharClass[static_cast<unsigned char>(c)] == kBadChar) return true;
  }
  return false;
}

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "HTTP/d.d".
bool IsVersion(std::string_view s) {
  return s.size() == 8 && s.compare(0, 5, "HTTP/") == 0 && s[5] >= '0' && s[5] <= '9' && s[6] == '.' &&
         s[7] >= '0' && s[7] <= '9';
}

// The comma-separated elements of a list header, trimmed, empty ones left out.
std::vector<std::string_view> ListElements(std::string_view value) {
  std::vector<std::string_view> out;
  while (!value.empty()) {
    const size_t comma = value.find(',');
    const std::string_view element = TrimSpace(value.substr(0, comma));
    if (!element.empty()) out.push_back(element);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return out;
}

bool ParseStartLine(std::string_view line, HttpKind kind, HttpMessage& out, std::string& reason) {
  if (HasBadControl(line)) {
    reason = "a control character in the start line";
    return false;
  }
  const size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos) {
    reason = "a start line without a space";
    return false;
  }
  if (kind == HttpKind::kRequest) {
    const size_t sp2 = line.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
      reason = "a request line that is not \"METHOD target version\"";
      return false;
    }
    const std::string_view method = line.substr(0, sp1);
    const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    const std::string_view version = line.substr(sp2 + 1);
    if (!IsToken(method) || target.empty() || target.find('\t') != std::string_view::npos ||
        !IsVersion(version)) {
      reason = "a malformed request line";
      return false;
    }
    out.method.assign(method);
    out.target.assign(target);
    out.version.assign(version);
    return true;
  }
  const std::string_view version = line.substr(0, sp1);
  const std::string_view rest = line.substr(sp1 + 1);
  const std::string_view code = rest.substr(0, 3);
  if (!IsVersion(version) || code.size() != 3 ||
      !std::all_of(code.begin(), code.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      (rest.size() > 3 && rest[3] != ' ')) {
    reason = "a malformed status line";
    return false;
  }
  out.version.assign(version);
  out.status = (code[0] - '0') * 100 + (code[1] - '0') * 10 + (code[2] - '0');
  out.reason.assign(rest.size() > 3 ? rest.substr(4) : std::string_view());
  return true;
}

// The fields of header lines (`lines`, CRLF-separated) appended to `fields`, in strings taken
// from `spare` while it has some (their storage reused).
bool ParseFields(std::string_view lines, std::vector<std::pair<std::string, std::string>>& fields,
                 std::vector<std::pair<std::string, std::string>>* spare, std::string& reason) {
  while (!lines.empty()) {
    const size_t eol = lines.find("\r\n");
    const std::string_view line = lines.substr(0, eol);
    std::pair<std::string, std::string> field;
    if (spare != nullptr && !spare->empty()) {
      field = std::move(spare->back());
      spare->pop_back();
    }
    if (!line.empty() && (line.front() == ' ' || line.front() == '\t')) {
      reason = "a folded header line";
      return false;
    }
    if (!SplitHttpHeaderLine(line, field.first, field.second)) {
      reason = "a malformed header line";
      return false;
    }
    fields.push_back(std::move(field));
    if (eol == std::string_view::npos) break;
    lines.remove_prefix(eol + 2);
  }
  return true;
}

}  // namespace

std::string HttpMessage::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return "";
}

size_t HttpMessage::Count(std::string_view lower_name) const {
  return static_cast<size_t>(
      std::count_if(headers.begin(), headers.end(), [&](const auto& h) { return h.first == lower_name; }));
}

bool HttpMessage::ClosesConnection() const {
  bool close = version == "HTTP/1.0";
  for (const auto& [name, value] : headers) {
    if (name != "connection") continue;
    for (std::string_view option : ListElements(value)) {
      if (EqualsNoCase(option, "close")) return true;
      if (EqualsNoCase(option, "keep-alive")) close = false;
    }
  }
  return close;
}

bool SplitHttpHeaderLine(std::string_view line, std::string& lower_name, std::string& value) {
  if (line.size() >= 2 && line.compare(line.size() - 2, 2, "\r\n") == 0) line.remove_suffix(2);
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || !IsToken(line.substr(0, colon))) return false;
  const std::string_view v = TrimSpace(line.substr(colon + 1));
  if (HasBadControl(v)) return false;
  lower_name.resize(colon);
  std::transform(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(colon), lower_name.begin(),
                 LowerChar);
  value.assign(v);
  return true;
}

namespace {

bool ParseHead(std::string_view head, HttpKind kind, HttpMessage& out,
               std::vector<std::pair<std::string, std::string>>* spare, std::string& reason) {
  out.head.assign(head);
  const size_t eol = head.find("\r\n");
  if (!ParseStartLine(head.substr(0, eol), kind, out, reason)) return false;
  return eol == std::string_view::npos || ParseFields(head.substr(eol + 2), out.headers, spare, reason);
}

}  // namespace

bool ParseHttpHead(std::string_view head, HttpKind kind, HttpMessage& out, std::string& reason) {
  return ParseHead(head, kind, out, nullptr, reason);
}

HttpReader::HttpReader(HttpKind kind, HttpLimits limits) : kind_(kind), limits_(limits) {}

void HttpReader::Reset() {
  message_.method.clear();
  message_.target.clear();
  message_.status = 0;
  message_.reason.clear();
  message_.version.clear();
  // The header strings are kept for the next message's (no allocation a message once warm).
  for (auto& field : message_.headers) {
    if (spare_.size() < kMaxSpareFields) spare_.push_back(std::move(field));
  }
  message_.headers.clear();
  message_.trailers.clear();
  message_.head.clear();
  message_.body.clear();
  head_read_ = false;
  scanned_ = 0;
  remaining_ = 0;
  trailer_bytes_ = 0;
  state_ = State::kStart;
}

HttpMessage HttpReader::Take() {
  HttpMessage out = std::move(message_);
  Reset();
  return out;
}

HttpReader::Result HttpReader::Fail(HttpFramingError error, std::string reason) {
  state_ = State::kFailed;
  error_ = error;
  reason_ = std::move(reason);
  return Result::kError;
}

bool HttpReader::FrameBody() {
  std::string_view length;
  bool chunked = false, other_coding = false, has_te = false;
  for (const auto& [name, value] : message_.headers) {
    if (name == "content-length") {
      if (value.empty() || value.size() > kMaxLengthDigits ||
          !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        Fail(HttpFramingError::kMalformed, "Content-Length \"" + value + "\" is not a length");
        return false;
      }
      if (!length.empty() && length != value) {
        Fail(HttpFramingError::kMalformed, "two different Content-Length values");
        return false;
      }
      length = value;
    } else if (name == "transfer-encoding") {
      has_te = true;
      const auto codings = ListElements(value);
      // Only a last coding of chunked frames the body; chunked before another is malformed.
      chunked = !codings.empty() && EqualsNoCase(codings.back(), "chunked");
      other_coding = codings.size() > (chunked ? 1u : 0u);
    }
  }
  if (has_te && !length.empty()) {
    Fail(HttpFramingError::kMalformed, "both Content-Length and Transfer-Encoding");
    return false;
  }
  const bool request = kind_ == HttpKind::kRequest;
  if (!request &&
      (answer_to_head_ || message_.status / 100 == 1 || message_.status == 204 || message_.status == 304)) {
    state_ = State::kComplete;
    return true;
  }
  if (has_te) {
    if (request && (other_coding || !chunked)) {
      Fail(HttpFramingError::kUnsupported, "a Transfer-Encoding other than chunked");
      return false;
    }
    state_ = chunked ? State::kChunkSize : State::kUntilClose;
    return true;
  }
  if (!length.empty()) {
    remaining_ = 0;
    for (char c : length) remaining_ = remaining_ * 10 + static_cast<size_t>(c - '0');
    if (remaining_ > limits_.max_body) {
      Fail(HttpFramingError::kBodyTooLarge,
           "a body of " + std::string(length) + " bytes, over " + std::to_string(limits_.max_body));
      return false;
    }
    state_ = remaining_ == 0 ? State::kComplete : State::kLength;
    return true;
  }
  state_ = request ? State::kComplete : State::kUntilClose;
  return true;
}

HttpReader::Result HttpReader::Read(std::string& in) {
  if (state_ == State::kFailed) return Result::kError;
  if (state_ == State::kComplete) Reset();
  size_t pos = 0;
  auto done = [&](Result r) {
    in.erase(0, pos);
    return r;
  };
  for (;;) {
    switch (state_) {
      case State::kStart:
      case State::kHead: {
        // A request may follow empty lines (RFC 9112 2.2).
        while (kind_ == HttpKind::kRequest && state_ == State::kStart && in.compare(pos, 2, "\r\n") == 0)
          pos += 2;
        if (pos > 0) {
          in.erase(0, pos);
          pos = 0;
        }
        // A lone CR may be the first half of such an empty line.
        if (in.empty() || (kind_ == HttpKind::kRequest && state_ == State::kStart && in == "\r"))
          return Result::kNeedMore;
        state_ = State::kHead;
        const size_t end = in.find("\r\n\r\n", scanned_ > 3 ? scanned_ - 3 : 0);
        if (end == std::string::npos) {
          scanned_ = in.size();
          if (in.size() > limits_.max_head)
            return Fail(HttpFramingError::kHeadTooLarge,
                        "a head over " + std::to_string(limits_.max_head) + " bytes");
          return Result::kNeedMore;
        }
        if (end + 4 > limits_.max_head)
          return Fail(HttpFramingError::kHeadTooLarge,
                      "a head over " + std::to_string(limits_.max_head) + " bytes");
        std::string why;
        if (!ParseHead(std::string_view(in).substr(0, end), kind_, message_, &spare_, why))
          return Fail(HttpFramingError::kMalformed, why);
        head_read_ = true;
        pos = end + 4;
        const bool framed = FrameBody();
        if (message_.status / 100 != 1) answer_to_head_ = false;  // an interim answer is not the answer
        if (!framed) return Result::kError;
        break;
      }
      case State::kLength:
      case State::kChunkData: {
        const size_t take = std::min(remaining_, in.size() - pos);
        message_.body.append(in, pos, take);
        pos += take;
        remaining_ -= take;
        if (remaining_ > 0) return done(Result::kNeedMore);
        state_ = state_ == State::kLength ? State::kComplete : State::kChunkEnd;
        break;
      }
      case State::kChunkSize: {
        const size_t eol = in.find("\r\n", pos);
        if (eol == std::string::npos) {
          if (in.size() - pos > kMaxChunkLine)
            return Fail(HttpFramingError::kMalformed, "a chunk size line too long");
          return done(Result::kNeedMore);
        }
        const std::string_view line = std::string_view(in).substr(pos, eol - pos);
        size_t digits = 0, size = 0;
        for (; digits < line.size(); ++digits) {
          const char c = LowerChar(line[digits]);
          const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
          if (v < 0) break;
          if (size > (limits_.max_body - message_.body.size()) / 16)
            return Fail(HttpFramingError::kBodyTooLarge,
                        "a chunked body over " + std::to_string(limits_.max_body));
          size = size * 16 + static_cast<size_t>(v);
        }
        const std::string_view rest = TrimSpace(line.substr(digits));
        if (digits == 0 || (!rest.empty() && rest.front() != ';') || HasBadControl(rest))
          return Fail(HttpFramingError::kMalformed, "a malformed chunk size line");
        if (size > limits_.max_body - message_.body.size())
          return Fail(HttpFramingError::kBodyTooLarge,
                      "a chunked body over " + std::to_string(limits_.max_body));
        pos = eol + 2;
        remaining_ = size;
        state_ = size == 0 ? State::kTrailer : State::kChunkData;
        break;
      }
      case State::kChunkEnd: {
        if (in.size() - pos < 2) {
          if (in.size() > pos && in[pos] != '\r')
            return Fail(HttpFramingError::kMalformed, "a chunk longer than its size");
          return done(Result::kNeedMore);
        }
        if (in.compare(pos, 2, "\r\n") != 0)
          return Fail(HttpFramingError::kMalformed, "a chunk longer than its size");
        pos += 2;
        state_ = State::kChunkSize;
        break;
      }
      case State::kTrailer: {
        const size_t eol = in.find("\r\n", pos);
        if (eol == std::string::npos) {
          if (trailer_bytes_ + in.size() - pos > limits_.max_head)
            return Fail(HttpFramingError::kHeadTooLarge,
                        "a trailer over " + std::to_string(limits_.max_head) + " bytes");
          return done(Result::kNeedMore);
        }
        trailer_bytes_ += eol + 2 - pos;
        if (trailer_bytes_ > limits_.max_head)
          return Fail(HttpFramingError::kHeadTooLarge,
                      "a trailer over " + std::to_string(limits_.max_head) + " bytes");
        if (eol == pos) {
          pos += 2;
          state_ = State::kComplete;
          break;
        }
        std::string why;
        if (!ParseFields(std::string_view(in).substr(pos, eol - pos), message_.trailers, nullptr, why))
          return Fail(HttpFramingError::kMalformed, why + " in the trailer");
        pos = eol + 2;
        break;
      }
      case State::kUntilClose: {
        if (in.size() - pos > limits_.max_body - message_.body.size())
          return Fail(HttpFramingError::kBodyTooLarge, "a body over " + std::to_string(limits_.max_body));
        message_.body.append(in, pos);
        pos = in.size();
        return done(Result::kNeedMore);
      }
      case State::kComplete:
        return done(Result::kMessage);
      case State::kFailed:
        return Result::kError;
    }
  }
}

HttpReader::Result HttpReader::End() {
  if (state_ == State::kUntilClose) {
    state_ = State::kComplete;
    return Result::kMessage;
  }
  if (state_ == State::kFailed) return Result::kError;
  return Fail(HttpFramingError::kTruncated,
              Idle() ? "the stream ended before a message" : "the stream ended inside a message");
}

std::string_view HttpReason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 413:
      return "Payload Too Large";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Status";
  }
}

namespace {

// Whether one of the header lines is of the header `lower_name`.
bool Names(const std::vector<std::string>& header_lines, std::string_view lower_name) {
  return std::any_of(header_lines.begin(), header_lines.end(), [&](const std::string& line) {
    return line.size() > lower_name.size() && line[lower_name.size()] == ':' &&
           EqualsNoCase(std::string_view(line).substr(0, lower_name.size()), lower_name);
  });
}

bool FramedByLines(const std::vector<std::string>& header_lines) {
  return Names(header_lines, "content-length") || Names(header_lines, "transfer-encoding");
}

}  // namespace

std::string HttpRequestText(std::string_view method, std::string_view target,
                            const std::vector<std::string>& header_lines, std::string_view body) {
  std::string out;
  out.reserve(128 + body.size());
  AppendHttpRequest(out, method, target, header_lines, body);
  return out;
}

void AppendHttpRequest(std::string& out, std::string_view method, std::string_view target,
                       const std::vector<std::string>& header_lines, std::string_view body) {
  out.append(method).append(" ").append(target).append(" HTTP/1.1\r\n");
  if (!Names(header_lines, "host")) out += "Host: 127.0.0.1\r\n";
  for (const std::string& line : header_lines) out.append(line).append("\r\n");
  if ((!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") &&
      !FramedByLines(header_lines))
    out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  out.append("\r\n").append(body);
}

std::string HttpResponseText(int status, const std::vector<std::string>& header_lines,
                             std::string_view body) {
  std::string out;
  out.reserve(128 + body.size());
  out.append("HTTP/1.1 ")
      .append(std::to_string(status))
      .append(" ")
      .append(HttpReason(status))
      .append("\r\n");
  for (const std::string& line : header_lines) out.append(line).append("\r\n");
  if (status / 100 != 1 && status != 204 && status != 304 && !FramedByLines(header_lines))
    out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  out.append("\r\n").append(body);
  return out;
}

std::string HttpChunkedBody(const std::vector<std::string>& chunks) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const std::string& chunk : chunks) {
    if (chunk.empty()) continue;  // an empty chunk would be the last
    std::string size;
    for (size_t n = chunk.size(); n > 0; n /= 16) size.insert(size.begin(), kHex[n % 16]);
    out.append(size).append("\r\n").append(chunk).append("\r\n");
  }
  out += "0\r\n\r\n";
  return out;
}

}  // namespace rendezvous::testing
