// The sandbox's own xpcall and coroutine functions (resume, wrap, close), metered like the rest of
// a run so that a handler or a coroutine cannot run past the budget; and the timed wrappers of the
// library functions that loop in C without allocating.
#include <cstring>

#include "scripting/lua_sandbox_internal.hpp"

namespace rendezvous::core {

using sandbox_internal::BudgetHook;
using sandbox_internal::Ctx;
using sandbox_internal::HookInterval;
using sandbox_internal::TimedCall;

namespace {

// --- Message handlers ---------------------------------------------------------------------------
// An error the hook raises leaves the thread's hooks off until the protected call that catches it
// has unwound (Lua does not run hooks inside hooks, and the raise skips the reset), and Lua calls
// xpcall's message handler before that unwinding: a handler run then would be unmetered. So
// xpcall's handler is wrapped: once the run is out of budget it hands the error on without
// calling the script's handler (the run fails anyway); before that the error came from the script,
// hooks are on and the handler runs metered like any other code.
int GuardedHandler(lua_State* L) {
  lua_settop(L, 1);
  if (Ctx(L)->budget_exhausted) return 1;
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, 1, 1);
  return 1;
}

int FinishProtectedCall(lua_State* L, int status, lua_KContext extra) {
  if (status != LUA_OK && status != LUA_YIELD) {
    lua_pushboolean(L, 0);
    lua_pushvalue(L, -2);
    return 2;
  }
  return lua_gettop(L) - static_cast<int>(extra);
}
}  // namespace

// xpcall(f, msgh, ...) as Lua's, with msgh wrapped in GuardedHandler.
int sandbox_internal::SandboxXpcall(lua_State* L) {
  const int n = lua_gettop(L);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_pushvalue(L, 2);
  lua_pushcclosure(L, GuardedHandler, 1);
  lua_replace(L, 2);
  lua_pushboolean(L, 1);  // the first result on success
  lua_pushvalue(L, 1);
  lua_rotate(L, 3, 2);  // true and f below f's arguments
  const int status = lua_pcallk(L, n - 2, LUA_MULTRET, 2, 2, FinishProtectedCall);
  return FinishProtectedCall(L, status, 2);
}

namespace {

// --- Coroutines ---------------------------------------------------------------------------------
// resume and wrap are the sandbox's own so that the context knows which thread runs (the allocator
// stops that one when the clock runs out) and so that a coroutine resumed after the budget ran out
// raises at its first instruction. A coroutine that died of the budget is not closed: closing runs
// its pending __close metamethods, on a thread whose hooks the raise left off.

// Resumes `co` with the `narg` values on top of L. Answers how many results it moved onto L, or -1
// with the error value on top.
int ResumeMetered(lua_State* L, lua_State* co, int narg) {
  LuaStateContext* ctx = Ctx(L);
  if (lua_checkstack(co, narg) == 0) {
    lua_pushliteral(L, "too many arguments to resume");
    return -1;
  }
  lua_xmove(L, co, narg);
  if (ctx->budget_exhausted) {
    lua_sethook(co, BudgetHook, LUA_MASKCOUNT, 1);
  } else if (lua_gethookcount(co) > HookInterval(ctx)) {
    lua_sethook(co, BudgetHook, LUA_MASKCOUNT, HookInterval(ctx));  // made when the state was smaller
  }
  lua_State* const outer = ctx->current;
  ctx->current = co;
  int results = 0;
  const int status = lua_resume(co, L, narg, &results);
  ctx->current = outer;
  if (ctx->budget_exhausted)
    lua_sethook(L, BudgetHook, LUA_MASKCOUNT, 1);  // the resumer's next instruction raises
  if (status != LUA_OK && status != LUA_YIELD) {
    lua_xmove(co, L, 1);
    return -1;
  }
  if (lua_checkstack(L, results + 1) == 0) {
    lua_pop(co, results);
    lua_pushliteral(L, "too many results to resume");
    return -1;
  }
  lua_xmove(co, L, results);
  return results;
}

lua_State* CheckCoroutine(lua_State* L, int index) {
  lua_State* co = lua_tothread(L, index);
  luaL_argexpected(L, co != nullptr, index, "coroutine");
  return co;
}
}  // namespace

