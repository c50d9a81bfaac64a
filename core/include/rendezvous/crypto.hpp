// Small cryptographic helpers over OpenSSL 3 for tokens, secrets and passwords. Thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "rendezvous/status.hpp"

namespace rendezvous::crypto {

// `bytes` random bytes from RAND_bytes, base64url without padding. Aborts if the RNG fails.
std::string RandomToken(size_t bytes = 32);
// `bytes` random bytes as lower-case hex.
std::string RandomHex(size_t bytes);
std::string Sha256Hex(std::string_view data);
std::string HmacSha256(std::string_view key, std::string_view data);  // raw 32 bytes
std::string ToHex(std::string_view raw);
std::string Base64Encode(std::string_view raw);
std::string Base64UrlEncode(std::string_view raw);  // no padding
Result<std::string> Base64Decode(std::string_view text);  // accepts standard and url alphabets
// The url alphabet only, no padding, and the one canonical text of the bytes (unused low bits
// zero): what JOSE (RFC 7515 §2) writes, so that one value has one spelling.
Result<std::string> Base64UrlDecodeStrict(std::string_view text);
// Constant-time comparison (length leaks only).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// Password hashing: scrypt (N=2^15, r=8, p=1, 16-byte salt) in a self-describing string
// "scrypt$N$r$p$<salt b64>$<hash b64>". Verify is constant time and accepts only that format.
std::string HashPassword(std::string_view password);
bool VerifyPassword(std::string_view password, std::string_view encoded);

// AES-256-GCM with a 32-byte key: output "v1:" + base64(nonce(12) | ciphertext | tag(16)).
Result<std::string> Encrypt(std::string_view key, std::string_view plaintext);
Result<std::string> Decrypt(std::string_view key, std::string_view encoded);

}  // namespace rendezvous::crypto
