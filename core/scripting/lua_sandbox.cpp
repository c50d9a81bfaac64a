#include "scripting/lua_sandbox.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string_view>

#include "scripting/lua_runtime.hpp"
#include "scripting/lua_sandbox_internal.hpp"

namespace rendezvous::core {
namespace {

using sandbox_internal::BudgetHook;
using sandbox_internal::Ctx;
using sandbox_internal::HookInterval;
using sandbox_internal::MakeReadOnlyView;
using sandbox_internal::SandboxClose;
using sandbox_internal::SandboxRawSet;
using sandbox_internal::SandboxResume;
using sandbox_internal::SandboxWrap;
using sandbox_internal::SandboxXpcall;
using sandbox_internal::TimedIteratorFactory;
using sandbox_internal::TimeFunctions;

constexpr size_t kMaxPrintBytes = 1024;
constexpr int kDefaultHookInterval = 1000;
constexpr size_t kMaxPooledBytes = 1024 * 1024;

// Registry keys (their addresses): the compiled chunk, the environment its load-time run filled,
// and the metatable of every call's environment.
char chunk_key;
char loaded_env_key;
char env_meta_key;

std::int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The line of the innermost Lua function running on `L`'s stack, or -1. Reads the call info only
// (no allocation), so the allocator may call it.
int CurrentLine(lua_State* L) {
  lua_Debug ar;
  for (int level = 0; level < 64 && lua_getstack(L, level, &ar) != 0; ++level) {
    if (lua_getinfo(L, "l", &ar) != 0 && ar.currentline > 0) return ar.currentline;
  }
  return -1;
}

// The hook's interval shrinks as the state's memory grows: a single instruction can compare,
// hash or copy a string or a stack as large as the memory a state holds (the comparison of two
// long strings with a common prefix is one instruction and no allocation), so the clock is read
// after about the same amount of such work whatever the sizes. Up to kSmallStateBytes the
// interval is the configured one; above, it is divided in proportion, down to kMinHookInterval.
constexpr size_t kSmallStateBytes = 256 * 1024;
constexpr int kMinHookInterval = 8;

}  // namespace

int sandbox_internal::HookInterval(const LuaStateContext* ctx) {
  if (ctx->memory_used <= kSmallStateBytes) return ctx->hook_interval;
  const size_t scaled = static_cast<size_t>(ctx->hook_interval) * kSmallStateBytes / ctx->memory_used;
  return static_cast<int>(std::clamp<size_t>(scaled, std::min(kMinHookInterval, ctx->hook_interval),
                                             static_cast<size_t>(ctx->hook_interval)));
}

namespace {

// Sets `L`'s hook to the interval the state's memory calls for; the allocator asks again once the
// memory has doubled.
void TuneHook(LuaStateContext* ctx, lua_State* L) {
  lua_sethook(L, BudgetHook, LUA_MASKCOUNT, HookInterval(ctx));
  ctx->retune_above = 2 * std::max(ctx->memory_used, kSmallStateBytes);
}

// The allocator reads the clock once per this many bytes handed out during a run: work in C that
// builds large strings or tables (string.upper, format, rep, the concatenation operator, ...)
// allocates in proportion to what it does, so it cannot outrun the time limit by more than this
// much allocation and one call's work.
constexpr size_t kBytesPerClockCheck = 64 * 1024;

// Past the deadline, during a run: marks the run out of time and makes the running thread's next
// instruction raise. Reads the line only where the call stack stays readable (see CountingAlloc).
void ExhaustFromAllocator(LuaStateContext* ctx) {
  ctx->budget_exhausted = true;
  ctx->time_exhausted = true;
#if LUA_VERSION_RELEASE_NUM <= 50404
  if (ctx->running && ctx->budget_line < 0) ctx->budget_line = CurrentLine(ctx->L);
#endif
  // Only hook fields and the call frames' trap flags are written, as lua.c's SIGINT handler does.
  lua_sethook(ctx->current != nullptr ? ctx->current : ctx->L, BudgetHook, LUA_MASKCOUNT, 1);
}

// Counts what the state holds (requested sizes) against its cap; small blocks come from and go
// back to the state's pool. Lua passes a block's exact size as `osize`, so the pool needs no
// header. Lua requires that shrinking never fails; growing beyond the cap answers NULL, which Lua
// turns into a memory error after one emergency collection.
void* CountingAlloc(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* ctx = static_cast<LuaStateContext*>(ud);
  LuaBlockPool& pool = *ctx->pool;
  const size_t old = ptr != nullptr ? osize : 0;  // for new blocks osize is a type tag
  if (nsize == 0) {
    if (ptr != nullptr) pool.Give(ptr, osize);
    ctx->memory_used -= old;
    return nullptr;
  }
  if (nsize > old && ctx->deadline_ns != 0) {
    // Once the run is out of time nothing grows any more: a refusal is a memory error the
    // script's pcall may catch, but the next instruction raises the time limit again.
    if (ctx->time_exhausted) return nullptr;
    if (ctx->memory_used + (nsize - old) > ctx->retune_above && !ctx->budget_exhausted) {
      // The next instruction calls the hook, which chooses the interval for the new size.
      ctx->retune_above = SIZE_MAX;
      lua_sethook(ctx->current != nullptr ? ctx->current : ctx->L, BudgetHook, LUA_MASKCOUNT, 1);
    }
    ctx->allocated_since_check += nsize - old;
    if (ctx->allocated_since_check >= kBytesPerClockCheck) {
      ctx->allocated_since_check = 0;
      if (!ctx->budget_exhausted && NowNs() >= ctx->deadline_ns) {
        ExhaustFromAllocator(ctx);
        return nullptr;
      }
    }
  }
  if (nsize > old && nsize - old > ctx->memory_limit - ctx->memory_used) {
#if LUA_VERSION_RELEASE_NUM <= 50404
    // Up to Lua 5.4.4 the call stack stays readable during every allocation (a growing stack is
    // copied, not moved in place); later releases hold offsets in it while reallocating it.
    if (ctx->running && ctx->memory_line < 0) ctx->memory_line = CurrentLine(ctx->L);
#endif
    ctx->memory_refused = true;
    // Lua answers a refusal with a full collection, which a script catching the memory error in a
    // loop repeats: each refusal reads the clock.
    if (ctx->deadline_ns != 0 && !ctx->budget_exhausted && NowNs() >= ctx->deadline_ns)
      ExhaustFromAllocator(ctx);
    return nullptr;
  }
  void* block = nullptr;
  if (ptr == nullptr) {
    block = pool.Take(nsize);
  } else if (!LuaBlockPool::Small(osize) && !LuaBlockPool::Small(nsize)) {
    block = std::realloc(ptr, nsize);
  } else if (LuaBlockPool::Small(osize) && LuaBlockPool::Small(nsize) &&
             LuaBlockPool::Class(osize) == LuaBlockPool::Class(nsize)) {
    block = ptr;  // the block's size class already fits
  } else {
    block = pool.Take(nsize);
    if (block == nullptr && nsize < osize) {
      block = ptr;  // a shrink must not fail: keep the larger block (Give takes it back as either size)
    } else if (block != nullptr) {
      std::memcpy(block, ptr, std::min(osize, nsize));
      pool.Give(ptr, osize);
    }
  }
  if (block == nullptr) return nullptr;
  ctx->memory_used = ctx->memory_used - old + nsize;
  return block;
}

}  // namespace

void sandbox_internal::BudgetHook(lua_State* L, lua_Debug* ar) {
  LuaStateContext* ctx = Ctx(L);
  if (!ctx->budget_exhausted) {
    const int interval = lua_gethookcount(L);
    ctx->instructions_used += interval;
    const bool out_of_instructions = ctx->instructions_used >= ctx->instruction_limit;
    if (!out_of_instructions && (ctx->deadline_ns == 0 || NowNs() < ctx->deadline_ns)) {
      if (interval != HookInterval(ctx)) TuneHook(ctx, L);
      return;
    }
    ctx->budget_exhausted = true;
    ctx->time_exhausted = !out_of_instructions;
    if (lua_getinfo(L, "l", ar) != 0) ctx->budget_line = ar->currentline;
  }
  lua_sethook(L, BudgetHook, LUA_MASKCOUNT, 1);
  luaL_error(L, ctx->time_exhausted ? "time limit exceeded" : "instruction limit exceeded");
}

namespace {

int Panic(lua_State* L) {
  const char* msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "(no message)";
  std::fprintf(stderr, "unprotected Lua error (a bug in the host): %s\n", msg);
  std::abort();
}

// Guarantees "name:line:" in front of every runtime error, also for error(obj, 0) and non-string
// error objects, without running any metamethod of the error object.
int MessageHandler(lua_State* L) {
  LuaStateContext* ctx = Ctx(L);
  const char* msg = nullptr;
  if (lua_type(L, 1) == LUA_TSTRING || lua_type(L, 1) == LUA_TNUMBER) {
    msg = lua_tostring(L, 1);
  } else {
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  const std::string& name = ctx->script_name;
  if (std::strncmp(msg, name.c_str(), name.size()) == 0 && msg[name.size()] == ':') {
    lua_pushstring(L, msg);
    return 1;
  }
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar) != 0; ++level) {
    if (lua_getinfo(L, "l", &ar) != 0 && ar.currentline > 0) {
      lua_pushfstring(L, "%s:%d: %s", name.c_str(), ar.currentline, msg);
      return 1;
    }
  }
  lua_pushfstring(L, "%s: %s", name.c_str(), msg);
  return 1;
}

void LogPrint(LuaStateContext* ctx, const char* text, size_t len) noexcept {
  try {
    if (ctx->logger == nullptr || !ctx->logger->Enabled(LogLevel::kInfo)) return;
    ctx->logger->Info("lua print", {{"script", ctx->script_name}, {"text", std::string(text, len)}});
  } catch (...) {
  }
}

int SandboxPrint(lua_State* L) {
  const int n = lua_gettop(L);
  luaL_Buffer buffer;
  luaL_buffinit(L, &buffer);
  for (int i = 1; i <= n; ++i) {
    if (i > 1) luaL_addchar(&buffer, '\t');
    luaL_tolstring(L, i, nullptr);
    luaL_addvalue(&buffer);
  }
  luaL_pushresult(&buffer);
  size_t len = 0;
  const char* text = lua_tolstring(L, -1, &len);
  LogPrint(Ctx(L), text, len < kMaxPrintBytes ? len : kMaxPrintBytes);
  return 0;
}

// A full collection per call would be CPU the instruction budget cannot see.
int SandboxCollectGarbage(lua_State* L) {
  const char* option = luaL_checkstring(L, 1);
  if (std::strcmp(option, "count") != 0)
    return luaL_error(L, "collectgarbage: only \"count\" is available in the sandbox");
  const int kbytes = lua_gc(L, LUA_GCCOUNT);
  const int rest = lua_gc(L, LUA_GCCOUNTB);
  lua_pushnumber(L, static_cast<lua_Number>(kbytes) + static_cast<lua_Number>(rest) / 1024.0);
  return 1;
}

// Finalizers would run Lua code during collections and lua_close, outside any call's budget.
int SandboxSetMetatable(lua_State* L) {
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_pushliteral(L, "__gc");
    const int type = lua_rawget(L, 2);
    lua_pop(L, 1);
    if (type != LUA_TNIL) return luaL_error(L, "__gc metamethods are not available in the sandbox");
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

int OpenSandbox(lua_State* L) {
  static const luaL_Reg kLibs[] = {
      {LUA_GNAME, luaopen_base},       {LUA_STRLIBNAME, luaopen_string}, {LUA_TABLIBNAME, luaopen_table},
      {LUA_MATHLIBNAME, luaopen_math}, {LUA_UTF8LIBNAME, luaopen_utf8},  {LUA_COLIBNAME, luaopen_coroutine},
      {LUA_OSLIBNAME, luaopen_os},
  };
  for (const luaL_Reg& lib : kLibs) {
    luaL_requiref(L, lib.name, lib.func, 1);
    lua_pop(L, 1);
  }

  lua_getglobal(L, LUA_STRLIBNAME);
  lua_getglobal(L, LUA_TABLIBNAME);
  OpenBoundedLibrary(L, lua_absindex(L, -2), lua_absindex(L, -1));
  lua_pop(L, 2);

  for (const char* name : {"dofile", "loadfile", "load", "warn", "require"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  lua_pushcfunction(L, SandboxPrint);
  lua_setglobal(L, "print");
  lua_pushcfunction(L, SandboxCollectGarbage);
  lua_setglobal(L, "collectgarbage");
  lua_getglobal(L, "setmetatable");
  lua_pushcclosure(L, SandboxSetMetatable, 1);
  lua_setglobal(L, "setmetatable");
  lua_pushcfunction(L, SandboxXpcall);
  lua_setglobal(L, "xpcall");

  lua_getglobal(L, LUA_COLIBNAME);
  lua_pushcfunction(L, SandboxResume);
  lua_setfield(L, -2, "resume");
  lua_pushcfunction(L, SandboxWrap);
  lua_setfield(L, -2, "wrap");
  lua_getfield(L, -1, "close");
  lua_pushcclosure(L, SandboxClose, 1);
  lua_setfield(L, -2, "close");
  lua_pop(L, 1);

  TimeFunctions(L, LUA_GNAME, {"rawequal", "tonumber", "next"});
  TimeFunctions(L, LUA_GNAME, {"pairs"}, TimedIteratorFactory);
  TimeFunctions(L, LUA_STRLIBNAME, {"byte", "packsize", "unpack"});
  TimeFunctions(L, LUA_TABLIBNAME, {"unpack"});
  TimeFunctions(L, LUA_UTF8LIBNAME, {"len", "offset", "codepoint"});
  TimeFunctions(L, LUA_UTF8LIBNAME, {"codes"}, TimedIteratorFactory);

  // The string table is also the strings' __index, so this removes ("").dump too.
  lua_getglobal(L, LUA_STRLIBNAME);
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");
  lua_pop(L, 1);

  lua_getglobal(L, LUA_OSLIBNAME);
  lua_createtable(L, 0, 3);
  for (const char* name : {"time", "date", "clock"}) {
    lua_getfield(L, -2, name);
    lua_setfield(L, -2, name);
  }
  lua_setglobal(L, LUA_OSLIBNAME);
  lua_pop(L, 1);

  lua_createtable(L, 0, 1);
  PushJsonNull(L);
  lua_setfield(L, -2, "null");
  lua_setglobal(L, "json");

  // Nothing a call does may outlast it (PushCallEnvironment): the library tables become
  // read-only views, the strings' metatable is hidden, and the random generator cannot be seeded
  // (a seed would carry a value into later calls).
  lua_getglobal(L, LUA_MATHLIBNAME);
  lua_pushnil(L);
  lua_setfield(L, -2, "randomseed");
  lua_pop(L, 1);
  for (const char* name : {LUA_STRLIBNAME, LUA_TABLIBNAME, LUA_MATHLIBNAME, LUA_UTF8LIBNAME, LUA_COLIBNAME,
                           LUA_OSLIBNAME, "json"}) {
    MakeReadOnlyView(L, name);
  }
  lua_pushliteral(L, "");
  lua_getmetatable(L, -1);
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 2);
  lua_getglobal(L, "rawset");
  lua_pushcclosure(L, SandboxRawSet, 1);
  lua_setglobal(L, "rawset");

  // The metatable of every call's environment: unknown names are read from the globals.
  lua_createtable(L, 0, 2);
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
  lua_setfield(L, -2, "__index");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_rawsetp(L, LUA_REGISTRYINDEX, &env_meta_key);
  return 0;
}

// Pushes a new, empty environment (its _G is itself).
void PushEmptyEnvironment(lua_State* L) {
  lua_createtable(L, 0, 8);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &env_meta_key);
  lua_setmetatable(L, -2);
  lua_pushliteral(L, "_G");
  lua_pushvalue(L, -2);
  lua_rawset(L, -3);
}

// Runs the compiled chunk in the environment on top of the stack (left there).
void RunTopLevelIn(lua_State* L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &chunk_key);
  lua_pushvalue(L, -2);
  lua_setupvalue(L, -2, 1);  // a main chunk's only upvalue is _ENV
  lua_call(L, 0, 0);
}

// Under Run: argument 1 is the compiled chunk. Keeps it, runs it in a fresh environment and keeps
// that one too.
int LoadTrampoline(lua_State* L) {
  lua_settop(L, 1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &chunk_key);
  PushEmptyEnvironment(L);
  RunTopLevelIn(L);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &loaded_env_key);
  return 0;
}

}  // namespace

