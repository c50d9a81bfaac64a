// The read-only views of the library tables scripts see, and rawset refusing them.
#include "scripting/lua_sandbox_internal.hpp"

namespace rendezvous::core {
namespace {

// A metatable's __newindex that refuses: the library tables scripts see are read-only views.
int ReadOnlyNewIndex(lua_State* L) {
  return luaL_error(L, "the sandbox's library tables are read-only");
}

bool IsReadOnlyView(lua_State* L, int index) {
  if (lua_type(L, index) != LUA_TTABLE || lua_getmetatable(L, index) == 0) return false;
  lua_pushliteral(L, "__newindex");
  lua_rawget(L, -2);
  const bool view = lua_tocfunction(L, -1) == ReadOnlyNewIndex;
  lua_pop(L, 2);
  return view;
}

// rawset, except on the read-only views.
}  // namespace

int sandbox_internal::SandboxRawSet(lua_State* L) {
  if (IsReadOnlyView(L, 1)) return ReadOnlyNewIndex(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

// Iterates a read-only view's table without handing the table itself to the script.
int ViewNext(lua_State* L) {
  lua_settop(L, 2);
  if (lua_next(L, lua_upvalueindex(1)) != 0) return 2;
  lua_pushnil(L);
  return 1;
}

int ViewPairs(lua_State* L) {
  lua_getmetatable(L, 1);
  lua_pushliteral(L, "__index");
  lua_rawget(L, -2);
  lua_pushcclosure(L, ViewNext, 1);
  lua_pushnil(L);
  lua_pushnil(L);
  return 3;
}

// Replaces global `name` with a read-only view of it.
void sandbox_internal::MakeReadOnlyView(lua_State* L, const char* name) {
  lua_getglobal(L, name);
  lua_createtable(L, 0, 0);
  lua_createtable(L, 0, 4);
  lua_pushvalue(L, -3);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ReadOnlyNewIndex);
  lua_setfield(L, -2, "__newindex");
  lua_pushcfunction(L, ViewPairs);
  lua_setfield(L, -2, "__pairs");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  lua_setglobal(L, name);
  lua_pop(L, 1);
}

}  // namespace rendezvous::core
