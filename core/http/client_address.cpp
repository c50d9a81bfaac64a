#include "http/client_address.hpp"

#include <arpa/inet.h>

#include <charconv>

namespace rendezvous::core {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IsMappedV4(const std::array<uint8_t, 16>& b) {
  for (int i = 0; i < 10; ++i)
    if (b[i] != 0) return false;
  return b[10] == 0xff && b[11] == 0xff;
}

}  // namespace

std::optional<IpAddress> ParseIpAddress(std::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
  if (text.empty() || text.size() > 45) return std::nullopt;
  const std::string s(text);
  IpAddress out;
  if (inet_pton(AF_INET, s.c_str(), out.bytes.data()) == 1) return out;
  std::array<uint8_t, 16> v6{};
  if (inet_pton(AF_INET6, s.c_str(), v6.data()) != 1) return std::nullopt;
  if (IsMappedV4(v6)) {
    for (int i = 0; i < 4; ++i) out.bytes[i] = v6[12 + i];
    return out;
  }
  out.v6 = true;
  out.bytes = v6;
  return out;
}

std::string FormatIpAddress(const IpAddress& address) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(address.v6 ? AF_INET6 : AF_INET, address.bytes.data(), text, sizeof text);
  return text;
}

bool AddressRange::Contains(const IpAddress& address) const {
  if (address.v6 != base.v6) return false;
  int bits = prefix;
  for (size_t i = 0; bits > 0; ++i, bits -= 8) {
    const uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((address.bytes[i] & mask) != base.bytes[i]) return false;
  }
  return true;
}

std::optional<AddressRange> ParseAddressRange(std::string_view text) {
  const size_t slash = text.find('/');
  std::optional<IpAddress> base = ParseIpAddress(text.substr(0, slash));
  if (!base) return std::nullopt;
  const int max_prefix = base->v6 ? 128 : 32;
  AddressRange range{*base, max_prefix};
  if (slash != std::string_view::npos) {
    const std::string_view digits = text.substr(slash + 1);
    int prefix = -1;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
    if (digits.empty() || digits.size() > 3 || ec != std::errc() || end != digits.data() + digits.size() ||
        prefix < 0 || prefix > max_prefix)
      return std::nullopt;
    range.prefix = prefix;
  }
  int bits = range.prefix;
  for (uint8_t& byte : range.base.bytes) {
    byte &= bits >= 8 ? 0xff : bits <= 0 ? 0 : static_cast<uint8_t>(0xff << (8 - bits));
    bits -= 8;
  }
  return range;
}

bool TrustedProxies::Trusts(const IpAddress& address) const {
  for (const AddressRange& r : ranges_)
    if (r.Contains(address)) return true;
  return false;
}

std::string TrustedProxies::ClientAddress(const std::string& peer,
                                          const std::optional<std::string>& forwarded_for) const {
  if (ranges_.empty() || !forwarded_for) return peer;
  std::optional<IpAddress> hop = ParseIpAddress(peer);
  if (!hop || !Trusts(*hop)) return peer;
  std::string client = peer;
  // Right to left: each proxy appended the address it received the request from.
  std::string_view rest = *forwarded_for;
  while (!rest.empty()) {
    const size_t comma = rest.rfind(',');
    const std::string_view entry = Trim(comma == std::string_view::npos ? rest : rest.substr(comma + 1));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(0, comma);
    hop = ParseIpAddress(entry);
    if (!hop) break;
    client = FormatIpAddress(*hop);
    if (!Trusts(*hop)) break;
  }
  return client;
}

}  // namespace rendezvous::core
