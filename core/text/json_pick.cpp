#include "rendezvous/json_pick.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

namespace rendezvous::json {
namespace {

using Json = nlohmann::json;
namespace od = simdjson::ondemand;

// simdjson reads up to SIMDJSON_PADDING bytes past the text: a thread copies each text into a
// buffer of its own with that room. Texts up to kKeptBytes reuse the thread's buffer and parser
// (whose indexes grow to the longest text read); a longer one gets both for its call alone, so
// what a thread keeps between calls stays bounded.
constexpr size_t kKeptBytes = size_t{1} << 20;

struct Reader {
  od::parser parser;
  std::unique_ptr<char[]> buffer;
  size_t capacity = 0;  // of `buffer`, padding left out

  // `text` in the buffer as the one element of an array, "[" text "]", followed by zeroed padding.
  // Every value of the text is then read as a value inside an array: simdjson's readers of a
  // document's root scalar check less (trailing whitespace, a bare word), the array's reader checks
  // that one value fills it.
  std::string_view Wrapped(std::string_view text) {
    const size_t size = text.size() + 2;
    if (capacity < size || !buffer) {
      capacity = std::max<size_t>(size, 4096);
      buffer = std::make_unique<char[]>(capacity + simdjson::SIMDJSON_PADDING);
    }
    buffer[0] = '[';
    std::memcpy(buffer.get() + 1, text.data(), text.size());
    buffer[size - 1] = ']';
    std::memset(buffer.get() + size, 0, simdjson::SIMDJSON_PADDING);
    return {buffer.get(), size};
  }
};

// A path step that names an array element ("0", "12"; not "01" or "-1"), else -1.
int64_t CanonicalIndex(const std::string& step) {
  if (step.empty() || step.size() > 18 || (step.size() > 1 && step[0] == '0')) return -1;
  int64_t n = 0;
  for (char c : step) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

// One walk of the whole document with simdjson On-Demand: every value is read (a member name or a
// string unescaped, a number converted), so the text is checked to its end as a parser that
// builds the tree checks it, but a value is built only where a path ends. Which paths still lead
// through the value at hand is a bit set (at most 64 paths a walk), so a value off every path
// costs no comparison.
class Walker {
 public:
  Walker(const std::vector<JsonPath>& paths, size_t first, size_t count, std::vector<Json>& values)
      : paths_(paths), first_(first), count_(count), values_(values) {
    index_.resize(count);
    for (size_t i = 0; i < count; ++i) {
      for (const std::string& step : paths[first + i]) index_[i].push_back(CanonicalIndex(step));
    }
  }

  // The text's value is the one element of the document's array (Reader::Wrapped).
  bool Run(od::document& doc) {
    const uint64_t all = count_ == 64 ? ~uint64_t{0} : (uint64_t{1} << count_) - 1;
    od::array wrapper;
    if (doc.get_array().get(wrapper) != simdjson::SUCCESS) return false;
    size_t elements = 0;
    for (auto item : wrapper) {
      if (++elements > 1 || item.error() != simdjson::SUCCESS) return false;
      od::value element = item.value_unsafe();
      if (!Value(element, all, 0)) return false;
    }
    // One element, and nothing after the array: the location past the last token is out of bounds.
    return elements == 1 && doc.current_location().error() == simdjson::OUT_OF_BOUNDS;
  }

 private:
  const JsonPath& PathOf(size_t bit) const { return paths_[first_ + bit]; }

  // The value at hand at `depth`, reached by the paths in `on`: a
  // scalar is kept where a path ends at it and clears what an earlier occurrence (a duplicate
  // member) left on the longer paths; a container clears every path through it, then reads its
  // members with the paths that go deeper.
  bool Value(od::value& v, uint64_t on, size_t depth) {
    od::json_type type;
    if (v.type().get(type) != simdjson::SUCCESS) return false;
    if (type == od::json_type::object || type == od::json_type::array) {
      if (depth >= kMaxPickDepth) return false;
      uint64_t deeper = 0;
      for (uint64_t m = on; m != 0; m &= m - 1) {
        const auto bit = static_cast<size_t>(__builtin_ctzll(m));
        values_[first_ + bit] = Json(Json::value_t::discarded);
        if (PathOf(bit).size() > depth) deeper |= uint64_t{1} << bit;
      }
      return type == od::json_type::object ? Object(v, deeper, depth) : Array(v, deeper, depth);
    }
    // Paths that end here get the value; longer ones through here get nothing.
    uint64_t ending = 0;
    for (uint64_t m = on; m != 0; m &= m - 1) {
      const auto bit = static_cast<size_t>(__builtin_ctzll(m));
      if (PathOf(bit).size() == depth) {
        ending |= uint64_t{1} << bit;
      } else {
        values_[first_ + bit] = Json(Json::value_t::discarded);
      }
    }
    Json value;
    if (!Scalar(v, type, ending != 0, value)) return false;
    for (uint64_t m = ending; m != 0; m &= m - 1) {
      values_[first_ + static_cast<size_t>(__builtin_ctzll(m))] = value;
    }
    return true;
  }

  bool Object(od::value& v, uint64_t deeper, size_t depth) {
    od::object object;
    if (v.get_object().get(object) != simdjson::SUCCESS) return false;
    for (auto member : object) {
      od::field field;
      std::string_view name;
      if (std::move(member).get(field) != simdjson::SUCCESS ||
          field.unescaped_key().get(name) != simdjson::SUCCESS) {
        return false;
      }
      uint64_t on = 0;
      for (uint64_t m = deeper; m != 0; m &= m - 1) {
        const auto bit = static_cast<size_t>(__builtin_ctzll(m));
        if (PathOf(bit)[depth] == name) on |= uint64_t{1} << bit;
      }
      if (!Value(field.value(), on, depth + 1)) return false;
    }
    return true;
  }

  bool Array(od::value& v, uint64_t deeper, size_t depth) {
    od::array array;
    if (v.get_array().get(array) != simdjson::SUCCESS) return false;
    int64_t index = -1;
    for (auto item : array) {
      if (item.error() != simdjson::SUCCESS) return false;
      od::value element = item.value_unsafe();
      ++index;
      uint64_t on = 0;
      for (uint64_t m = deeper; m != 0; m &= m - 1) {
        const auto bit = static_cast<size_t>(__builtin_ctzll(m));
        if (index_[bit][depth] == index) on |= uint64_t{1} << bit;
      }
      if (!Value(element, on, depth + 1)) return false;
    }
    return true;
  }

  // A string, number, boolean or null, checked whole; in `value` when `keep`. A number is kept as
  // nlohmann keeps it: an integer in int64 (negative) or uint64 (not negative) when it fits, else
  // a double; a number beyond double's range is not well-formed there.
  static bool Scalar(od::value& v, od::json_type type, bool keep, Json& value) {
    switch (type) {
      case od::json_type::string: {
        std::string_view s;
        if (v.get_string().get(s) != simdjson::SUCCESS) return false;
        if (keep) value = std::string(s);
        return true;
      }
      case od::json_type::boolean: {
        bool b = false;
        if (v.get_bool().get(b) != simdjson::SUCCESS) return false;
        if (keep) value = b;
        return true;
      }
      case od::json_type::null: {
        bool null = false;
        if (v.is_null().get(null) != simdjson::SUCCESS || !null) return false;
        if (keep) value = nullptr;
        return true;
      }
      case od::json_type::number: {
        od::number_type kind;
        if (v.get_number_type().get(kind) != simdjson::SUCCESS) return false;
        if (kind != od::number_type::floating_point_number) {
          // An integer that does not fit (INCORRECT_TYPE) is read as a double below.
          if (v.is_negative()) {
            int64_t n = 0;
            const simdjson::error_code e = v.get_int64().get(n);
            if (e == simdjson::SUCCESS) {
              if (keep) value = n;
              return true;
            }
            if (e != simdjson::INCORRECT_TYPE) return false;
          } else {
            uint64_t n = 0;
            const simdjson::error_code e = v.get_uint64().get(n);
            if (e == simdjson::SUCCESS) {
              if (keep) value = n;
              return true;
            }
            if (e != simdjson::INCORRECT_TYPE) return false;
          }
        }
        // simdjson checks the number; a kept one is converted by strtod, as nlohmann's parser
        // converts it (simdjson 3.0's own conversion is off for some numbers of more than 19
        // digits after "0.": its issue 2093).
        const std::string_view token = v.raw_json_token();
        double d = 0;
        if (v.get_double().get(d) != simdjson::SUCCESS || !std::isfinite(d)) return false;
        if (keep) {
          const std::string digits(token.substr(0, token.find_first_of(" \t\r\n,]}")));
          d = std::strtod(digits.c_str(), nullptr);
          if (!std::isfinite(d)) return false;
          value = d;
        }
        return true;
      }
      default:
        return false;
    }
  }

  const std::vector<JsonPath>& paths_;
  const size_t first_;
  const size_t count_;
  std::vector<Json>& values_;
  std::vector<std::vector<int64_t>> index_;  // each path step as an array index, or -1
};

bool Pick(Reader& reader, std::string_view text, const std::vector<JsonPath>& paths,
          std::vector<Json>& values) {
  const std::string_view wrapped = reader.Wrapped(text);
  // 64 paths a walk (one bit each); one walk checks the text even with no path.
  size_t first = 0;
  do {
    const size_t count = std::min<size_t>(64, paths.size() - first);
    od::document doc;
    if (reader.parser.iterate(wrapped, wrapped.size() + simdjson::SIMDJSON_PADDING).get(doc) !=
        simdjson::SUCCESS) {
      return false;
    }
    if (!Walker(paths, first, count, values).Run(doc)) return false;
    first += count;
  } while (first < paths.size());
  return true;
}

}  // namespace

std::optional<std::vector<nlohmann::json>> PickScalars(std::string_view text,
                                                       const std::vector<JsonPath>& paths) {
  // A UTF-8 byte order mark before the value is skipped, as nlohmann's parser does.
  if (text.size() >= 3 && std::memcmp(text.data(), "\xEF\xBB\xBF", 3) == 0) text.remove_prefix(3);
  std::vector<Json> values(paths.size(), Json(Json::value_t::discarded));
  bool ok = false;
  if (text.size() <= kKeptBytes) {
    thread_local Reader reader;
    ok = Pick(reader, text, paths, values);
  } else {
    Reader reader;
    ok = Pick(reader, text, paths, values);
  }
  if (!ok) return std::nullopt;
  return values;
}

}  // namespace rendezvous::json
