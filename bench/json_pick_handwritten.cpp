// The hand-written json_pick (core/text/json_pick.cpp before simdjson), kept beside the bench as
// its reference.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "rendezvous/json_pick.hpp"

namespace handwritten {
using rendezvous::json::JsonPath;
namespace {

using Json = nlohmann::json;

// One pass over the text that checks it is one well-formed JSON value (RFC 8259, strings in
// well-formed UTF-8, as nlohmann's parser has it) and builds a value only where a path ends.
// Everything else is stepped over: a string's bytes are validated but not copied, a member name is
// compared in place unless it has escapes. Which paths still lead through the value at hand is a
// bit set per level (at most 64 paths a pass), so a value off every path costs no comparison.
class Scanner {
 public:
  Scanner(std::string_view text, const std::vector<JsonPath>& paths, size_t first, size_t count,
          std::vector<Json>& values)
      : p_(text.data()),
        end_(text.data() + text.size()),
        paths_(paths),
        first_(first),
        count_(count),
        values_(values) {
    index_.resize(count);
    for (size_t i = 0; i < count; ++i) {
      for (const std::string& step : paths[first + i]) index_[i].push_back(CanonicalIndex(step));
    }
  }

  bool Run() {
    // A UTF-8 byte order mark before the value is skipped, as nlohmann's parser does.
    if (end_ - p_ >= 3 && std::memcmp(p_, "\xEF\xBB\xBF", 3) == 0) p_ += 3;
    const uint64_t all = count_ == 64 ? ~uint64_t{0} : (uint64_t{1} << count_) - 1;
    if (!Value(all)) return false;
    SkipSpace();
    return p_ == end_;
  }

 private:
  // An object's member or an array's element being read, and which paths lead through it.
  struct Frame {
    bool array = false;
    int64_t index = -1;   // the array's current element
    uint64_t inside = 0;  // paths that lead through this container (to a level below it)
  };

  // A path step that names an array element ("0", "12"; not "01" or "-1"), else -1.
  static int64_t CanonicalIndex(const std::string& step) {
    if (step.empty() || step.size() > 18 || (step.size() > 1 && step[0] == '0')) return -1;
    int64_t n = 0;
    for (char c : step) {
      if (c < '0' || c > '9') return -1;
      n = n * 10 + (c - '0');
    }
    return n;
  }

  size_t Depth() const { return frames_.size(); }
  const JsonPath& PathOf(size_t bit) const { return paths_[first_ + bit]; }

  void SkipSpace() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  // The value at hand, reached by the paths in `on`: a scalar is kept where a path ends at it and
  // clears what an earlier occurrence left on the longer paths; a container clears every path
  // through it, then reads its members with the paths that go deeper.
  // Iterative: the nesting depth is bounded by the text's length alone, as in nlohmann's parser.
  bool Value(uint64_t on) {
    for (;;) {
      SkipSpace();
      if (p_ == end_) return false;
      const char c = *p_;
      if (c == '{' || c == '[') {
        ++p_;
        uint64_t deeper = 0;
        for (uint64_t m = on; m != 0; m &= m - 1) {
          const auto bit = static_cast<size_t>(__builtin_ctzll(m));
          values_[first_ + bit] = Json(Json::value_t::discarded);
          if (PathOf(bit).size() > Depth()) deeper |= uint64_t{1} << bit;
        }
        frames_.push_back(Frame{c == '[', -1, deeper});
        SkipSpace();
        if (p_ != end_ && *p_ == (c == '[' ? ']' : '}')) {
          ++p_;
          frames_.pop_back();
        } else {
          // The first member or element.
          if (!Next(on)) return false;
          continue;
        }
      } else {
        if (!Scalar(on)) return false;
      }
      // The value ended: close what ends with it, move to the next member or element.
      for (;;) {
        if (frames_.empty()) return true;
        SkipSpace();
        if (p_ == end_) return false;
        const Frame& top = frames_.back();
        if (*p_ == ',') {
          ++p_;
          break;
        }
        if (*p_ != (top.array ? ']' : '}')) return false;
        ++p_;
        frames_.pop_back();
      }
      if (!Next(on)) return false;
    }
  }

