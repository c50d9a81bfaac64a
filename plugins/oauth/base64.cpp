#include "base64.hpp"

#include <array>
#include <cstdint>

namespace rendezvous::oauth {
namespace {

constexpr char kUrl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int StdValue(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::optional<std::string> Base64DecodeStrict(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int pad = 0;
    if (last && text[i + 3] == '=') pad = text[i + 2] == '=' ? 2 : 1;
    std::array<int, 4> v{};
    for (int j = 0; j < 4 - pad; ++j) {
      v[j] = StdValue(text[i + j]);
      if (v[j] < 0) return std::nullopt;
    }
    const uint32_t n = (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) |
                       uint32_t(v[3]);
    out.push_back(char((n >> 16) & 0xff));
    if (pad == 2) {
      if ((n & 0xffff) != 0) return std::nullopt;  // non-canonical trailing bits
      break;
    }
    out.push_back(char((n >> 8) & 0xff));
    if (pad == 1) {
      if ((n & 0xff) != 0) return std::nullopt;
      break;
    }
    out.push_back(char(n & 0xff));
  }
  return out;
}

std::string Base64UrlEncode(std::string_view raw) {
  std::string out;
  out.reserve((raw.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= raw.size(); i += 3) {
    const uint32_t n = (uint32_t(uint8_t(raw[i])) << 16) | (uint32_t(uint8_t(raw[i + 1])) << 8) |
                       uint32_t(uint8_t(raw[i + 2]));
    out.push_back(kUrl[(n >> 18) & 63]);
    out.push_back(kUrl[(n >> 12) & 63]);
    out.push_back(kUrl[(n >> 6) & 63]);
    out.push_back(kUrl[n & 63]);
  }
  const size_t rest = raw.size() - i;
  if (rest > 0) {
    uint32_t n = uint32_t(uint8_t(raw[i])) << 16;
    if (rest == 2) n |= uint32_t(uint8_t(raw[i + 1])) << 8;
    out.push_back(kUrl[(n >> 18) & 63]);
    out.push_back(kUrl[(n >> 12) & 63]);
    if (rest == 2) out.push_back(kUrl[(n >> 6) & 63]);
  }
  return out;
}

}  // namespace rendezvous::oauth
