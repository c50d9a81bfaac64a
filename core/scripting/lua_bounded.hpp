// Internal to the sandbox's own library functions (lua_patterns.cpp, lua_pattern_matcher.cpp,
// lua_bounded_tables.cpp): the meter their work is charged to, and the table functions.
#pragma once

#include <cstddef>

#include "scripting/lua_sandbox.hpp"

namespace rendezvous::core {

inline constexpr unsigned kStepsPerCheck = 4096;  // steps between two clock reads

// Counts work and reads the clock every kStepsPerCheck steps.
struct Meter {
  lua_State* L;
  unsigned steps = 0;

  void Charge(size_t cost) {
    steps += cost > kStepsPerCheck ? kStepsPerCheck : static_cast<unsigned>(cost);
    if (steps >= kStepsPerCheck) {
      steps = 0;
      SandboxCheckTime(L);
    }
  }
};

// Sets field `name` of the table at `table` to the C function `f`.
inline void SetFunction(lua_State* L, int table, const char* name, lua_CFunction f) {
  lua_pushcfunction(L, f);
  lua_setfield(L, table, name);
}

// Replaces insert, remove, move, concat and sort in the table at `table_index` with the bounded ones.
void OpenBoundedTables(lua_State* L, int table_index);

}  // namespace rendezvous::core
