// Internal to the sandbox (lua_sandbox.cpp): what its own xpcall and coroutine functions
// (lua_sandbox_calls.cpp) share with it.
#pragma once

#include <initializer_list>

#include "scripting/lua_sandbox.hpp"

namespace rendezvous::core::sandbox_internal {

inline LuaStateContext* Ctx(lua_State* L) {
  return *static_cast<LuaStateContext**>(lua_getextraspace(L));
}

// The count hook that charges the run's instruction and time budget (lua_sandbox.cpp).
void BudgetHook(lua_State* L, lua_Debug* ar);
// The hook's interval for the state's memory now (lua_sandbox.cpp).
int HookInterval(const LuaStateContext* ctx);

// xpcall, coroutine.resume, coroutine.wrap and coroutine.close as the sandbox's own
// (lua_sandbox_calls.cpp).
int SandboxXpcall(lua_State* L);
int SandboxResume(lua_State* L);
int SandboxWrap(lua_State* L);
int SandboxClose(lua_State* L);

// The library functions that loop in C without allocating, timed (lua_sandbox_calls.cpp): a call
// through TimedCall reads the clock first; TimedIteratorFactory times the iterator it answers too.
int TimedCall(lua_State* L);
int TimedIteratorFactory(lua_State* L);
// Wraps the named C functions of the library table registered as `name` with `wrapper`.
void TimeFunctions(lua_State* L, const char* name, std::initializer_list<const char*> functions,
                   lua_CFunction wrapper = TimedCall);

// The read-only views of the library tables (lua_sandbox_views.cpp): replaces global `name` with
// one; rawset as Lua's, refusing a view.
void MakeReadOnlyView(lua_State* L, const char* name);
int SandboxRawSet(lua_State* L);

}  // namespace rendezvous::core::sandbox_internal
