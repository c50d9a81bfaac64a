#include "rendezvous/digits.hpp"

namespace rendezvous::text {

std::optional<int64_t> ParseDigits(std::string_view s, int64_t min, int64_t max) {
  constexpr size_t kMaxDigits = 18;  // 10^18 - 1 fits in int64_t
  if (s.empty() || s.size() > kMaxDigits) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v < min || v > max) return std::nullopt;
  return v;
}

}  // namespace rendezvous::text
