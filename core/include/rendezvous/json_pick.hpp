// A few values of a JSON text read without building its tree: one walk of simdjson's On-Demand
// parser that reads every value and keeps the scalars found at the paths asked for and nothing
// else. For readers that need two or three members of a large document and the whole of it rarely
// (an outbox event's routing members). Pure function; thread-safe (each thread reads with a parser
// of its own).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace rendezvous::json {

// A path from the root: object member names, and array indexes written in decimal ("0" is an
// array's first element).
using JsonPath = std::vector<std::string>;

// The deepest nesting of objects and arrays read (the walk recurses once a level).
constexpr size_t kMaxPickDepth = 1024;

// The values at `paths` in `text`, in their order: a string, number, boolean or null where the path
// leads to one; a discarded value (is_discarded()) where it leads nowhere or to an object or an
// array. A member that occurs twice counts as its last occurrence, as in a parsed tree. nullopt
// when `text` is not one well-formed JSON value (checked to its end: a NUL byte after the value,
// where nlohmann's parser stops reading, makes it ill-formed too) or nests objects and arrays
// deeper than kMaxPickDepth.
std::optional<std::vector<nlohmann::json>> PickScalars(std::string_view text,
                                                       const std::vector<JsonPath>& paths);

}  // namespace rendezvous::json
