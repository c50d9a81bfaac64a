#include "template_renderer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "rendezvous/text.hpp"

namespace rendezvous::webhooks {
namespace {

using Json = nlohmann::json;

std::string Dump(const Json& v) { return v.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::optional<size_t> Index(std::string_view segment) {
  if (segment.empty() || segment.size() > 9) return std::nullopt;
  size_t index = 0;
  for (char c : segment) {
    if (c < '0' || c > '9') return std::nullopt;
    index = index * 10 + static_cast<size_t>(c - '0');
  }
  return index;
}

// A cursor over a JSON text; each Scan* consumes one token and says whether it is well-formed.
class JsonScanner {
 public:
  explicit JsonScanner(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {
    if (text.size() >= 3 && std::memcmp(p_, "\xEF\xBB\xBF", 3) == 0) p_ += 3;
  }

  bool AtEnd() const { return p_ == end_; }
  // The next byte after whitespace, or 0 at the end (NUL is never valid outside a string).
  char Peek() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
    return p_ < end_ ? *p_ : '\0';
  }
  void Skip() { ++p_; }

  bool ScanValueToken() {
    switch (Peek()) {
      case '"': return ScanString();
      case 't': return ScanWord("true");
      case 'f': return ScanWord("false");
      case 'n': return ScanWord("null");
      default: return ScanNumber();
    }
  }

  bool ScanString() {
    ++p_;  // the opening quote
    const char* run = p_;
    while (p_ < end_) {
      const unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"' || c == '\\') {
        if (!text::IsValidUtf8(std::string_view(run, static_cast<size_t>(p_ - run)))) return false;
        ++p_;
        if (c == '"') return true;
        if (!ScanEscape()) return false;
        run = p_;
      } else if (c < 0x20) {
        return false;
      } else {
        ++p_;
      }
    }
    return false;
  }

 private:
  bool ScanWord(std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size() || std::memcmp(p_, word.data(), word.size()) != 0) return false;
    p_ += word.size();
    return true;
  }

  int Hex4() {
    if (end_ - p_ < 4) return -1;
    int value = 0;
    for (int i = 0; i < 4; ++i, ++p_) {
      const int digit = text::HexDigitValue(*p_);
      if (digit < 0) return -1;
      value = value * 16 + digit;
    }
    return value;
  }

  // After a backslash.
  bool ScanEscape() {
    if (p_ >= end_) return false;
    const char c = *p_++;
    if (c != '\0' && std::strchr("\"\\/bfnrt", c) != nullptr) return true;
    if (c != 'u') return false;
    const int unit = Hex4();
    if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) return false;
    if (unit < 0xD800 || unit > 0xDBFF) return true;
    // A high surrogate needs its low one.
    if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
    p_ += 2;
    const int low = Hex4();
    return low >= 0xDC00 && low <= 0xDFFF;
  }

  static bool Digit(char c) { return c >= '0' && c <= '9'; }

  bool ScanNumber() {
    const char* start = p_;
    bool fractional = false;
    if (p_ < end_ && *p_ == '-') ++p_;
    if (p_ < end_ && *p_ == '0') {
      ++p_;
    } else if (p_ < end_ && *p_ >= '1' && *p_ <= '9') {
      while (p_ < end_ && Digit(*p_)) ++p_;
    } else {
      return false;
    }
    if (p_ < end_ && *p_ == '.') {
      fractional = true;
      ++p_;
      if (p_ >= end_ || !Digit(*p_)) return false;
      while (p_ < end_ && Digit(*p_)) ++p_;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      fractional = true;
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ >= end_ || !Digit(*p_)) return false;
      while (p_ < end_ && Digit(*p_)) ++p_;
    }
    // Fractions, exponents and integers too long for 64 bits are doubles, which must be finite
    // (underflow to zero is fine).
    if (fractional || p_ - start > 18) {
      const std::string token(start, p_);
      const double value = std::strtod(token.c_str(), nullptr);
      if (!std::isfinite(value)) return false;
    }
    return true;
  }

  const char* p_;
  const char* end_;
};

}  // namespace