void PushCallEnvironment(lua_State* L) {
  PushEmptyEnvironment(L);
  RunTopLevelIn(L);
}

void PushLoadedEnvironment(lua_State* L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &loaded_env_key);
}

void SandboxCheckTime(lua_State* L) {
  LuaStateContext* ctx = Ctx(L);
  if (!ctx->budget_exhausted) {
    if (ctx->deadline_ns == 0 || NowNs() < ctx->deadline_ns) return;
    ctx->budget_exhausted = true;
    ctx->time_exhausted = true;
    ctx->budget_line = CurrentLine(L);
  }
  // Also when another thread (a coroutine) or the allocator found the budget spent: this thread's
  // hook may not have struck yet.
  lua_sethook(L, BudgetHook, LUA_MASKCOUNT, 1);
  luaL_error(L, ctx->time_exhausted ? "time limit exceeded" : "instruction limit exceeded");
}

LuaBlockPool::~LuaBlockPool() {
  for (Free*& head : heads_) {
    while (head != nullptr) {
      Free* next = head->next;
      std::free(head);
      head = next;
    }
  }
}

void* LuaBlockPool::Take(size_t size) {
  if (!Small(size)) return std::malloc(size);
  const size_t c = Class(size);
  if (Free* block = heads_[c]) {
    heads_[c] = block->next;
    pooled_ -= c * kGranule;
    return block;
  }
  return std::malloc(c * kGranule);
}

