#include "rendezvous/crypto.hpp"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

namespace rendezvous::crypto {
namespace {

constexpr uint64_t kScryptN = 1u << 15;
constexpr uint64_t kScryptR = 8;
constexpr uint64_t kScryptP = 1;
constexpr size_t kSaltBytes = 16;
constexpr size_t kHashBytes = 32;
// N=2^15, r=8 needs 128*N*r = 32 MiB; OpenSSL's default cap is exactly that, which it rejects.
constexpr uint64_t kScryptMaxMem = 64ull * 1024 * 1024;

constexpr size_t kGcmNonceBytes = 12;
constexpr size_t kGcmTagBytes = 16;
constexpr std::string_view kCipherPrefix = "v1:";

// SHA-256 looked up once: EVP_sha256() makes every digest look the algorithm up by name again.
const EVP_MD* FetchedSha256() {
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return md != nullptr ? md : EVP_sha256();
}

const unsigned char* Bytes(std::string_view s) {
  static const unsigned char kEmpty = 0;
  return s.empty() ? &kEmpty : reinterpret_cast<const unsigned char*>(s.data());
}

std::string RandomBytes(size_t n) {
  std::string out(n, '\0');
  if (n > 0 && RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1) {
    // Handing out predictable tokens is worse than stopping.
    std::fputs("rendezvous: RAND_bytes failed\n", stderr);
    std::abort();
  }
  return out;
}

// -1: not a base64 character (either alphabet).
constexpr std::array<int8_t, 256> MakeDecodeTable() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 26; ++i) {
    t['A' + i] = static_cast<int8_t>(i);
    t['a' + i] = static_cast<int8_t>(26 + i);
  }
  for (int i = 0; i < 10; ++i) t['0' + i] = static_cast<int8_t>(52 + i);
  t['+'] = 62;
  t['-'] = 62;
  t['/'] = 63;
  t['_'] = 63;
  return t;
}
constexpr std::array<int8_t, 256> kDecodeTable = MakeDecodeTable();

bool ParseUint(std::string_view s, uint64_t max, uint64_t& out) {
  if (s.empty() || s.size() > 10) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > max) return false;
  out = v;
  return true;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

bool Scrypt(std::string_view password, std::string_view salt, uint64_t n, uint64_t r, uint64_t p,
            std::string& out) {
  return EVP_PBE_scrypt(password.data() == nullptr ? "" : password.data(), password.size(), Bytes(salt),
                        salt.size(), n, r, p, kScryptMaxMem, reinterpret_cast<unsigned char*>(out.data()),
                        out.size()) == 1;
}

struct CipherCtxDeleter {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, CipherCtxDeleter>;

}  // namespace

std::string RandomToken(size_t bytes) {
  return Base64UrlEncode(RandomBytes(bytes));
}

std::string RandomHex(size_t bytes) {
  return ToHex(RandomBytes(bytes));
}

std::string Sha256Hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(Bytes(data), data.size(), md, &len, FetchedSha256(), nullptr) != 1) {
    std::fputs("rendezvous: SHA-256 failed\n", stderr);
    std::abort();
  }
  return ToHex(std::string_view(reinterpret_cast<const char*>(md), len));
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  // One context per thread, its digest set once: each call only sets the key (OpenSSL's one-shot
  // HMAC() looks the MAC and the digest up by name every time, half of a webhook signature's cost).
  struct MacContext {
    EVP_MAC_CTX* ctx = nullptr;
    MacContext() {
      EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
      if (mac != nullptr) ctx = EVP_MAC_CTX_new(mac);
      EVP_MAC_free(mac);  // the context holds its own reference
      char digest[] = "SHA256";
      const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                                   OSSL_PARAM_construct_end()};
      if (ctx != nullptr && EVP_MAC_CTX_set_params(ctx, params) != 1) {
        EVP_MAC_CTX_free(ctx);
        ctx = nullptr;
      }
    }
    ~MacContext() { EVP_MAC_CTX_free(ctx); }
    MacContext(const MacContext&) = delete;
    MacContext& operator=(const MacContext&) = delete;
  };
  thread_local MacContext mac;
  unsigned char md[EVP_MAX_MD_SIZE];
  size_t len = 0;
  // Never a null key pointer: EVP_MAC_init would keep the previous call's key.
  static const unsigned char kNoKey = 0;
  const unsigned char* key_bytes = key.empty() ? &kNoKey : Bytes(key);
  if (mac.ctx == nullptr || EVP_MAC_init(mac.ctx, key_bytes, key.size(), nullptr) != 1 ||
      EVP_MAC_update(mac.ctx, Bytes(data), data.size()) != 1 ||
      EVP_MAC_final(mac.ctx, md, &len, sizeof md) != 1) {
    std::fputs("rendezvous: HMAC-SHA256 failed\n", stderr);
    std::abort();
  }
  return std::string(reinterpret_cast<const char*>(md), len);
}

