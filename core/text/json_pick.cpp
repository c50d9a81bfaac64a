#include "rendezvous/json_pick.hpp"

#include <cstdint>
#include <utility>

namespace rendezvous::json {
namespace {

// nlohmann's SAX interface. The path to the value at hand is a stack of frames (an object's
// current member name, an array's current index); a scalar is compared with the paths only when
// its depth is theirs.
class Picker {
 public:
  using Json = nlohmann::json;

  explicit Picker(const std::vector<JsonPath>& paths)
      : paths_(paths), values_(paths.size(), Json(Json::value_t::discarded)) {}

  bool null() {
    return Scalar([] { return Json(nullptr); });
  }
  bool boolean(bool v) {
    return Scalar([v] { return Json(v); });
  }
  bool number_integer(Json::number_integer_t v) {
    return Scalar([v] { return Json(v); });
  }
  bool number_unsigned(Json::number_unsigned_t v) {
    return Scalar([v] { return Json(v); });
  }
  bool number_float(Json::number_float_t v, const Json::string_t& /*text*/) {
    return Scalar([v] { return Json(v); });
  }
  bool string(Json::string_t& v) {
    return Scalar([&v] { return Json(v); });
  }
  bool binary(Json::binary_t& /*v*/) {
    return Scalar([] { return Json(Json::value_t::discarded); });
  }
  bool start_object(std::size_t /*n*/) {
    Container();
    frames_.push_back(Frame{});
    return true;
  }
  bool key(Json::string_t& k) {
    frames_.back().name.assign(k);
    return true;
  }
  bool end_object() {
    frames_.pop_back();
    return true;
  }
  bool start_array(std::size_t /*n*/) {
    Container();
    frames_.push_back(Frame{true, -1, {}});
    return true;
  }
  bool end_array() {
    frames_.pop_back();
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*e*/) {
    return false;
  }

  std::vector<Json> Take() { return std::move(values_); }

 private:
  struct Frame {
    bool array = false;
    int64_t index = 0;  // an array's current element
    std::string name;   // an object's current member, or the array's index in decimal
  };

  // A value starts: in an array, it is the next element.
  void Step() {
    if (!frames_.empty() && frames_.back().array) {
      ++frames_.back().index;
      frames_.back().name = std::to_string(frames_.back().index);
    }
  }
  // A value replaces whatever an earlier occurrence of its member left on the paths through it
  // (the last occurrence counts); a scalar is kept where a path ends at it.
  template <class MakeValue>
  bool Scalar(MakeValue&& make) {
    Step();
    for (size_t i = 0; i < paths_.size(); ++i) {
      if (!Under(paths_[i])) continue;
      values_[i] = paths_[i].size() == frames_.size() ? make() : Json(Json::value_t::discarded);
    }
    return true;
  }
  void Container() {
    Step();
    for (size_t i = 0; i < paths_.size(); ++i) {
      if (Under(paths_[i])) values_[i] = Json(Json::value_t::discarded);
    }
  }
  // The value at hand is on `path` (at its end or above it).
  bool Under(const JsonPath& path) const {
    if (path.size() < frames_.size()) return false;
    for (size_t d = 0; d < frames_.size(); ++d) {
      if (frames_[d].name != path[d]) return false;
    }
    return true;
  }

  const std::vector<JsonPath>& paths_;
  std::vector<Json> values_;
  std::vector<Frame> frames_;
};

}  // namespace

std::optional<std::vector<nlohmann::json>> PickScalars(std::string_view text,
                                                       const std::vector<JsonPath>& paths) {
  Picker picker(paths);
  if (!nlohmann::json::sax_parse(text.begin(), text.end(), &picker)) return std::nullopt;
  return picker.Take();
}

}  // namespace rendezvous::json