int sandbox_internal::SandboxResume(lua_State* L) {
  lua_State* co = CheckCoroutine(L, 1);
  const int results = ResumeMetered(L, co, lua_gettop(L) - 1);
  if (results < 0) {
    lua_pushboolean(L, 0);
    lua_insert(L, -2);
    return 2;
  }
  lua_pushboolean(L, 1);
  lua_insert(L, -(results + 1));
  return results + 1;
}

namespace {

int CloseThread(lua_State* co, lua_State* from) {
#if LUA_VERSION_RELEASE_NUM >= 50406
  return lua_closethread(co, from);
#else
  (void)from;
  return lua_resetthread(co);
#endif
}

int WrappedCoroutine(lua_State* L) {
  lua_State* co = lua_tothread(L, lua_upvalueindex(1));
  const int results = ResumeMetered(L, co, lua_gettop(L));
  if (results >= 0) return results;
  int status = lua_status(co);
  if (status != LUA_OK && status != LUA_YIELD && !Ctx(L)->budget_exhausted) {
    status = CloseThread(co, L);  // runs its pending __close metamethods, hooked
    lua_xmove(co, L, 1);
  }
  if (status != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) {
    luaL_where(L, 1);
    lua_insert(L, -2);
    lua_concat(L, 2);
  }
  return lua_error(L);
}
}  // namespace

int sandbox_internal::SandboxWrap(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_State* co = lua_newthread(L);
  lua_pushvalue(L, 1);
  lua_xmove(L, co, 1);
  lua_pushcclosure(L, WrappedCoroutine, 1);
  return 1;
}

namespace {

// Calls the wrapped function (the closure's upvalue) with the call's arguments; answers its
// results' count.
int CallWrapped(lua_State* L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}
}  // namespace
// coroutine.close, except after the budget ran out (see above).
int sandbox_internal::SandboxClose(lua_State* L) {
  CheckCoroutine(L, 1);
  if (const LuaStateContext* ctx = Ctx(L); ctx->budget_exhausted) {
    return luaL_error(L, ctx->time_exhausted ? "time limit exceeded" : "instruction limit exceeded");
  }
  return CallWrapped(L);
}

namespace {

// --- Library functions that loop in C without allocating --------------------------------------
// Each call's work is bounded by the memory a state may hold (a string's length, a table's size),
// but nothing else stops a script from calling them in a loop between two of the hook's clock
// reads. These are called through a closure that reads the clock first.
}  // namespace

int sandbox_internal::TimedCall(lua_State* L) {
  SandboxCheckTime(L);
  return CallWrapped(L);
}

// utf8.codes and pairs answer an iterator function of the library: that one is timed too.
int sandbox_internal::TimedIteratorFactory(lua_State* L) {
  SandboxCheckTime(L);
  const int results = CallWrapped(L);
  if (results >= 1 && lua_iscfunction(L, 1) != 0) {
    lua_pushvalue(L, 1);
    lua_pushcclosure(L, TimedCall, 1);
    lua_replace(L, 1);
  }
  return results;
}

// Wraps the named C functions of the library table at `lib` (registered as `name` in the loaded
// table). The originals stay findable under their names, so a bad argument is still reported as
// "bad argument #1 to 'utf8.len'" rather than to '?'.
void sandbox_internal::TimeFunctions(lua_State* L, const char* name,
                                     std::initializer_list<const char*> functions, lua_CFunction wrapper) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  const int loaded = lua_gettop(L);
  if (std::strcmp(name, LUA_GNAME) == 0) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
  } else {
    lua_getglobal(L, name);
  }
  const int lib = lua_gettop(L);
  lua_getfield(L, loaded, name);
  if (lua_rawequal(L, -1, lib) != 0) {  // first wrapping in this library: the loaded table becomes a copy
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, lib) != 0) {
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, -4);
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, loaded, name);
  }
  lua_pop(L, 1);
  for (const char* function : functions) {
    lua_getfield(L, lib, function);
    lua_pushcclosure(L, wrapper, 1);
    lua_setfield(L, lib, function);
  }
  lua_pop(L, 2);
}

}  // namespace rendezvous::core