std::string ToHex(std::string_view raw) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(raw.size() * 2);
  for (unsigned char c : raw) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0x0f]);
  }
  return out;
}

std::string Base64Encode(std::string_view raw) {
  std::string out(4 * ((raw.size() + 2) / 3), '\0');
  if (raw.empty()) return out;
  int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), Bytes(raw), static_cast<int>(raw.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string Base64UrlEncode(std::string_view raw) {
  std::string out = Base64Encode(raw);
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) {
    if (c == '+')
      c = '-';
    else if (c == '/')
      c = '_';
  }
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  size_t len = text.size();
  if (len % 4 == 0 && len >= 4) {
    // Padding only at the end, at most two characters.
    if (text[len - 1] == '=') --len;
    if (text[len - 1] == '=') --len;
  }
  if (len % 4 == 1) return Status(ErrorCode::kInvalid, "invalid base64 length");
  std::string out;
  out.reserve(len * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < len; ++i) {
    int8_t v = kDecodeTable[static_cast<unsigned char>(text[i])];
    if (v < 0) return Status(ErrorCode::kInvalid, "invalid base64 character");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

Result<std::string> Base64UrlDecodeStrict(std::string_view text) {
  if (text.size() % 4 == 1) return Status(ErrorCode::kInvalid, "invalid base64url length");
  for (char c : text) {
    if (c == '+' || c == '/' || c == '=') return Status(ErrorCode::kInvalid, "invalid base64url character");
  }
  Result<std::string> out = Base64Decode(text);
  if (!out.ok()) return out;
  // The last character's unused bits must be zero: 2 of them for 3 characters, 4 for 2.
  if (const size_t rest = text.size() % 4; rest != 0) {
    const int8_t last = kDecodeTable[static_cast<unsigned char>(text.back())];
    const int mask = rest == 2 ? 0x0f : 0x03;
    if ((last & mask) != 0) return Status(ErrorCode::kInvalid, "non-canonical base64url");
  }
  return out;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string HashPassword(std::string_view password) {
  std::string salt = RandomBytes(kSaltBytes);
  std::string hash(kHashBytes, '\0');
  if (!Scrypt(password, salt, kScryptN, kScryptR, kScryptP, hash)) {
    std::fputs("rendezvous: scrypt failed\n", stderr);
    std::abort();
  }
  return "scrypt$" + std::to_string(kScryptN) + "$" + std::to_string(kScryptR) + "$" +
         std::to_string(kScryptP) + "$" + Base64Encode(salt) + "$" + Base64Encode(hash);
}

bool VerifyPassword(std::string_view password, std::string_view encoded) {
  if (encoded.size() > 512) return false;
  auto parts = Split(encoded, '$');
  if (parts.size() != 6 || parts[0] != "scrypt") return false;
  uint64_t n = 0, r = 0, p = 0;
  // Bounds keep a tampered row from turning a login into a memory or CPU bomb.
  if (!ParseUint(parts[1], 1u << 20, n) || !ParseUint(parts[2], 32, r) || !ParseUint(parts[3], 16, p)) {
    return false;
  }
  if (n < 2 || (n & (n - 1)) != 0 || r == 0 || p == 0 || 128 * n * r > kScryptMaxMem / 2) {
    return false;
  }
  auto salt = Base64Decode(parts[4]);
  auto expected = Base64Decode(parts[5]);
  if (!salt.ok() || !expected.ok() || salt->size() < 8 || expected->size() < kHashBytes ||
      expected->size() > 64) {
    return false;
  }
  std::string actual(expected->size(), '\0');
  if (!Scrypt(password, *salt, n, r, p, actual)) return false;
  return ConstantTimeEquals(actual, *expected);
}

Result<std::string> Encrypt(std::string_view key, std::string_view plaintext) {
  if (key.size() != 32) return Status(ErrorCode::kInvalid, "encryption key must be 32 bytes");
  if (plaintext.size() > (1u << 30)) return Status(ErrorCode::kTooLarge, "plaintext too large");
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  if (!ctx) return Status(ErrorCode::kInternal, "cipher context allocation failed");
  std::string nonce = RandomBytes(kGcmNonceBytes);
  std::string out = nonce;
  out.resize(kGcmNonceBytes + plaintext.size() + kGcmTagBytes);
  auto* ct = reinterpret_cast<unsigned char*>(out.data()) + kGcmNonceBytes;
  int len = 0;
  int total = 0;
  if (EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kGcmNonceBytes, nullptr) != 1 ||
      EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, Bytes(key), Bytes(nonce)) != 1 ||
      EVP_EncryptUpdate(ctx.get(), ct, &len, Bytes(plaintext), static_cast<int>(plaintext.size())) != 1) {
    return Status(ErrorCode::kInternal, "encryption failed");
  }
  total = len;
  if (EVP_EncryptFinal_ex(ctx.get(), ct + total, &len) != 1) {
    return Status(ErrorCode::kInternal, "encryption failed");
  }
  total += len;
  if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kGcmTagBytes, ct + total) != 1) {
    return Status(ErrorCode::kInternal, "encryption failed");
  }
  out.resize(kGcmNonceBytes + static_cast<size_t>(total) + kGcmTagBytes);
  return std::string(kCipherPrefix) + Base64Encode(out);
}

