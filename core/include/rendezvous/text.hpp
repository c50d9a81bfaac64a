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

// The one e-mail address rule of the host and the plugins (sign-up and profile, bookings'
// attendees and guests, the mail service's recipient and sender). An address is one plain
// addr-spec "local@domain" that can be put into a mail header and an SMTP command as it is:
// - 3 to `max_bytes` bytes: kMaxEmailAddressBytes (254, RFC 5321's 256-byte path less the angle
//   brackets) unless the caller stores longer ones (bookings' attendees and guests: 320, RFC 3696's
//   64-byte local part, '@' and a 255-byte domain; the mail service sends to none over 254);
// - exactly one '@', with at least one byte before and after it; the domain needs no dot
//   ("admin@localhost" is an address);
// - valid UTF-8 (internationalised addresses, RFC 6531), with no space, no control character
//   (C0, DEL, C1) and no line or paragraph separator (U+2028, U+2029);
// - none of  < > ( ) , ; : " [ ] \  -- in a header they would make a list, a display name, a
//   comment, a group or a quoted or literal part, i.e. more or other than one recipient.
// No trimming and no case folding: callers that normalise do that first.
// Returns "" for an address, otherwise what is wrong with it, phrased to follow the field's name
// ("must be ...").
inline constexpr size_t kMaxEmailAddressBytes = 254;
inline constexpr size_t kMaxStoredEmailAddressBytes = 320;
std::string_view EmailAddressProblem(std::string_view s, size_t max_bytes = kMaxEmailAddressBytes);
// EmailAddressProblem(s, max_bytes) is "".
bool IsEmailAddress(std::string_view s, size_t max_bytes = kMaxEmailAddressBytes);

}  // namespace rendezvous::text