  // Reads the next member's name (an object) or steps the element's index (an array): `on` becomes
  // the paths that reach that member's or element's value.
  bool Next(uint64_t& on) {
    Frame& top = frames_.back();
    const size_t level = Depth() - 1;
    on = 0;
    if (top.array) {
      ++top.index;
      for (uint64_t m = top.inside; m != 0; m &= m - 1) {
        const auto bit = static_cast<size_t>(__builtin_ctzll(m));
        if (index_[bit][level] == top.index) on |= uint64_t{1} << bit;
      }
      return true;
    }
    SkipSpace();
    if (p_ == end_ || *p_ != '"') return false;
    std::string decoded;
    std::string_view name;
    if (!String(top.inside != 0, decoded, name)) return false;
    for (uint64_t m = top.inside; m != 0; m &= m - 1) {
      const auto bit = static_cast<size_t>(__builtin_ctzll(m));
      if (PathOf(bit)[level] == name) on |= uint64_t{1} << bit;
    }
    SkipSpace();
    if (p_ == end_ || *p_ != ':') return false;
    ++p_;
    return true;
  }

  bool Scalar(uint64_t on) {
    // Paths that end here get the value; longer ones through here get nothing (a scalar has no members).
    uint64_t ending = 0;
    for (uint64_t m = on; m != 0; m &= m - 1) {
      const auto bit = static_cast<size_t>(__builtin_ctzll(m));
      if (PathOf(bit).size() == Depth()) {
        ending |= uint64_t{1} << bit;
      } else {
        values_[first_ + bit] = Json(Json::value_t::discarded);
      }
    }
    Json value;
    const char c = *p_;
    if (c == '"') {
      std::string decoded;
      std::string_view text;
      if (!String(ending != 0, decoded, text)) return false;
      if (ending != 0) value = decoded.empty() ? std::string(text) : std::move(decoded);
    } else if (c == 't' || c == 'f' || c == 'n') {
      const char* word = c == 't' ? "true" : c == 'f' ? "false" : "null";
      const size_t n = std::strlen(word);
      if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) return false;
      p_ += n;
      if (c == 'n') {
        value = nullptr;
      } else {
        value = c == 't';
      }
    } else {
      if (!Number(ending != 0, value)) return false;
    }
    for (uint64_t m = ending; m != 0; m &= m - 1) {
      values_[first_ + static_cast<size_t>(__builtin_ctzll(m))] = value;
    }
    return true;
  }

  // A number as RFC 8259 writes it, in double's range. Kept as nlohmann keeps it: an integer in
  // int64 (negative) or uint64 (not negative) when it fits, else a double.
  bool Number(bool keep, Json& value) {
    const char* start = p_;
    bool negative = false;
    if (p_ != end_ && *p_ == '-') {
      negative = true;
      ++p_;
    }
    if (p_ == end_) return false;
    if (*p_ == '0') {
      ++p_;
    } else if (*p_ >= '1' && *p_ <= '9') {
      while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    } else {
      return false;
    }
    bool integer = true;
    if (p_ != end_ && *p_ == '.') {
      integer = false;
      ++p_;
      const char* digits = p_;
      while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      if (p_ == digits) return false;
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      integer = false;
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      const char* digits = p_;
      while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      if (p_ == digits) return false;
    }
    if (integer) {
      // An integer is kept when it fits; one that does not is read as a double below.
      if (negative) {
        int64_t n = 0;
        const auto r = std::from_chars(start, p_, n);
        if (r.ec == std::errc() && r.ptr == p_) {
          if (keep) value = n;
          return true;
        }
      } else {
        uint64_t n = 0;
        const auto r = std::from_chars(start, p_, n);
        if (r.ec == std::errc() && r.ptr == p_) {
          if (keep) value = n;
          return true;
        }
      }
    }
    // strtod, as nlohmann's parser reads it (0 below the range); a number beyond the range is not
    // well-formed there, kept or not.
    const std::string digits(start, p_);
    const double d = std::strtod(digits.c_str(), nullptr);
    if (!std::isfinite(d)) return false;
    if (keep) value = d;
    return true;
  }