Result<std::string> Decrypt(std::string_view key, std::string_view encoded) {
  if (key.size() != 32) return Status(ErrorCode::kInvalid, "encryption key must be 32 bytes");
  if (encoded.substr(0, kCipherPrefix.size()) != kCipherPrefix) {
    return Status(ErrorCode::kInvalid, "unknown ciphertext format");
  }
  auto raw = Base64Decode(encoded.substr(kCipherPrefix.size()));
  if (!raw.ok() || raw->size() < kGcmNonceBytes + kGcmTagBytes) {
    return Status(ErrorCode::kInvalid, "malformed ciphertext");
  }
  const std::string& data = *raw;
  size_t ct_len = data.size() - kGcmNonceBytes - kGcmTagBytes;
  auto* nonce = reinterpret_cast<const unsigned char*>(data.data());
  auto* ct = nonce + kGcmNonceBytes;
  std::string tag(data.substr(kGcmNonceBytes + ct_len));
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  if (!ctx) return Status(ErrorCode::kInternal, "cipher context allocation failed");
  std::string out(ct_len, '\0');
  auto* pt = reinterpret_cast<unsigned char*>(out.data());
  int len = 0;
  if (EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kGcmNonceBytes, nullptr) != 1 ||
      EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, Bytes(key), nonce) != 1) {
    return Status(ErrorCode::kInternal, "decryption failed");
  }
  if (ct_len > 0 && EVP_DecryptUpdate(ctx.get(), pt, &len, ct, static_cast<int>(ct_len)) != 1) {
    return Status(ErrorCode::kInvalid, "decryption failed");
  }
  int total = len;
  if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kGcmTagBytes, tag.data()) != 1) {
    return Status(ErrorCode::kInternal, "decryption failed");
  }
  unsigned char final_block[16];
  if (EVP_DecryptFinal_ex(ctx.get(), ct_len > 0 ? pt + total : final_block, &len) != 1) {
    return Status(ErrorCode::kInvalid, "ciphertext authentication failed");
  }
  total += len;
  out.resize(static_cast<size_t>(total));
  return out;
}

}  // namespace rendezvous::crypto
