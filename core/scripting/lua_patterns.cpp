// The sandbox's own versions of the library functions that loop in C: Lua patterns
// (string.find, match, gmatch, gsub), string.rep, table.insert, remove, move, concat and sort. They
// behave as the Lua 5.4 manual describes, and charge every step of their work against the run's time
// limit: a pattern that backtracks without end, or a loop over a length a metamethod made up,
// fails with "time limit exceeded" within the limit instead of holding the thread.
//
// Raising a Lua error here unwinds (longjmp) through these frames: they hold only trivially
// destructible values.
#include <algorithm>
#include <cctype>
#include <climits>
#include <cstddef>
#include <cstring>

#include "scripting/lua_sandbox.hpp"

namespace rendezvous::core {
namespace {

constexpr int kMaxCaptures = 32;
constexpr int kMaxMatchDepth = 200;      // nesting of the matcher's recursion
constexpr unsigned kStepsPerCheck = 4096;  // steps between two clock reads
constexpr ptrdiff_t kUnfinished = -1;
constexpr ptrdiff_t kPosition = -2;

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

struct Capture {
  const char* init;
  ptrdiff_t len;  // kUnfinished, kPosition or a length
};

struct Matcher {
  const char* src_init;
  const char* src_end;
  const char* p_end;
  lua_State* L;
  Meter* meter;
  int level;  // captures opened so far
  int depth;  // recursion left
  Capture capture[kMaxCaptures];
};

unsigned char U(char c) { return static_cast<unsigned char>(c); }

bool IsAsciiUpper(int c) {
  return c >= 'A' && c <= 'Z';
}

// The class letters are ASCII: they are told apart without the locale's tables, as the "C" locale
// the server runs in would.
bool ClassMatches(int c, int cl) {
  bool yes = false;
  switch (IsAsciiUpper(cl) ? cl - 'A' + 'a' : cl) {
    case 'a': yes = std::isalpha(c) != 0; break;
    case 'c': yes = std::iscntrl(c) != 0; break;
    case 'd': yes = std::isdigit(c) != 0; break;
    case 'g': yes = std::isgraph(c) != 0; break;
    case 'l': yes = std::islower(c) != 0; break;
    case 'p': yes = std::ispunct(c) != 0; break;
    case 's': yes = std::isspace(c) != 0; break;
    case 'u': yes = std::isupper(c) != 0; break;
    case 'w': yes = std::isalnum(c) != 0; break;
    case 'x': yes = std::isxdigit(c) != 0; break;
    case 'z':  // the NUL byte: undocumented since Lua 5.2, still in Lua 5.4's library
      yes = c == 0;
      break;
    default: return cl == c;  // an escaped character stands for itself
  }
  return IsAsciiUpper(cl) ? !yes : yes;
}

// `set` points at '[', `close` at the set's closing ']'.
bool InSet(int c, const char* set, const char* close) {
  const char* p = set + 1;
  bool negate = false;
  if (*p == '^') {
    negate = true;
    ++p;
  }
  while (p < close) {
    if (*p == '%' && p + 1 < close) {
      if (ClassMatches(c, U(p[1]))) return !negate;
      p += 2;
    } else if (p + 2 < close && p[1] == '-') {
      if (U(p[0]) <= c && c <= U(p[2])) return !negate;
      p += 3;
    } else {
      if (U(*p) == c) return !negate;
      ++p;
    }
  }
  return negate;
}

// The end of the single-character item at `p` (a character, %x, or a set).
const char* ItemEnd(Matcher* m, const char* p) {
  const char c = *p++;
  if (c == '%') {
    if (p >= m->p_end) luaL_error(m->L, "malformed pattern (ends with '%%')");
    return p + 1;
  }
  if (c == '[') {
    if (p < m->p_end && *p == '^') ++p;
    bool first = true;  // a ']' right after '[' or '[^' belongs to the set
    for (;;) {
      if (p >= m->p_end) luaL_error(m->L, "malformed pattern (missing ']')");
      if (*p == ']' && !first) return p + 1;
      first = false;
      if (*p == '%') {
        ++p;
        if (p >= m->p_end) luaL_error(m->L, "malformed pattern (missing ']')");
      }
      ++p;
    }
  }
  return p;
}

bool ItemMatches(const Matcher* m, const char* s, const char* p, const char* ep) {
  if (s >= m->src_end) return false;
  const int c = U(*s);
  switch (*p) {
    case '.': return true;
    case '%': return ClassMatches(c, U(p[1]));
    case '[': return InSet(c, p, ep - 1);
    default: return U(*p) == c;
  }
}

const char* Match(Matcher* m, const char* s, const char* p);

const char* MaxExpand(Matcher* m, const char* s, const char* p, const char* ep) {
  ptrdiff_t n = 0;
  while (ItemMatches(m, s + n, p, ep)) {
    ++n;
    m->meter->Charge(1);
  }
  for (; n >= 0; --n) {  // the longest repetition that lets the rest match
    if (const char* e = Match(m, s + n, ep + 1)) return e;
  }
  return nullptr;
}

const char* MinExpand(Matcher* m, const char* s, const char* p, const char* ep) {
  for (;;) {
    if (const char* e = Match(m, s, ep + 1)) return e;
    if (!ItemMatches(m, s, p, ep)) return nullptr;
    ++s;
  }
}

const char* OpenCapture(Matcher* m, const char* s, const char* p, ptrdiff_t what) {
  if (m->level >= kMaxCaptures) luaL_error(m->L, "too many captures");
  m->capture[m->level] = Capture{s, what};
  ++m->level;
  const char* e = Match(m, s, p);
  if (e == nullptr) --m->level;
  return e;
}

const char* CloseCapture(Matcher* m, const char* s, const char* p) {
  int open = m->level - 1;
  while (open >= 0 && m->capture[open].len != kUnfinished) --open;
  if (open < 0) luaL_error(m->L, "invalid pattern capture");
  m->capture[open].len = s - m->capture[open].init;
  const char* e = Match(m, s, p);
  if (e == nullptr) m->capture[open].len = kUnfinished;
  return e;
}

const char* MatchBalance(Matcher* m, const char* s, const char* p) {
  if (p + 1 >= m->p_end) luaL_error(m->L, "malformed pattern (missing arguments to '%%b')");
  if (s >= m->src_end || *s != p[0]) return nullptr;
  const char open = p[0], close = p[1];
  int depth = 1;
  while (++s < m->src_end) {
    m->meter->Charge(1);
    if (*s == close) {
      if (--depth == 0) return s + 1;
    } else if (*s == open) {
      ++depth;
    }
  }
  return nullptr;
}

const char* MatchBackReference(Matcher* m, const char* s, char digit) {
  const int index = digit - '1';
  if (index < 0 || index >= m->level || m->capture[index].len == kUnfinished)
    luaL_error(m->L, "invalid capture index %%%d", index + 1);
  const ptrdiff_t len = m->capture[index].len;
  // A position capture has no text to repeat: a reference to it matches nothing, as in Lua.
  if (len == kPosition) return nullptr;
  m->meter->Charge(1 + static_cast<size_t>(len) / 64);
  if (m->src_end - s >= len && std::memcmp(m->capture[index].init, s, static_cast<size_t>(len)) == 0)
    return s + len;
  return nullptr;
}

// The end of the match of the pattern from `p` at `s`, or nullptr.
const char* Match(Matcher* m, const char* s, const char* p) {
  if (m->depth-- == 0) luaL_error(m->L, "pattern too complex");
  const char* result = nullptr;
  for (;;) {
    m->meter->Charge(1);
    if (p == m->p_end) {
      result = s;
      break;
    }
    if (*p == '(') {
      result = p + 1 < m->p_end && p[1] == ')' ? OpenCapture(m, s, p + 2, kPosition)
                                               : OpenCapture(m, s, p + 1, kUnfinished);
      break;
    }
    if (*p == ')') {
      result = CloseCapture(m, s, p + 1);
      break;
    }
    if (*p == '$' && p + 1 == m->p_end) {
      result = s == m->src_end ? s : nullptr;
      break;
    }
    if (*p == '%' && p + 1 < m->p_end && p[1] == 'b') {
      s = MatchBalance(m, s, p + 2);
      if (s == nullptr) break;
      p += 4;
      continue;
    }
    if (*p == '%' && p + 1 < m->p_end && p[1] == 'f') {
      p += 2;
      if (p >= m->p_end || *p != '[') luaL_error(m->L, "missing '[' after '%%f' in pattern");
      const char* ep = ItemEnd(m, p);
      const int before = s == m->src_init ? 0 : U(s[-1]);
      const int at = s < m->src_end ? U(*s) : 0;
      if (InSet(before, p, ep - 1) || !InSet(at, p, ep - 1)) break;
      p = ep;
      continue;
    }
    if (*p == '%' && p + 1 < m->p_end && std::isdigit(U(p[1])) != 0) {
      s = MatchBackReference(m, s, p[1]);
      if (s == nullptr) break;
      p += 2;
      continue;
    }
    const char* ep = ItemEnd(m, p);
    const char quantifier = ep < m->p_end ? *ep : '\0';
    if (!ItemMatches(m, s, p, ep)) {
      if (quantifier == '*' || quantifier == '?' || quantifier == '-') {  // zero repetitions
        p = ep + 1;
        continue;
      }
      break;
    }
    if (quantifier == '?') {
      result = Match(m, s + 1, ep + 1);
      if (result != nullptr) break;
      p = ep + 1;
      continue;
    }
    if (quantifier == '+') {
      result = MaxExpand(m, s + 1, p, ep);
      break;
    }
    if (quantifier == '*') {
      result = MaxExpand(m, s, p, ep);
      break;
    }
    if (quantifier == '-') {
      result = MinExpand(m, s, p, ep);
      break;
    }
    ++s;
    p = ep;
  }
  ++m->depth;
  return result;
}

// A match can start only where the pattern's first item matches when that item is a single
// character (a character, '.', %x or a set) that must match at least once (no '*', '?' or '-'
// after it). Then the positions whose character fails it are passed over without running the
// matcher (each still charged one step, as the matcher's failure there would be), and the item's
// answer is kept per byte value. Patterns that start otherwise (a capture, an anchor, %b, %f, a
// back reference) are matched at every position.
class FirstItem {
 public:
  FirstItem(Matcher* m, const char* p) : m_(m), p_(p) {}