void LuaBlockPool::Give(void* block, size_t size) {
  // A block kept by a failed shrink is larger than `size`: as a block of size's class it is
  // still big enough.
  if (!Small(size) || pooled_ + Class(size) * kGranule > limit_) {
    std::free(block);
    return;
  }
  const size_t c = Class(size);
  auto* f = static_cast<Free*>(block);
  f->next = heads_[c];
  heads_[c] = f;
  pooled_ += c * kGranule;
}

SandboxState::RunResult SandboxState::Create(const std::string& script_name, Logger& logger,
                                             const LuaLimits& limits, std::unique_ptr<SandboxState>& out) {
  std::unique_ptr<SandboxState> state(new SandboxState());
  state->ctx_ = std::make_unique<LuaStateContext>();
  state->keys_ = std::make_unique<LuaKeyCache>();
  LuaStateContext& ctx = *state->ctx_;
  ctx.script_name = script_name;
  ctx.logger = &logger;
  ctx.memory_limit = limits.memory_limit_bytes;
  ctx.instruction_limit = limits.instruction_limit;
  ctx.time_limit_ns = static_cast<std::int64_t>(limits.time_limit_ms) * 1000000;
  ctx.pool = std::make_unique<LuaBlockPool>(std::min<size_t>(limits.memory_limit_bytes, kMaxPooledBytes));
  ctx.hook_interval = limits.instruction_limit < kDefaultHookInterval
                          ? static_cast<int>(limits.instruction_limit > 0 ? limits.instruction_limit : 1)
                          : kDefaultHookInterval;

  lua_State* L = lua_newstate(CountingAlloc, &ctx);
  if (L == nullptr) {
    return {LuaOutcome::kMemory, script_name + ": memory limit of " +
                                     std::to_string(limits.memory_limit_bytes) +
                                     " bytes is too small for a Lua state"};
  }
  state->L_ = L;
  ctx.L = L;
  *static_cast<LuaStateContext**>(lua_getextraspace(L)) = &ctx;
  lua_atpanic(L, Panic);

  lua_pushcfunction(L, OpenSandbox);
  RunResult opened = state->Run(0, 0);
  if (opened.outcome != LuaOutcome::kOk || state->Tainted()) {
    if (opened.outcome == LuaOutcome::kOk || opened.outcome == LuaOutcome::kMemory) {
      opened.outcome = LuaOutcome::kMemory;
      opened.message = script_name + ": memory limit of " + std::to_string(limits.memory_limit_bytes) +
                       " bytes is too small for the Lua standard library";
    }
    return opened;
  }
  out = std::move(state);
  return {};
}

