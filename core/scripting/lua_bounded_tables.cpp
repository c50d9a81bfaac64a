// The sandbox's table.insert, remove, move, concat and sort: as the Lua 5.4 manual describes, every
// element moved or compared charged to the run's time limit (lua_bounded.hpp).
#include <algorithm>
#include <climits>

#include "scripting/lua_bounded.hpp"

namespace rendezvous::core {
namespace {

// The table functions below read and write with lua_geti/lua_seti (metamethods respected), as
// the library does, and count each element moved.
lua_Integer CheckedLength(lua_State* L, int index) {
  luaL_checktype(L, index, LUA_TTABLE);
  return luaL_len(L, index);
}

int TabInsert(lua_State* L) {
  const lua_Integer size = CheckedLength(L, 1);
  lua_Integer e = size;
  if (e < LUA_MAXINTEGER) ++e;  // the first empty slot
  lua_Integer pos = e;
  switch (lua_gettop(L)) {
    case 2:
      break;
    case 3: {
      pos = luaL_checkinteger(L, 2);
      luaL_argcheck(L, static_cast<lua_Unsigned>(pos) - 1u < static_cast<lua_Unsigned>(e), 2,
                    "position out of bounds");
      Meter meter{L};
      for (lua_Integer i = e; i > pos; --i) {  // move up
        lua_geti(L, 1, i - 1);
        lua_seti(L, 1, i);
        meter.Charge(1);
      }
      break;
    }
    default:
      return luaL_error(L, "wrong number of arguments to 'insert'");
  }
  lua_seti(L, 1, pos);
  return 0;
}

int TabRemove(lua_State* L) {
  const lua_Integer size = CheckedLength(L, 1);
  lua_Integer pos = luaL_optinteger(L, 2, size);
  if (pos != size)
    luaL_argcheck(L, static_cast<lua_Unsigned>(pos) - 1u <= static_cast<lua_Unsigned>(size), 2,
                  "position out of bounds");
  lua_geti(L, 1, pos);
  Meter meter{L};
  for (; pos < size; ++pos) {
    lua_geti(L, 1, pos + 1);
    lua_seti(L, 1, pos);
    meter.Charge(1);
  }
  lua_pushnil(L);
  lua_seti(L, 1, pos);
  return 1;
}

int TabMove(lua_State* L) {
  const lua_Integer f = luaL_checkinteger(L, 2);
  const lua_Integer e = luaL_checkinteger(L, 3);
  const lua_Integer t = luaL_checkinteger(L, 4);
  const int tt = lua_isnoneornil(L, 5) ? 1 : 5;
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, tt, LUA_TTABLE);
  if (e >= f) {
    luaL_argcheck(L, f > 0 || e < LUA_MAXINTEGER + f, 3, "too many elements to move");
    const lua_Integer n = e - f + 1;
    luaL_argcheck(L, t <= LUA_MAXINTEGER - n + 1, 4, "destination wrap around");
    Meter meter{L};
    if (t > e || t <= f || (tt != 1 && lua_compare(L, 1, tt, LUA_OPEQ) == 0)) {
      for (lua_Integer i = 0; i < n; ++i) {
        lua_geti(L, 1, f + i);
        lua_seti(L, tt, t + i);
        meter.Charge(1);
      }
    } else {
      for (lua_Integer i = n - 1; i >= 0; --i) {
        lua_geti(L, 1, f + i);
        lua_seti(L, tt, t + i);
        meter.Charge(1);
      }
    }
  }
  lua_pushvalue(L, tt);
  return 1;
}

void AddConcatField(lua_State* L, luaL_Buffer* b, lua_Integer i) {
  lua_geti(L, 1, i);
  if (lua_isstring(L, -1) == 0)
    luaL_error(L, "invalid value (at index %I) in table for 'concat'", static_cast<LUAI_UACINT>(i));
  luaL_addvalue(b);
}

// Counted too: an __index that is a C function answering "" would otherwise let it loop over any
// range without touching memory.
int TabConcat(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  size_t lsep = 0;
  const char* sep = luaL_optlstring(L, 2, "", &lsep);
  lua_Integer i = luaL_optinteger(L, 3, 1);
  const lua_Integer last = lua_isnoneornil(L, 4) ? luaL_len(L, 1) : luaL_checkinteger(L, 4);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  Meter meter{L};
  for (; i < last; ++i) {
    AddConcatField(L, &b, i);
    luaL_addlstring(&b, sep, lsep);
    meter.Charge(1);
  }
  if (i == last) AddConcatField(L, &b, i);
  luaL_pushresult(&b);
  return 1;
}

// table.sort as a heapsort: at most about 2 n log2(n) comparisons whatever the order function
// answers (Lua's quicksort has no such bound for an inconsistent one), each charged to the meter,
// so a sort of a large table, with the default order or a comparator, stops at the time limit. Not
// stable, like Lua's; an order function that is not a strict order leaves some permutation of the
// values rather than raising.
struct Sorter {
  lua_State* L;
  Meter* meter;
  bool has_order;  // argument 2 is the order function

