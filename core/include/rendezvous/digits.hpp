// Reading numbers written in decimal: the one parser of numbers that come from outside (path ids,
// query parameters, command-line arguments). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace rendezvous::text {

// A decimal integer written in ASCII digits alone (no sign, space or other byte), at most 18 of
// them, within [min, max]; nullopt for anything else.
std::optional<int64_t> ParseDigits(std::string_view s, int64_t min = 0,
                                   int64_t max = std::numeric_limits<int64_t>::max());

}  // namespace rendezvous::text
