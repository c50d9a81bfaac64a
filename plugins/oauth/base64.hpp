// Base64 as the OAuth flows need it: strict standard-alphabet decoding for HTTP Basic client
// credentials (RFC 7617) and unpadded base64url encoding for PKCE (RFC 7636). Pure functions,
// thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rendezvous::oauth {

// Decodes standard base64 (RFC 4648 §4) with the padding required. nullopt on any character
// outside the alphabet, bad padding, a length not a multiple of 4, or non-zero trailing bits.
std::optional<std::string> Base64DecodeStrict(std::string_view text);

// Encodes as base64url (RFC 4648 §5) without padding.
std::string Base64UrlEncode(std::string_view raw);

}  // namespace rendezvous::oauth
