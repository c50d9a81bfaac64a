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

// Replaces insert, remove, move, concat and sort in the table at `table_index` with the bounded ones.
void OpenBoundedTables(lua_State* L, int table_index);

}  // namespace rendezvous::core
