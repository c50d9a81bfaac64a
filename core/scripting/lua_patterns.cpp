// The sandbox's own versions of the library functions that loop in C: Lua patterns
// (string.find, match, gmatch, gsub) and string.rep here (the matcher: lua_pattern_matcher.cpp),
// table.insert, remove, move, concat and sort in lua_bounded_tables.cpp. They behave as the Lua 5.4
// manual describes, and charge every step of their work against the run's time limit: a pattern
// that backtracks without end, or a loop over a length a metamethod made up, fails with "time
// limit exceeded" within the limit instead of holding the thread.
//
// Raising a Lua error here unwinds (longjmp) through these frames: they hold only trivially
// destructible values.
#include <cstddef>
#include <cstring>

#include "scripting/lua_bounded.hpp"
#include "scripting/lua_pattern_matcher.hpp"

namespace rendezvous::core {
namespace {

using lua_pattern::FirstItem;
using lua_pattern::Match;
using lua_pattern::Matcher;
using lua_pattern::Prepare;
using lua_pattern::PushCapture;
using lua_pattern::PushCaptures;
using lua_pattern::Reset;
using lua_pattern::SkipToCandidate;
using lua_pattern::U;

// A start position given as Lua does (negative counts from the end), as an offset 0..len+1.
size_t StartOffset(lua_Integer pos, size_t len) {
  if (pos > 0) return static_cast<size_t>(pos) - 1;
  if (pos == 0) return 0;
  if (pos < -static_cast<lua_Integer>(len)) return 0;
  return len - static_cast<size_t>(-pos);
}

bool HasSpecials(const char* p, size_t lp) {
  for (size_t i = 0; i < lp; ++i) {
    if (std::strchr("^$*+?.([%-", p[i]) != nullptr && p[i] != '\0') return true;
  }
  return false;
}

const char* PlainFind(Meter* meter, const char* s, size_t ls, const char* p, size_t lp) {
  if (lp == 0) return s;
  if (lp > ls) return nullptr;
  const char* last = s + (ls - lp);
  while (s <= last) {
    const void* hit = std::memchr(s, *p, static_cast<size_t>(last - s) + 1);
    if (hit == nullptr) return nullptr;
    s = static_cast<const char*>(hit);
    meter->Charge(1 + lp / 64);
    if (std::memcmp(s + 1, p + 1, lp - 1) == 0) return s;
    ++s;
  }
  return nullptr;
}

int FindOrMatch(lua_State* L, bool find) {
  size_t ls = 0, lp = 0;
  const char* s = luaL_checklstring(L, 1, &ls);
  const char* p = luaL_checklstring(L, 2, &lp);
  const size_t init = StartOffset(luaL_optinteger(L, 3, 1), ls);
  if (init > ls) {
    luaL_pushfail(L);
    return 1;
  }
  Meter meter{L};
  if (find && (lua_toboolean(L, 4) != 0 || !HasSpecials(p, lp))) {
    const char* at = PlainFind(&meter, s + init, ls - init, p, lp);
    if (at != nullptr) {
      lua_pushinteger(L, static_cast<lua_Integer>(at - s) + 1);
      lua_pushinteger(L, static_cast<lua_Integer>(at - s + lp));
      return 2;
    }
    luaL_pushfail(L);
    return 1;
  }
  const bool anchor = lp > 0 && *p == '^';
  if (anchor) {
    ++p;
    --lp;
  }
  Matcher m;
  Prepare(&m, L, &meter, s, ls, p, lp);
  const char* from = s + init;
  FirstItem first(&m, p);
  do {
    if (!anchor) from = SkipToCandidate(&first, &meter, from);
    Reset(&m);
    if (const char* e = Match(&m, from, p)) {
      if (!find) return PushCaptures(&m, from, e);
      lua_pushinteger(L, static_cast<lua_Integer>(from - s) + 1);
      lua_pushinteger(L, static_cast<lua_Integer>(e - s));
      return PushCaptures(&m, nullptr, nullptr) + 2;
    }
  } while (from++ < m.src_end && !anchor);
  luaL_pushfail(L);
  return 1;
}

int StrFind(lua_State* L) {
  return FindOrMatch(L, true);
}
int StrMatch(lua_State* L) {
  return FindOrMatch(L, false);
}

struct GmatchState {
  const char* src;
  const char* p;
  const char* lastmatch;
  Matcher m;
};

int GmatchNext(lua_State* L) {
  auto* g = static_cast<GmatchState*>(lua_touserdata(L, lua_upvalueindex(3)));
  Meter meter{L};
  g->m.L = L;  // the iterator may run on another coroutine than gmatch did
  g->m.meter = &meter;
  FirstItem first(&g->m, g->p);
  for (const char* from = g->src; from <= g->m.src_end; ++from) {
    from = SkipToCandidate(&first, &meter, from);
    Reset(&g->m);
    const char* e = Match(&g->m, from, g->p);
    if (e != nullptr && e != g->lastmatch) {
      g->src = g->lastmatch = e;
      return PushCaptures(&g->m, from, e);
    }
  }
  return 0;
}

int StrGmatch(lua_State* L) {
  size_t ls = 0, lp = 0;
  const char* s = luaL_checklstring(L, 1, &ls);
  const char* p = luaL_checklstring(L, 2, &lp);
  size_t init = StartOffset(luaL_optinteger(L, 3, 1), ls);
  if (init > ls) init = ls + 1;  // past the end: no match at all
  lua_settop(L, 2);
  auto* g = static_cast<GmatchState*>(lua_newuserdatauv(L, sizeof(GmatchState), 0));
  Prepare(&g->m, L, nullptr, s, ls, p, lp);
  g->src = s + init;
  g->p = p;
  g->lastmatch = nullptr;
  lua_pushcclosure(L, GmatchNext, 3);  // the subject and pattern stay alive with the iterator
  return 1;
}

void AddReplacementString(Matcher* m, luaL_Buffer* b, const char* s, const char* e) {
  lua_State* L = m->L;
  size_t l = 0;
  const char* r = lua_tolstring(L, 3, &l);
  const char* end = r + l;
  while (r < end) {
    const char* pct = static_cast<const char*>(std::memchr(r, '%', static_cast<size_t>(end - r)));
    if (pct == nullptr) {
      luaL_addlstring(b, r, static_cast<size_t>(end - r));
      return;
    }
    luaL_addlstring(b, r, static_cast<size_t>(pct - r));
    r = pct + 1;
    if (r >= end) luaL_error(L, "invalid use of '%%' in replacement string");
    if (*r == '%') {
      luaL_addchar(b, '%');
    } else if (std::isdigit(U(*r)) != 0) {
      if (*r == '0') {
        luaL_addlstring(b, s, static_cast<size_t>(e - s));
      } else {
        PushCapture(m, *r - '1', s, e);
        luaL_tolstring(L, -1, nullptr);
        lua_remove(L, -2);
        luaL_addvalue(b);
      }
    } else {
      luaL_error(L, "invalid use of '%%' in replacement string");
    }
    ++r;
    m->meter->Charge(1);
  }
}

// Adds the replacement of the match s..e; false when the match stays as it was.
bool AddReplacement(Matcher* m, luaL_Buffer* b, const char* s, const char* e, int type) {
  lua_State* L = m->L;
  if (type == LUA_TFUNCTION) {
    lua_pushvalue(L, 3);
    const int n = PushCaptures(m, s, e);
    lua_call(L, n, 1);
  } else if (type == LUA_TTABLE) {
    PushCapture(m, 0, s, e);
    lua_gettable(L, 3);
  } else {
    AddReplacementString(m, b, s, e);
    return true;
  }
  if (lua_toboolean(L, -1) == 0) {
    lua_pop(L, 1);
    luaL_addlstring(b, s, static_cast<size_t>(e - s));
    return false;
  }
  if (lua_isstring(L, -1) == 0)
    return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1)) != 0;
  luaL_addvalue(b);
  return true;
}

