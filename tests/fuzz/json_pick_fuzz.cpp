// libFuzzer target: json_pick (rendezvous/json_pick.hpp), the outbox's reader of a few members of
// an event's JSON, fed any text. It must judge the text as nlohmann's parser does (one well-formed
// value, or nothing; a NUL byte is never well-formed), and on every well-formed text give, for
// each path, the scalar the parsed tree holds there (its JSON pointer's) and a discarded value
// where the tree has nothing or an object or an array. The paths are fixed ones plus those of
// every value written in the text (also one a later duplicate member replaces) and variants of
// them (a missing last member, an index written "01", one level deeper), over 64 of them at
// times, so that more than one walk is made. A text nested deeper than kMaxPickDepth, or with a
// number's exponent of 20 digits or more, gives nothing.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rendezvous/json_pick.hpp"

namespace {

using nlohmann::json;
using rendezvous::json::JsonPath;

constexpr size_t kMaxTreePaths = 90;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// The paths of the values the text holds, in the order they are written, also those a later
// duplicate member hides in the parsed tree: at most kMaxTreePaths of them, none deeper than
// kMaxPathDepth.
class PathCollector final : public nlohmann::json_sax<json> {
 public:
  explicit PathCollector(std::vector<JsonPath>& out) : out_(out) {}

  // The deepest nesting of objects and arrays seen.
  size_t Depth() const { return deepest_; }
  // Whether a number has an exponent of 20 digits or more.
  bool LongExponent() const { return long_exponent_; }

  bool null() override { return Scalar(); }
  bool boolean(bool) override { return Scalar(); }
  bool number_integer(number_integer_t) override { return Scalar(); }
  bool number_unsigned(number_unsigned_t) override { return Scalar(); }
  bool number_float(number_float_t, const string_t& text) override {
    // simdjson refuses an exponent of 20 digits or more (nlohmann reads 1e-00000000000000000001).
    const size_t e = text.find_first_of("eE");
    if (e != std::string::npos) {
      const size_t digits = text.find_first_of("0123456789", e);
      if (digits != std::string::npos && text.size() - digits >= 20) long_exponent_ = true;
    }
    return Scalar();
  }
  bool string(string_t&) override { return Scalar(); }
  bool binary(binary_t&) override { return Scalar(); }
  bool start_object(std::size_t) override { return Open(false); }
  bool start_array(std::size_t) override { return Open(true); }
  bool key(string_t& name) override {
    key_ = name;
    return true;
  }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  static constexpr size_t kMaxPathDepth = 12;

  struct Level {
    bool array;
    size_t next_index;
  };

  // The path of the value starting now, recorded (nullopt below kMaxPathDepth).
  std::optional<JsonPath> Here() {
    if (levels_.size() > kMaxPathDepth) return std::nullopt;
    JsonPath path = container_;
    if (!levels_.empty()) {
      Level& level = levels_.back();
      path.push_back(level.array ? std::to_string(level.next_index++) : key_);
    }
    if (out_.size() < kMaxTreePaths) out_.push_back(path);
    return path;
  }

  bool Scalar() {
    Here();
    return true;
  }

  bool Open(bool array) {
    const std::optional<JsonPath> path = Here();
    levels_.push_back({array, 0});
    deepest_ = std::max(deepest_, levels_.size());
    if (path) container_ = *path;
    return true;
  }

  bool Close() {
    levels_.pop_back();
    if (!levels_.empty() && levels_.size() <= kMaxPathDepth) container_.pop_back();
    return true;
  }

  std::vector<JsonPath>& out_;
  std::vector<Level> levels_;
  JsonPath container_;  // the innermost container's path, while it is within kMaxPathDepth
  std::string key_;
  size_t deepest_ = 0;
  bool long_exponent_ = false;
};

// The paths to ask for in `text`, and whether PickScalars refuses it anyway (`refused`: nested
// deeper than kMaxPickDepth, or a number's exponent of 20 digits or more).
std::vector<JsonPath> PathsFor(std::string_view text, bool& refused) {
  std::vector<JsonPath> paths = {
      {}, {"a"}, {"a", "b"}, {"0"}, {"1", "0"}, {"-1"}, {"payload", "id"}, {"00"}, {"\xC3\xA9"}, {""}};
  std::vector<JsonPath> nodes;
  PathCollector collector(nodes);
  json::sax_parse(text, &collector);
  refused = collector.Depth() > rendezvous::json::kMaxPickDepth || collector.LongExponent();
  for (const JsonPath& p : nodes) {
    paths.push_back(p);
    if (p.empty()) continue;
    JsonPath missing = p;
    missing.back() += "~missing";
    paths.push_back(missing);
    JsonPath deeper = p;
    deeper.push_back("0");
    paths.push_back(deeper);
    if (!p.back().empty() && p.back().find_first_not_of("0123456789") == std::string::npos) {
      JsonPath padded = p;
      padded.back() = "0" + padded.back();
      paths.push_back(padded);
    }
  }
  return paths;
}

// The tree's scalar at `path` (json_pointer semantics: an array index is canonical decimal), or
// nullopt where there is none or an object or an array.
std::optional<json> TreeScalar(const json& tree, const JsonPath& path) {
  const json* node = &tree;
  for (const std::string& step : path) {
    if (node->is_object()) {
      const auto it = node->find(step);
      if (it == node->end()) return std::nullopt;
      node = &*it;
    } else if (node->is_array()) {
      if (step.empty() || step.size() > 18 || (step.size() > 1 && step[0] == '0') ||
          step.find_first_not_of("0123456789") != std::string::npos) {
        return std::nullopt;
      }
      const size_t index = std::stoull(step);
      if (index >= node->size()) return std::nullopt;
      node = &(*node)[index];
    } else {
      return std::nullopt;
    }
  }
  if (node->is_structured()) return std::nullopt;
  return *node;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // nlohmann's parser takes a NUL byte after the value as the end of the text; to json_pick (as to
  // RFC 8259) a NUL byte anywhere makes the text ill-formed.
  const bool accepted = text.find('\0') == std::string_view::npos && json::accept(text);
  if (!accepted) {
    Check(!rendezvous::json::PickScalars(text, {{"a"}, {"0"}}).has_value());
    Check(!rendezvous::json::PickScalars(text, {}).has_value());
    return 0;
  }
  bool refused = false;
  const std::vector<JsonPath> paths = PathsFor(text, refused);
  const std::optional<std::vector<json>> picked = rendezvous::json::PickScalars(text, paths);
  if (refused) {
    Check(!picked.has_value());
    return 0;
  }
  const json tree = json::parse(text);
  Check(picked.has_value() && picked->size() == paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::optional<json> expected = TreeScalar(tree, paths[i]);
    const json& got = (*picked)[i];
    if (!expected) {
      Check(got.is_discarded());
    } else {
      // The same type of number too: an integer is kept as nlohmann keeps it.
      Check(!got.is_discarded() && got == *expected && got.type() == expected->type());
    }
  }
  return 0;
}
