#include "rendezvous/text.hpp"

#include <algorithm>

namespace rendezvous::text {
namespace {

char LowerAscii(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// Length of the well-formed UTF-8 sequence at s[i], or 0 when it is ill-formed.
size_t SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  size_t length = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF)
    length = 2;
  else if (b0 == 0xE0)
    length = 3, lo = 0xA0;
  else if (b0 >= 0xE1 && b0 <= 0xEC)
    length = 3;
  else if (b0 == 0xED)
    length = 3, hi = 0x9F;  // no surrogates
  else if (b0 >= 0xEE && b0 <= 0xEF)
    length = 3;
  else if (b0 == 0xF0)
    length = 4, lo = 0x90;
  else if (b0 >= 0xF1 && b0 <= 0xF3)
    length = 4;
  else if (b0 == 0xF4)
    length = 4, hi = 0x8F;  // nothing above U+10FFFF
  else
    return 0;
  if (i + length > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < length; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return length;
}

}  // namespace

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), LowerAscii);
  return out;
}

std::string_view Trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  size_t start = s.find_first_not_of(kSpace);
  if (start == std::string_view::npos) return {};
  size_t end = s.find_last_not_of(kSpace);
  return s.substr(start, end - start + 1);
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return LowerAscii(x) == LowerAscii(y); });
}

int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {  // ASCII, most of any text: one byte, always valid
      ++i;
      continue;
    }
    size_t n = SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string TruncateUtf8(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  size_t end = max_bytes;
  // Step back over continuation bytes to the start of the character that does not fit.
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return std::string(s.substr(0, end));
}

std::string SanitizeUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = SequenceLength(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

bool HasControlCharacters(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    unsigned char u = static_cast<unsigned char>(c);
    return (u < 0x20 && u != '\t' && u != '\r' && u != '\n') || u == 0x7F;
  });
}

std::string_view EmailAddressProblem(std::string_view s, size_t max_bytes) {
  if (s.size() < 3) return "must be at least 3 bytes long";
  if (s.size() > max_bytes) return "is too long for an e-mail address";
  if (!IsValidUtf8(s)) return "must be valid UTF-8";
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const auto next = i + 1 < s.size() ? static_cast<unsigned char>(s[i + 1]) : 0;
    const auto after = i + 2 < s.size() ? static_cast<unsigned char>(s[i + 2]) : 0;
    const bool c1 = c == 0xc2 && next >= 0x80 && next <= 0x9f;                             // U+0080..U+009F
    const bool separator = c == 0xe2 && next == 0x80 && (after == 0xa8 || after == 0xa9);  // U+2028, U+2029
    if (c <= 0x20 || c == 0x7f || c1 || separator) {
      return "must not contain spaces, line breaks or control characters";
    }
    if (std::string_view("<>(),;:\"[]\\").find(static_cast<char>(c)) != std::string_view::npos) {
      return "must be one plain address, without any of <>(),;:\"[]\\";
    }
  }
  const size_t at = s.find('@');
  if (at == 0 || at == std::string_view::npos || at + 1 == s.size() ||
      s.find('@', at + 1) != std::string_view::npos) {
    return "must have the form name@domain";
  }
  return "";
}

bool IsEmailAddress(std::string_view s, size_t max_bytes) {
  return EmailAddressProblem(s, max_bytes).empty();
}

}  // namespace rendezvous::text
