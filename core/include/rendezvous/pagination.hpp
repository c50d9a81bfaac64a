// Pagination of lists: every list of the API reads `skip` and `take` the same way and answers
// `data = [..]` with `pagination: {total, skip, take}` beside it. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "rendezvous/status.hpp"

namespace rendezvous {

// Where a list's answer starts and how many items it holds.
struct Pagination {
  int64_t skip = 0;
  int64_t take = 0;

  // {"total": total, "skip": skip, "take": take}
  nlohmann::json ToJson(int64_t total) const;
};

// A list's bounds: `take` is default_take when not given.
struct PaginationLimits {
  int64_t default_take = 100;
  int64_t max_take = 250;
  int64_t max_skip = 1000000;
};

// Reads the `skip` (0..max_skip, default 0) and `take` (1..max_take) query parameters: a
// parameter given twice, or not such an integer, is 400 naming it.
Result<Pagination> ParsePagination(const std::multimap<std::string, std::string>& query,
                                   const PaginationLimits& limits = {});

}  // namespace rendezvous
