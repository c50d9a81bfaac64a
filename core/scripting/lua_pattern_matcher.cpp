#include "scripting/lua_pattern_matcher.hpp"

namespace rendezvous::core::lua_pattern {
namespace {

bool IsAsciiUpper(int c) {
  return c >= 'A' && c <= 'Z';
}

// The class letters are ASCII: they are told apart without the locale's tables, as the "C" locale
// the server runs in would.
bool ClassMatches(int c, int cl) {
  bool yes = false;
  switch (IsAsciiUpper(cl) ? cl - 'A' + 'a' : cl) {
    case 'a':
      yes = std::isalpha(c) != 0;
      break;
    case 'c':
      yes = std::iscntrl(c) != 0;
      break;
    case 'd':
      yes = std::isdigit(c) != 0;
      break;
    case 'g':
      yes = std::isgraph(c) != 0;
      break;
    case 'l':
      yes = std::islower(c) != 0;
      break;
    case 'p':
      yes = std::ispunct(c) != 0;
      break;
    case 's':
      yes = std::isspace(c) != 0;
      break;
    case 'u':
      yes = std::isupper(c) != 0;
      break;
    case 'w':
      yes = std::isalnum(c) != 0;
      break;
    case 'x':
      yes = std::isxdigit(c) != 0;
      break;
    case 'z':  // the NUL byte: undocumented since Lua 5.2, still in Lua 5.4's library
      yes = c == 0;
      break;
    default:
      return cl == c;  // an escaped character stands for itself
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

}  // namespace

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
    case '.':
      return true;
    case '%':
      return ClassMatches(c, U(p[1]));
    case '[':
      return InSet(c, p, ep - 1);
    default:
      return U(*p) == c;
  }
}

namespace {

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

}  // namespace

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

int PushCaptures(Matcher* m, const char* s, const char* e) {
  const int n = m->level == 0 && s != nullptr ? 1 : m->level;
  luaL_checkstack(m->L, n, "too many captures");
  for (int i = 0; i < n; ++i) PushCapture(m, i, s, e);
  return n;
}

}  // namespace rendezvous::core::lua_pattern