  // Whether the value at absolute index `a` goes before the one at `b`. Two strings compare in
  // time proportional to their common prefix: charged as such.
  bool Less(int a, int b) {
    size_t cost = 1;
    if (lua_type(L, a) == LUA_TSTRING && lua_type(L, b) == LUA_TSTRING)
      cost += std::min(lua_rawlen(L, a), lua_rawlen(L, b)) / 64;
    meter->Charge(cost);
    if (!has_order) return lua_compare(L, a, b, LUA_OPLT) != 0;
    lua_pushvalue(L, 2);
    lua_pushvalue(L, a);
    lua_pushvalue(L, b);
    lua_call(L, 2, 1);
    const bool less = lua_toboolean(L, -1) != 0;
    lua_pop(L, 1);
    return less;
  }

  // Places the value on top of the stack (popped) into the heap 1..n, starting at `i` and moving
  // larger children up while one is larger than it.
  void SiftDown(lua_Integer i, lua_Integer n) {
    const int value = lua_gettop(L);
    for (;;) {
      lua_Integer child = 2 * i;
      if (child > n) break;
      lua_geti(L, 1, child);
      if (child < n) {
        lua_geti(L, 1, child + 1);
        if (Less(value + 1, value + 2)) {
          lua_remove(L, value + 1);
          ++child;
        } else {
          lua_pop(L, 1);
        }
      }
      if (!Less(value, value + 1)) {
        lua_pop(L, 1);
        break;
      }
      lua_seti(L, 1, i);  // the larger child moves up
      i = child;
    }
    lua_seti(L, 1, i);
  }
};

int TabSort(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  const lua_Integer n = luaL_len(L, 1);
  if (n < 2) return 0;
  luaL_argcheck(L, n < INT_MAX, 1, "array too big");
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_settop(L, 2);
  luaL_checkstack(L, 8, "table too deep to sort");
  Meter meter{L};
  Sorter sorter{L, &meter, !lua_isnil(L, 2)};
  for (lua_Integer i = n / 2; i >= 1; --i) {
    lua_geti(L, 1, i);
    sorter.SiftDown(i, n);
  }
  for (lua_Integer last = n; last > 1; --last) {
    lua_geti(L, 1, last);  // the heap's last value sinks from the top once the largest is out
    lua_geti(L, 1, 1);
    lua_seti(L, 1, last);
    sorter.SiftDown(1, last - 1);
  }
  return 0;
}

}  // namespace

void OpenBoundedTables(lua_State* L, int table_index) {
  SetFunction(L, table_index, "insert", TabInsert);
  SetFunction(L, table_index, "remove", TabRemove);
  SetFunction(L, table_index, "move", TabMove);
  SetFunction(L, table_index, "concat", TabConcat);
  SetFunction(L, table_index, "sort", TabSort);
}

}  // namespace rendezvous::core