  static int Hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  bool Hex4(uint32_t& out) {
    if (end_ - p_ < 4) return false;
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const int h = Hex(p_[i]);
      if (h < 0) return false;
      out = (out << 4) | static_cast<uint32_t>(h);
    }
    p_ += 4;
    return true;
  }

  static void AppendUtf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // One well-formed UTF-8 sequence of two to four bytes at p_ (RFC 3629: no overlong forms, no
  // surrogates, nothing above U+10FFFF).
  bool Utf8Sequence() {
    const auto b0 = static_cast<unsigned char>(*p_);
    size_t n = 0;
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      n = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      n = 3;
      if (b0 == 0xE0) lo = 0xA0;
      if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      n = 4;
      if (b0 == 0xF0) lo = 0x90;
      if (b0 == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (static_cast<size_t>(end_ - p_) < n) return false;
    const auto b1 = static_cast<unsigned char>(p_[1]);
    if (b1 < lo || b1 > hi) return false;
    for (size_t i = 2; i < n; ++i) {
      const auto b = static_cast<unsigned char>(p_[i]);
      if (b < 0x80 || b > 0xBF) return false;
    }
    p_ += n;
    return true;
  }

  // A string at p_ (its opening quote). Its text is `raw` (in place) when it has no escape; with
  // `decode` and an escape, the decoded text is `decoded` and `raw` is the same text.
  bool String(bool decode, std::string& decoded, std::string_view& raw) {
    ++p_;
    const char* start = p_;
    bool escaped = false;
    for (;;) {
      // The plain run: printable ASCII other than the quote and the backslash.
      const char* run = p_;
      while (p_ != end_) {
        const auto b = static_cast<unsigned char>(*p_);
        if (b < 0x20 || b == '"' || b == '\\' || b >= 0x80) break;
        ++p_;
      }
      if (escaped && decode) decoded.append(run, p_);
      if (p_ == end_) return false;
      const auto b = static_cast<unsigned char>(*p_);
      if (b == '"') break;
      if (b < 0x20) return false;
      if (b >= 0x80) {
        const char* at = p_;
        if (!Utf8Sequence()) return false;
        if (escaped && decode) decoded.append(at, p_);
        continue;
      }
      // A backslash: what came before it goes into `decoded` the first time.
      if (!escaped && decode) decoded.assign(start, p_);
      escaped = true;
      ++p_;
      if (p_ == end_) return false;
      const char e = *p_++;
      char plain = 0;
      switch (e) {
        case '"':
          plain = '"';
          break;
        case '\\':
          plain = '\\';
          break;
        case '/':
          plain = '/';
          break;
        case 'b':
          plain = '\b';
          break;
        case 'f':
          plain = '\f';
          break;
        case 'n':
          plain = '\n';
          break;
        case 'r':
          plain = '\r';
          break;
        case 't':
          plain = '\t';
          break;
        case 'u': {
          uint32_t cp = 0;
          if (!Hex4(cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            // A high surrogate must be followed by an escaped low one.
            uint32_t low = 0;
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
            p_ += 2;
            if (!Hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return false;
          }
          if (decode) AppendUtf8(decoded, cp);
          continue;
        }
        default:
          return false;
      }
      if (decode) decoded += plain;
    }
    raw = std::string_view(start, static_cast<size_t>(p_ - start));
    ++p_;  // the closing quote
    if (escaped && decode) {
      raw = decoded;
    } else {
      decoded.clear();
    }
    return true;
  }

  const char* p_;
  const char* const end_;
  const std::vector<JsonPath>& paths_;
  const size_t first_;
  const size_t count_;
  std::vector<Json>& values_;
  std::vector<std::vector<int64_t>> index_;  // each path step as an array index, or -1
  std::vector<Frame> frames_;
};

}  // namespace

std::optional<std::vector<nlohmann::json>> PickScalars(std::string_view text,
                                                       const std::vector<JsonPath>& paths) {
  std::vector<Json> values(paths.size(), Json(Json::value_t::discarded));
  // 64 paths a pass (one bit each); one pass checks the text even with no path.
  size_t first = 0;
  do {
    const size_t count = std::min<size_t>(64, paths.size() - first);
    if (!Scanner(text, paths, first, count, values).Run()) return std::nullopt;
    first += count;
  } while (first < paths.size());
  return values;
}

}  // namespace handwritten