SandboxState::~SandboxState() {
  if (L_ == nullptr) return;
  // Anything Lua still runs while closing (to-be-closed values) dies at its first instruction.
  ctx_->budget_exhausted = true;
  lua_sethook(L_, BudgetHook, LUA_MASKCOUNT, 1);
  lua_close(L_);
}

SandboxState::RunResult SandboxState::LoadChunk(const std::string& source) {
  lua_settop(L_, 0);
  const std::string chunkname = "@" + ctx_->script_name;
  const int status = luaL_loadbufferx(L_, source.data(), source.size(), chunkname.c_str(), "t");
  if (status != LUA_OK) {
    RunResult result;
    if (status == LUA_ERRMEM || ctx_->memory_refused) {
      result.outcome = LuaOutcome::kMemory;
      result.message = ctx_->script_name + ": memory limit of " + std::to_string(ctx_->memory_limit) +
                       " bytes exceeded while compiling";
    } else {
      result.outcome = LuaOutcome::kRuntime;
      size_t len = 0;
      const char* msg = lua_type(L_, -1) == LUA_TSTRING ? lua_tolstring(L_, -1, &len) : nullptr;
      result.message = msg != nullptr ? std::string(msg, len) : ctx_->script_name + ": cannot compile";
    }
    lua_settop(L_, 0);
    return result;
  }
  lua_pushcfunction(L_, LoadTrampoline);
  lua_insert(L_, -2);
  return Run(1, 0);
}

