#include "rendezvous/pagination.hpp"

#include <optional>
#include <string>
#include <tuple>

#include "rendezvous/digits.hpp"

namespace rendezvous {

nlohmann::json Pagination::ToJson(int64_t total) const {
  return {{"total", total}, {"skip", skip}, {"take", take}};
}

Result<Pagination> ParsePagination(const std::multimap<std::string, std::string>& query,
                                   const PaginationLimits& limits) {
  Pagination page{0, limits.default_take};
  for (auto [name, min, max, out] : {std::tuple{"skip", int64_t{0}, limits.max_skip, &page.skip},
                                     std::tuple{"take", int64_t{1}, limits.max_take, &page.take}}) {
    const size_t given = query.count(name);
    if (given == 0) continue;
    if (given > 1) return Status::Invalid(name, std::string(name) + " must be given once");
    std::optional<int64_t> v = text::ParseDigits(query.find(name)->second, min, max);
    if (!v) {
      return Status::Invalid(name, std::string(name) + " must be an integer between " + std::to_string(min) +
                                       " and " + std::to_string(max));
    }
    *out = *v;
  }
  return page;
}

}  // namespace rendezvous