int StrGsub(lua_State* L) {
  size_t ls = 0, lp = 0;
  const char* src = luaL_checklstring(L, 1, &ls);
  const char* p = luaL_checklstring(L, 2, &lp);
  const int type = lua_type(L, 3);
  const lua_Integer max = luaL_optinteger(L, 4, static_cast<lua_Integer>(ls) + 1);
  luaL_argexpected(L,
                   type == LUA_TNUMBER || type == LUA_TSTRING || type == LUA_TFUNCTION || type == LUA_TTABLE,
                   3, "string/function/table");
  const bool anchor = lp > 0 && *p == '^';
  if (anchor) {
    ++p;
    --lp;
  }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  Meter meter{L};
  Matcher m;
  Prepare(&m, L, &meter, src, ls, p, lp);
  const char* lastmatch = nullptr;
  lua_Integer n = 0;
  bool changed = false;
  FirstItem first(&m, p);
  while (n < max) {
    if (!anchor) {
      const char* next = SkipToCandidate(&first, &meter, src);
      if (next != src) {
        luaL_addlstring(&b, src, static_cast<size_t>(next - src));
        src = next;
        continue;
      }
    }
    Reset(&m);
    const char* e = Match(&m, src, p);
    if (e != nullptr && e != lastmatch) {
      ++n;
      changed = AddReplacement(&m, &b, src, e, type) || changed;
      src = lastmatch = e;
    } else if (src < m.src_end) {
      luaL_addchar(&b, *src++);
    } else {
      break;
    }
    if (anchor) break;
  }
  if (!changed) {
    lua_pushvalue(L, 1);
  } else {
    luaL_addlstring(&b, src, static_cast<size_t>(m.src_end - src));
    luaL_pushresult(&b);
  }
  lua_pushinteger(L, n);
  return 2;
}

int StrRep(lua_State* L) {
  size_t l = 0, lsep = 0;
  const char* s = luaL_checklstring(L, 1, &l);
  lua_Integer n = luaL_checkinteger(L, 2);
  const char* sep = luaL_optlstring(L, 3, "", &lsep);
  if (n <= 0 || (l == 0 && lsep == 0)) {
    lua_pushliteral(L, "");
    return 1;
  }
  const size_t unit = l + lsep;
  if (unit < l || unit > (static_cast<size_t>(LUA_MAXINTEGER) / 2) / static_cast<size_t>(n))
    return luaL_error(L, "resulting string too large");
  const size_t total = static_cast<size_t>(n) * l + static_cast<size_t>(n - 1) * lsep;
  luaL_Buffer b;
  char* out = luaL_buffinitsize(L, &b, total);  // the memory limit refuses what is too large
  Meter meter{L};
  for (lua_Integer i = 0; i < n; ++i) {
    std::memcpy(out, s, l);
    out += l;
    if (lsep > 0 && i + 1 < n) {
      std::memcpy(out, sep, lsep);
      out += lsep;
    }
    meter.Charge(1 + unit / 64);
  }
  luaL_pushresultsize(&b, total);
  return 1;
}

}  // namespace

void OpenBoundedLibrary(lua_State* L, int string_index, int table_index) {
  SetFunction(L, string_index, "find", StrFind);
  SetFunction(L, string_index, "match", StrMatch);
  SetFunction(L, string_index, "gmatch", StrGmatch);
  SetFunction(L, string_index, "gsub", StrGsub);
  SetFunction(L, string_index, "rep", StrRep);
  OpenBoundedTables(L, table_index);
}

}  // namespace rendezvous::core