  // The first position from `s` where a match may start, passing over at most kStepsPerCheck
  // positions and never the subject's end; `s` itself when the pattern does not start so.
  const char* Skip(const char* s) {
    if (state_ == kUnchecked) Check();
    if (state_ == kOff) return s;
    const char* limit =
        m_->src_end - s > static_cast<ptrdiff_t>(kStepsPerCheck) ? s + kStepsPerCheck : m_->src_end;
    while (s < limit && !Matches(s)) ++s;
    return s;
  }

 private:
  enum : unsigned char { kUnknown = 0, kNo = 1, kYes = 2 };
  enum State { kUnchecked, kOff, kOn };

  bool Matches(const char* s) {
    unsigned char& known = known_[U(*s)];
    if (known == kUnknown) known = ItemMatches(m_, s, p_, ep_) ? kYes : kNo;
    return known == kYes;
  }

  // Run where the matcher would first read the item, so a malformed item fails as it would.
  void Check() {
    state_ = kOff;
    const char* p = p_;
    if (p == m_->p_end || *p == '(' || *p == ')' || (*p == '$' && p + 1 == m_->p_end)) return;
    if (*p == '%' && p + 1 < m_->p_end && (p[1] == 'b' || p[1] == 'f' || std::isdigit(U(p[1])) != 0)) return;
    ep_ = ItemEnd(m_, p);
    const char quantifier = ep_ < m_->p_end ? *ep_ : '\0';
    if (quantifier == '*' || quantifier == '?' || quantifier == '-') return;
    std::memset(known_, kUnknown, sizeof known_);
    state_ = kOn;
  }

