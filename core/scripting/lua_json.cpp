#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "scripting/lua_runtime.hpp"

namespace rendezvous::core {
namespace {

// Its address is the identity of json.null; the value is never read.
const char kJsonNullTag = 0;

bool IsJsonNull(lua_State* L, int index) {
  return lua_type(L, index) == LUA_TLIGHTUSERDATA &&
         lua_touserdata(L, index) == static_cast<const void*>(&kJsonNullTag);
}

Status Invalid(std::string message) { return Status(ErrorCode::kInvalid, std::move(message)); }

}  // namespace

void PushJsonNull(lua_State* L) {
  lua_pushlightuserdata(L, const_cast<char*>(&kJsonNullTag));
}

void LuaKeyCache::Push(lua_State* L, int strings, std::string_view key) {
  if (key.size() > kMaxKeyBytes) {
    lua_pushlstring(L, key.data(), key.size());
    return;
  }
  // The length and the first and last eight bytes (overlapping for short keys): few keys of one
  // event share all three, and the bytes are compared on a hit anyway.
  std::uint64_t head = 0, tail = 0;
  if (key.size() >= 8) {
    std::memcpy(&head, key.data(), 8);
    std::memcpy(&tail, key.data() + key.size() - 8, 8);
  } else {
    std::memcpy(&head, key.data(), key.size());
  }
  const std::uint64_t mixed = (head * 0x9E3779B97F4A7C15ull) ^ (tail * 0xC2B2AE3D27D4EB4Full) ^ key.size();
  const auto hash = static_cast<std::uint32_t>((mixed ^ (mixed >> 29)) * 0xBF58476D1CE4E5B9ull >> 32);
  int slot = static_cast<int>(hash & (kSlots - 1));
  for (; slots_[slot] != 0; slot = (slot + 1) & (kSlots - 1)) {
    const int index = slots_[slot] - 1;
    const Entry& e = entries_[index];
    if (e.hash == hash && e.size == key.size() && std::memcmp(e.bytes, key.data(), key.size()) == 0) {
      lua_rawgeti(L, strings, index + 1);
      return;
    }
  }
  lua_pushlstring(L, key.data(), key.size());
  if (used_ == kMaxKeys) return;
  lua_pushvalue(L, -1);
  lua_rawseti(L, strings, used_ + 1);  // may raise: the cache learns the key only once it is kept
  Entry& e = entries_[used_];
  e.hash = hash;
  e.size = static_cast<std::uint8_t>(key.size());
  std::memcpy(e.bytes, key.data(), key.size());
  slots_[slot] = static_cast<std::int16_t>(++used_);
}

namespace {

// Only trivially destructible locals (iterators, references) live in these frames: a Lua error
// longjmps over them. `keys` is null, or a cache whose strings table is at stack index `strings`.
void PushValue(lua_State* L, const nlohmann::json& value, int depth, LuaKeyCache* keys, int strings) {
  if (depth > kLuaJsonMaxDepth) luaL_error(L, "JSON nesting deeper than %d", kLuaJsonMaxDepth);
  // A container holds its table, a key and a member's value on the stack, and a member that is a
  // container checks for its own: scalars below the top level need no check of their own.
  if (depth == 0 || value.is_array() || value.is_object()) luaL_checkstack(L, 3, "JSON value too deep");
  switch (value.type()) {
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded:
      if (depth == 0) {
        lua_pushnil(L);
      } else {
        PushJsonNull(L);
      }
      return;
    case nlohmann::json::value_t::boolean:
      lua_pushboolean(L, value.get<bool>() ? 1 : 0);
      return;
    case nlohmann::json::value_t::number_integer:
      lua_pushinteger(L, static_cast<lua_Integer>(value.get<std::int64_t>()));
      return;
    case nlohmann::json::value_t::number_unsigned: {
      const std::uint64_t u = value.get<std::uint64_t>();
      if (u <= static_cast<std::uint64_t>(std::numeric_limits<lua_Integer>::max())) {
        lua_pushinteger(L, static_cast<lua_Integer>(u));
      } else {
        lua_pushnumber(L, static_cast<lua_Number>(u));
      }
      return;
    }
    case nlohmann::json::value_t::number_float:
      lua_pushnumber(L, static_cast<lua_Number>(value.get<double>()));
      return;
    case nlohmann::json::value_t::string: {
      const std::string& s = value.get_ref<const std::string&>();
      lua_pushlstring(L, s.data(), s.size());
      return;
    }
    case nlohmann::json::value_t::binary: {
      const auto& bytes = value.get_binary();
      lua_pushlstring(L, reinterpret_cast<const char*>(bytes.data()), bytes.size());
      return;
    }
    case nlohmann::json::value_t::array: {
      const int n = value.size() > static_cast<size_t>(std::numeric_limits<int>::max())
                        ? std::numeric_limits<int>::max()
                        : static_cast<int>(value.size());
      lua_createtable(L, n, 0);
      lua_Integer i = 1;
      for (auto it = value.begin(); it != value.end(); ++it, ++i) {
        PushValue(L, *it, depth + 1, keys, strings);
        lua_rawseti(L, -2, i);
      }
      return;
    }
    case nlohmann::json::value_t::object: {
      const int n = value.size() > static_cast<size_t>(std::numeric_limits<int>::max())
                        ? std::numeric_limits<int>::max()
                        : static_cast<int>(value.size());
      lua_createtable(L, 0, n);
      for (auto it = value.begin(); it != value.end(); ++it) {
        if (it->is_null()) continue;  // a nil member is an absent key in Lua
        const std::string& key = it.key();
        if (keys != nullptr) {
          keys->Push(L, strings, key);
        } else {
          lua_pushlstring(L, key.data(), key.size());
        }
        PushValue(L, *it, depth + 1, keys, strings);
        lua_rawset(L, -3);
      }
      return;
    }
  }
  lua_pushnil(L);
}

// The registry key of a state's table of cached key strings (its address).
char key_strings_key;

}  // namespace

void PushJson(lua_State* L, const nlohmann::json& value, int depth) {
  PushValue(L, value, depth, nullptr, 0);
}

void PushJson(lua_State* L, const nlohmann::json& value, LuaKeyCache& keys) {
  luaL_checkstack(L, 2, "JSON value too deep");
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &key_strings_key) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_createtable(L, 0, 0);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &key_strings_key);
  }
  const int strings = lua_gettop(L);
  PushValue(L, value, 0, &keys, strings);
  lua_remove(L, strings);
}

