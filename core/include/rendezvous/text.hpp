// Text helpers for the host and plugins: ASCII case and whitespace, and UTF-8 checked, cut on
// character boundaries and repaired. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rendezvous::text {

// ASCII letters lower-cased; every other byte unchanged.
std::string AsciiLower(std::string_view s);
// Without leading and trailing ASCII whitespace (space, tab, CR, LF, vertical tab, form feed).
std::string_view Trim(std::string_view s);
// Equal but for ASCII case.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// The value of one hexadecimal digit, either case; -1 for any other byte.
int HexDigitValue(char c);

// Well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
bool IsValidUtf8(std::string_view s);
// The longest prefix of at most max_bytes bytes that ends on a character boundary. For valid
// UTF-8 the result is valid UTF-8.
std::string TruncateUtf8(std::string_view s, size_t max_bytes);
// Every ill-formed sequence replaced by U+FFFD.
std::string SanitizeUtf8(std::string_view s);
// Holds a C0 control character other than tab, CR and LF, or DEL (NUL included).
bool HasControlCharacters(std::string_view s);

}  // namespace rendezvous::text
