#include "response_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <string_view>

#include "rendezvous/text.hpp"

namespace rendezvous::net {
namespace {

bool HasToken(std::string_view list, std::string_view token) {
  size_t at = 0;
  while (at <= list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    if (text::EqualsIgnoreCase(text::Trim(list.substr(at, comma - at)), token)) return true;
    at = comma + 1;
  }
  return false;
}

}  // namespace

ResponseReader::Step ResponseReader::Feed(const char* p, size_t n) {
  if (over_) return why_.empty() ? Step::kTooLarge : Step::kBad;
  if (n > 0) started_ = true;
  while (n > 0) {
    size_t used = 0;
    Step step = Step::kMore;
    switch (state_) {
      case State::kHead:
        step = Head(p, n, used);
        break;
      case State::kBody:
      case State::kChunkData:
        used = static_cast<size_t>(std::min<uint64_t>(n, remaining_));
        step = Body(p, used);
        remaining_ -= used;
        if (step == Step::kMore && remaining_ == 0)
          state_ = state_ == State::kBody ? State::kDone : State::kChunkEnd;
        break;
      case State::kUntilClose:
        used = n;
        step = Body(p, n);
        break;
      case State::kChunkSize:
      case State::kChunkEnd:
      case State::kTrailers:
        step = Line(p, n, used);
        break;
      case State::kDone:
        extra_ = true;  // bytes after the answer: the connection is not reused
        return Step::kDone;
    }
    if (step != Step::kMore) {
      over_ = true;
      return step;
    }
    if (state_ == State::kDone) {
      if (used < n) extra_ = true;
      return Step::kDone;
    }
    p += used;
    n -= used;
  }
  return state_ == State::kDone ? Step::kDone : Step::kMore;
}

ResponseReader::Step ResponseReader::End() {
  if (over_) return why_.empty() ? Step::kTooLarge : Step::kBad;
  if (state_ == State::kUntilClose || state_ == State::kDone) {
    state_ = State::kDone;
    close_ = true;
    return Step::kDone;
  }
  over_ = true;
  why_ =
      started_ ? "the connection closed before the answer ended" : "the connection closed before an answer";
  return Step::kBad;
}

ResponseReader::Step ResponseReader::Bad(std::string why) {
  why_ = std::move(why);
  return Step::kBad;
}

ResponseReader::Step ResponseReader::Body(const char* p, size_t n) {
  received_ += n;
  if (received_ > request_.max_response_bytes) return Step::kTooLarge;
  std::string& body = response_.body;
  const size_t keep = request_.keep_response_bytes;
  if (body.size() < keep) body.append(p, std::min(n, keep - body.size()));
  return Step::kMore;
}

ResponseReader::Step ResponseReader::Head(const char* p, size_t n, size_t& used) {
  const size_t before = head_.size();
  head_.append(p, std::min(n, kMaxHead + 4 - before));
  const size_t end = head_.find("\r\n\r\n", before >= 3 ? before - 3 : 0);
  if (end == std::string::npos) {
    if (head_.size() > kMaxHead) return Bad("the answer's headers are longer than 64 KiB");
    used = head_.size() - before;
    return Step::kMore;
  }
  used = end + 4 - before;
  head_.resize(end + 2);
  Step step = ParseHead();
  head_.clear();
  return step;
}

ResponseReader::Step ResponseReader::ParseHead() {
  const std::string_view head(head_);
  // "HTTP/1.x NNN reason"
  if (head.size() < 12 || head.compare(0, 7, "HTTP/1.") != 0 || (head[7] != '0' && head[7] != '1') ||
      head[8] != ' ' || !std::isdigit(static_cast<unsigned char>(head[9])) ||
      !std::isdigit(static_cast<unsigned char>(head[10])) ||
      !std::isdigit(static_cast<unsigned char>(head[11]))) {
    return Bad("the answer is not HTTP/1.x");
  }
  const bool http10 = head[7] == '0';
  const int status = (head[9] - '0') * 100 + (head[10] - '0') * 10 + (head[11] - '0');
  response_.headers.clear();
  response_.content_type.clear();
  if (status >= 100 && status < 200) {
    if (status == 101) return Bad("the server switched protocols");
    if (++interim_ > kMaxInterimAnswers) return Bad("the server sent more than 16 interim answers");
    return Step::kMore;  // an interim answer: the final one follows
  }
  if (status < 100) return Bad("the answer's status is not valid");
  response_.status = status;
  bool keep_alive = false;
  bool chunked = false;
  bool encoded = false;
  std::optional<uint64_t> length;
  size_t at = head.find("\r\n") + 2;
  while (at < head.size()) {
    const size_t eol = head.find("\r\n", at);
    const std::string_view line = head.substr(at, eol - at);
    at = eol + 2;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = text::Trim(line.substr(colon + 1));
    if (text::EqualsIgnoreCase(name, "content-length")) {
      uint64_t v = 0;
      if (value.empty() || value.size() > 18 ||
          !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return Bad("the answer's Content-Length is not valid");
      }
      for (char c : value) v = v * 10 + static_cast<uint64_t>(c - '0');
      if (length && *length != v) return Bad("the answer has two different Content-Lengths");
      length = v;
    } else if (text::EqualsIgnoreCase(name, "transfer-encoding")) {
      encoded = true;
      const size_t last = value.rfind(',');
      chunked = text::EqualsIgnoreCase(
          text::Trim(last == std::string_view::npos ? value : value.substr(last + 1)), "chunked");
    } else if (text::EqualsIgnoreCase(name, "connection")) {
      if (HasToken(value, "close")) close_ = true;
      if (HasToken(value, "keep-alive")) keep_alive = true;
    } else if (text::EqualsIgnoreCase(name, "content-type")) {
      response_.content_type.assign(value);
    }
    Keep(name, value);
  }
  if (http10 && !keep_alive) close_ = true;
  // Two framings disagree on where the answer ends, and a stranger's bytes would be read as the
  // next answer by whoever guesses wrong.
  if (encoded && length) return Bad("the answer has both Content-Length and Transfer-Encoding");
  if (request_.method == "HEAD" || status == 204 || status == 304) {
    state_ = State::kDone;
  } else if (encoded) {
    if (chunked) {
      state_ = State::kChunkSize;
    } else {
      state_ = State::kUntilClose;
      close_ = true;
    }
  } else if (length) {
    if (*length > request_.max_response_bytes) return Step::kTooLarge;
    remaining_ = *length;
    state_ = *length == 0 ? State::kDone : State::kBody;
  } else {
    state_ = State::kUntilClose;
    close_ = true;
  }
  return Step::kMore;
}

void ResponseReader::Keep(std::string_view name, std::string_view value) {
  const auto& wanted = request_.keep_headers;  // lower case
  const auto match = std::find_if(wanted.begin(), wanted.end(),
                                  [&](const std::string& w) { return text::EqualsIgnoreCase(w, name); });
  if (match == wanted.end() || value.size() > kKeptValueLimit) return;
  auto& kept = response_.headers;
  auto it = std::find_if(kept.begin(), kept.end(), [&](const auto& h) { return h.first == *match; });
  if (it != kept.end()) {
    it->second.assign(value);
  } else {
    kept.emplace_back(*match, std::string(value));
  }
}

// A chunk's size line, the CRLF after its data, or a trailer line.
ResponseReader::Step ResponseReader::Line(const char* p, size_t n, size_t& used) {
  const char* nl = static_cast<const char*>(std::memchr(p, '\n', n));
  used = nl == nullptr ? n : static_cast<size_t>(nl - p) + 1;
  const size_t limit = state_ == State::kTrailers ? kMaxHead : kMaxChunkLine;
  if (line_.size() + used > limit + 2) return Bad("the answer's chunk framing is not valid");
  line_.append(p, used);
  if (nl == nullptr) return Step::kMore;
  if (line_.size() < 2 || line_[line_.size() - 2] != '\r')
    return Bad("the answer's chunk framing is not valid");
  const std::string_view line(line_.data(), line_.size() - 2);
  Step step = Step::kMore;
  if (state_ == State::kChunkEnd) {
    if (!line.empty()) step = Bad("the answer's chunk framing is not valid");
    state_ = State::kChunkSize;
  } else if (state_ == State::kTrailers) {
    trailers_ += line_.size();
    if (trailers_ > kMaxHead) step = Bad("the answer's trailers are longer than 64 KiB");
    if (line.empty()) state_ = State::kDone;
  } else {
    uint64_t size = 0;
    size_t digits = 0;
    for (char c : line) {
      int v = -1;
      if (c >= '0' && c <= '9') v = c - '0';
      if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
      if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
      if (v < 0) break;
      if (++digits > 15) return Bad("the answer's chunk is too large");
      size = size * 16 + static_cast<uint64_t>(v);
    }
    if (digits == 0) {
      step = Bad("the answer's chunk framing is not valid");
    } else if (size == 0) {
      state_ = State::kTrailers;
    } else {
      remaining_ = size;
      state_ = State::kChunkData;
    }
  }
  line_.clear();
  return step;
}

}  // namespace rendezvous::net