namespace {

// What a conversion may still produce: each value counts kNodeBytes, strings and keys their bytes
// too. A table that refers to one long string many times, or to the same table from many places
// (a doubling chain is 2^depth values), is bounded so, not only by the Lua memory it occupies.
struct OutputBudget {
  size_t left;
  size_t limit;
};
constexpr size_t kNodeBytes = 16;

Result<nlohmann::json> Convert(lua_State* L, int index, int depth, OutputBudget& budget);

bool Spend(OutputBudget& budget, size_t bytes) {
  if (bytes > budget.left) return false;
  budget.left -= bytes;
  return true;
}

Status TooLarge(const OutputBudget& budget) {
  return Invalid("value larger than " + std::to_string(budget.limit) + " bytes as JSON");
}

}  // namespace

Result<nlohmann::json> ToJson(lua_State* L, int index, int depth) {
  OutputBudget unlimited{SIZE_MAX, SIZE_MAX};
  return Convert(L, index, depth, unlimited);
}

Result<nlohmann::json> ToJsonWithin(lua_State* L, int index, size_t max_bytes) {
  OutputBudget budget{max_bytes, max_bytes};
  return Convert(L, index, 0, budget);
}

namespace {

Result<nlohmann::json> Convert(lua_State* L, int index, int depth, OutputBudget& budget) {
  if (!Spend(budget, kNodeBytes)) return TooLarge(budget);
  if (depth > kLuaJsonMaxDepth)
    return Invalid("value nested deeper than " + std::to_string(kLuaJsonMaxDepth) +
                   " levels (or a table cycle)");
  index = lua_absindex(L, index);
  switch (lua_type(L, index)) {
    case LUA_TNIL:
    case LUA_TNONE:
      return nlohmann::json(nullptr);
    case LUA_TBOOLEAN:
      return nlohmann::json(lua_toboolean(L, index) != 0);
    case LUA_TNUMBER: {
      if (lua_isinteger(L, index))
        return nlohmann::json(static_cast<std::int64_t>(lua_tointeger(L, index)));
      const double d = static_cast<double>(lua_tonumber(L, index));
      if (!std::isfinite(d)) return Invalid("number is NaN or infinite: not representable in JSON");
      return nlohmann::json(d);
    }
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, index, &len);  // a real string: no conversion, no allocation
      if (!Spend(budget, len)) return TooLarge(budget);
      return nlohmann::json(std::string(s, len));
    }
    case LUA_TLIGHTUSERDATA:
      if (IsJsonNull(L, index)) return nlohmann::json(nullptr);
      return Invalid("cannot convert a userdata value to JSON");
    case LUA_TTABLE:
      break;
    default:
      return Invalid(std::string("cannot convert a ") + lua_typename(L, lua_type(L, index)) +
                     " value to JSON");
  }

  // The key and value of lua_next, plus one slot for lua_rawgeti.
  if (!lua_checkstack(L, 3)) return Invalid("Lua stack exhausted while converting to JSON");

  // First pass: classify the keys.
  lua_Integer count = 0;
  lua_Integer max_index = 0;
  bool has_string_key = false;
  bool has_integer_key = false;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    lua_pop(L, 1);  // the value; the key stays for lua_next
    ++count;
    if (lua_type(L, -1) == LUA_TSTRING) {
      has_string_key = true;
    } else if (lua_type(L, -1) == LUA_TNUMBER && lua_isinteger(L, -1) && lua_tointeger(L, -1) > 0) {
      has_integer_key = true;
      if (lua_tointeger(L, -1) > max_index) max_index = lua_tointeger(L, -1);
    } else {
      lua_pop(L, 1);
      return Invalid("table key is neither a string nor a positive integer: not representable in JSON");
    }
  }
  if (has_string_key && has_integer_key) {
    return Invalid("table mixes string and integer keys: not representable in JSON");
  }

  if (has_integer_key) {
    if (max_index != count) return Invalid("table is a sparse array (keys are not 1..n); use json.null for holes");
    nlohmann::json array = nlohmann::json::array();
    for (lua_Integer i = 1; i <= count; ++i) {
      lua_rawgeti(L, index, i);
      Result<nlohmann::json> item = Convert(L, -1, depth + 1, budget);
      lua_pop(L, 1);
      if (!item.ok()) return item.status();
      array.push_back(std::move(item).value());
    }
    return array;
  }

  nlohmann::json object = nlohmann::json::object();
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    Result<nlohmann::json> item = Convert(L, -1, depth + 1, budget);
    lua_pop(L, 1);
    if (!item.ok()) {
      lua_pop(L, 1);
      return item.status();
    }
    size_t len = 0;
    const char* key = lua_tolstring(L, -1, &len);  // a string key (checked above): no conversion
    if (!Spend(budget, len)) {
      lua_pop(L, 1);
      return TooLarge(budget);
    }
    object[std::string(key, len)] = std::move(item).value();
  }
  return object;
}

}  // namespace

}  // namespace rendezvous::core