SandboxState::RunResult SandboxState::Run(int nargs, int nresults) {
  LuaStateContext& ctx = *ctx_;
  ctx.instructions_used = 0;
  ctx.budget_exhausted = false;
  ctx.time_exhausted = false;
  ctx.budget_line = -1;
  ctx.memory_line = -1;
  ctx.deadline_ns = ctx.time_limit_ns > 0 ? NowNs() + ctx.time_limit_ns : 0;
  ctx.allocated_since_check = 0;
  ctx.current = L_;
  ctx.running = true;
  TuneHook(&ctx, L_);

  const int handler = lua_gettop(L_) - nargs;
  lua_pushcfunction(L_, MessageHandler);
  lua_insert(L_, handler);
  const int status = lua_pcall(L_, nargs, nresults, handler);
  lua_remove(L_, handler);
  ctx.running = false;
  ctx.deadline_ns = 0;
  ctx.current = nullptr;

  auto at_line = [&ctx](int line) {
    return ctx.script_name + (line > 0 ? ":" + std::to_string(line) : std::string());
  };
  RunResult result;
  if (ctx.budget_exhausted && ctx.time_exhausted) {
    result.outcome = LuaOutcome::kTime;
    result.message = at_line(ctx.budget_line) + ": time limit of " +
                     std::to_string(ctx.time_limit_ns / 1000000) + " ms exceeded";
  } else if (ctx.budget_exhausted) {
    result.outcome = LuaOutcome::kBudget;
    result.message = at_line(ctx.budget_line) + ": instruction limit of " +
                     std::to_string(ctx.instruction_limit) + " exceeded";
  } else if (status != LUA_OK && (status == LUA_ERRMEM || ctx.memory_refused)) {
    result.outcome = LuaOutcome::kMemory;
    result.message = at_line(ctx.memory_line) + ": memory limit of " + std::to_string(ctx.memory_limit) +
                     " bytes exceeded";
  } else if (status != LUA_OK) {
    result.outcome = LuaOutcome::kRuntime;
    size_t len = 0;
    const char* msg = lua_type(L_, -1) == LUA_TSTRING ? lua_tolstring(L_, -1, &len) : nullptr;
    result.message = msg != nullptr ? std::string(msg, len) : ctx.script_name + ": error";
  }
  if (status != LUA_OK || result.outcome != LuaOutcome::kOk) lua_settop(L_, handler - 1);
  return result;
}

}  // namespace rendezvous::core
