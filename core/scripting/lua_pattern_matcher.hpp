// The sandbox's Lua pattern matcher (lua_patterns.cpp hands it string.find, match, gmatch and
// gsub): the patterns of the Lua 5.4 manual, every step charged to a Meter (lua_bounded.hpp).
// Raising a Lua error here unwinds (longjmp) through these frames: they hold only trivially
// destructible values.
#pragma once

#include <cctype>
#include <cstddef>
#include <cstring>

#include "scripting/lua_bounded.hpp"

namespace rendezvous::core::lua_pattern {

inline constexpr int kMaxCaptures = 32;
inline constexpr int kMaxMatchDepth = 200;  // nesting of the matcher's recursion
inline constexpr ptrdiff_t kUnfinished = -1;
inline constexpr ptrdiff_t kPosition = -2;

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

inline unsigned char U(char c) {
  return static_cast<unsigned char>(c);
}

// The end of the single-character item at `p` (a character, %x, or a set).
const char* ItemEnd(Matcher* m, const char* p);
bool ItemMatches(const Matcher* m, const char* s, const char* p, const char* ep);
// The end of the match of the pattern from `p` at `s`, or nullptr.
const char* Match(Matcher* m, const char* s, const char* p);

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
const char* SkipToCandidate(FirstItem* first, Meter* meter, const char* s);
void Prepare(Matcher* m, lua_State* L, Meter* meter, const char* s, size_t ls, const char* p, size_t lp);
void Reset(Matcher* m);
void PushCapture(Matcher* m, int i, const char* s, const char* e);
// Pushes the captures (the whole match when there are none and `s` is given); returns how many.
int PushCaptures(Matcher* m, const char* s, const char* e);

}  // namespace rendezvous::core::lua_pattern