bool IsJsonText(std::string_view text) {
  JsonScanner in(text);
  std::vector<char> open;  // '{' or '[' for each container being read
  enum class Next { kValue, kMember, kAfterValue };
  Next next = Next::kValue;
  for (;;) {
    switch (next) {
      case Next::kValue: {
        const char c = in.Peek();
        if (c == '{' || c == '[') {
          in.Skip();
          if (in.Peek() == (c == '{' ? '}' : ']')) {
            in.Skip();
            next = Next::kAfterValue;
          } else {
            open.push_back(c);
            next = c == '{' ? Next::kMember : Next::kValue;
          }
        } else {
          if (!in.ScanValueToken()) return false;
          next = Next::kAfterValue;
        }
        break;
      }
      case Next::kMember:
        if (in.Peek() != '"' || !in.ScanString() || in.Peek() != ':') return false;
        in.Skip();
        next = Next::kValue;
        break;
      case Next::kAfterValue: {
        const char c = in.Peek();
        if (open.empty()) return in.AtEnd();
        if (c == ',') {
          in.Skip();
          next = open.back() == '{' ? Next::kMember : Next::kValue;
        } else if (c == (open.back() == '{' ? '}' : ']')) {
          in.Skip();
          open.pop_back();
        } else {
          return false;
        }
        break;
      }
    }
  }
}

std::optional<Json> ResolvePath(const Json& event, std::string_view path) {
  path = text::Trim(path);
  if (path.empty() || !event.is_object()) return std::nullopt;
  if (path == "triggerEvent" || path == "createdAt") {
    auto it = event.find(std::string(path));
    if (it == event.end()) return std::nullopt;
    return *it;
  }
  auto payload = event.find("payload");
  if (payload == event.end()) return std::nullopt;
  const Json* cur = &*payload;
  while (true) {
    const size_t dot = path.find('.');
    const std::string_view segment = path.substr(0, dot);
    if (cur->is_object()) {
      auto it = cur->find(std::string(segment));
      if (it == cur->end()) return std::nullopt;
      cur = &*it;
    } else if (cur->is_array()) {
      std::optional<size_t> i = Index(segment);
      if (!i || *i >= cur->size()) return std::nullopt;
      cur = &(*cur)[*i];
    } else {
      return std::nullopt;
    }
    if (dot == std::string_view::npos) break;
    path.remove_prefix(dot + 1);
  }
  return *cur;
}

std::string RenderTemplate(std::string_view tmpl, const Json& event, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(tmpl.size(), max_bytes));
  size_t pos = 0;
  while (pos < tmpl.size() && out.size() < max_bytes) {
    const size_t open = tmpl.find("{{", pos);
    const size_t close = open == std::string_view::npos ? open : tmpl.find("}}", open + 2);
    if (close == std::string_view::npos) {
      out.append(tmpl.substr(pos));
      break;
    }
    out.append(tmpl.substr(pos, open - pos));
    if (std::optional<Json> value = ResolvePath(event, tmpl.substr(open + 2, close - open - 2))) {
      const std::string dumped = Dump(*value);
      if (value->is_string()) {
        out.append(dumped, 1, dumped.size() - 2);
      } else {
        out.append(dumped);
      }
    }
    pos = close + 2;
  }
  if (out.size() > max_bytes) out = text::TruncateUtf8(out, max_bytes);
  return out;
}

RenderedBody RenderBody(const std::optional<std::string>& tmpl, const Json& event, size_t max_bytes) {
  if (!tmpl) return {Dump(event), "application/json"};
  return TypedBody(RenderTemplate(*tmpl, event, max_bytes), max_bytes);
}

RenderedBody TypedBody(std::string text, size_t max_bytes) {
  if (text.size() > max_bytes) text = text::TruncateUtf8(text, max_bytes);
  RenderedBody r;
  r.content_type = IsJsonText(text) ? "application/json" : "text/plain";
  r.body = std::move(text);
  return r;
}

}  // namespace rendezvous::webhooks