  Matcher* m_;
  const char* p_;
  const char* ep_ = nullptr;
  State state_ = kUnchecked;
  unsigned char known_[256];
};

// Passes `first` over the positions from `s` where no match can start, charging a step for each.
const char* SkipToCandidate(FirstItem* first, Meter* meter, const char* s) {
  const char* next = first->Skip(s);
  if (next != s) meter->Charge(static_cast<size_t>(next - s));
  return next;
}

void Prepare(Matcher* m, lua_State* L, Meter* meter, const char* s, size_t ls, const char* p, size_t lp) {
  m->L = L;
  m->meter = meter;
  m->src_init = s;
  m->src_end = s + ls;
  m->p_end = p + lp;
}

void Reset(Matcher* m) {
  m->level = 0;
  m->depth = kMaxMatchDepth;
}

void PushCapture(Matcher* m, int i, const char* s, const char* e) {
  if (i >= m->level) {
    if (i != 0) luaL_error(m->L, "invalid capture index %%%d", i + 1);
    lua_pushlstring(m->L, s, static_cast<size_t>(e - s));  // the whole match
    return;
  }
  const Capture& c = m->capture[i];
  if (c.len == kUnfinished) luaL_error(m->L, "unfinished capture");
  if (c.len == kPosition) {
    lua_pushinteger(m->L, static_cast<lua_Integer>(c.init - m->src_init) + 1);
  } else {
    lua_pushlstring(m->L, c.init, static_cast<size_t>(c.len));
  }
}

// Pushes the captures (the whole match when there are none and `s` is given); returns how many.
int PushCaptures(Matcher* m, const char* s, const char* e) {
  const int n = m->level == 0 && s != nullptr ? 1 : m->level;
  luaL_checkstack(m->L, n, "too many captures");
  for (int i = 0; i < n; ++i) PushCapture(m, i, s, e);
  return n;
}

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

int StrFind(lua_State* L) { return FindOrMatch(L, true); }
int StrMatch(lua_State* L) { return FindOrMatch(L, false); }

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
  luaL_argexpected(L, type == LUA_TNUMBER || type == LUA_TSTRING || type == LUA_TFUNCTION || type == LUA_TTABLE,
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
    case 2: break;
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
    default: return luaL_error(L, "wrong number of arguments to 'insert'");
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

void SetFunction(lua_State* L, int table, const char* name, lua_CFunction f) {
  lua_pushcfunction(L, f);
  lua_setfield(L, table, name);
}

}  // namespace

void OpenBoundedLibrary(lua_State* L, int string_index, int table_index) {
  SetFunction(L, string_index, "find", StrFind);
  SetFunction(L, string_index, "match", StrMatch);
  SetFunction(L, string_index, "gmatch", StrGmatch);
  SetFunction(L, string_index, "gsub", StrGsub);
  SetFunction(L, string_index, "rep", StrRep);
  SetFunction(L, table_index, "insert", TabInsert);
  SetFunction(L, table_index, "remove", TabRemove);
  SetFunction(L, table_index, "move", TabMove);
  SetFunction(L, table_index, "concat", TabConcat);
  SetFunction(L, table_index, "sort", TabSort);
}

}  // namespace rendezvous::core
