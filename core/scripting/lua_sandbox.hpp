// One sandboxed Lua state with its limits: the restricted standard library, the counting
// allocator, the instruction-budget hook and protected runs that classify failures. Internal to
// core/scripting (LuaRuntime builds scripts on it).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <lua.hpp>

#include "rendezvous/log.hpp"
#include "rendezvous/scripting.hpp"

namespace rendezvous::core {

enum class LuaOutcome { kOk, kRuntime, kBudget, kMemory, kTime };

class LuaKeyCache;

// Small blocks freed by a state, kept for its next allocations of the same size class: a call's
// converted arguments are many small tables and strings that die together, and this spares the
// general-purpose allocator most of them. Holds at most `limit` bytes; the rest is freed.
class LuaBlockPool {
 public:
  static constexpr size_t kGranule = 16;
  static constexpr size_t kMaxBlock = 256;  // larger blocks go straight to malloc/realloc/free

  explicit LuaBlockPool(size_t limit = 0) : limit_(limit) {}
  ~LuaBlockPool();
  LuaBlockPool(const LuaBlockPool&) = delete;
  LuaBlockPool& operator=(const LuaBlockPool&) = delete;

  static bool Small(size_t size) { return size <= kMaxBlock; }
  static size_t Class(size_t size) { return (size + kGranule - 1) / kGranule; }  // 1..16 for small sizes
  // A block of at least `size` bytes (size > 0), or nullptr when malloc fails.
  void* Take(size_t size);
  // Gives back a block Take (or malloc) returned for `size` bytes.
  void Give(void* block, size_t size);

 private:
  struct Free {
    Free* next;
  };
  Free* heads_[kMaxBlock / kGranule + 1] = {};
  size_t limit_ = 0;
  size_t pooled_ = 0;
};

// What the allocator, the hook and the sandbox functions of one state share. Lives at a stable
// address owned by its SandboxState; the state's extra space points at it.
struct LuaStateContext {
  std::string script_name;
  Logger* logger = nullptr;
  lua_State* L = nullptr;  // the main thread, for the line of a refused allocation
  bool running = false;    // inside Run
  size_t memory_limit = 0;
  size_t memory_used = 0;
  bool memory_refused = false;  // the allocator refused a request since the state was created
  int memory_line = -1;         // the script's line at the first refusal of the current run
  long instruction_limit = 0;
  long instructions_used = 0;
  int hook_interval = 1000;       // the most instructions between two hook calls
  size_t retune_above = 0;        // memory at which the allocator makes the hook choose its interval again
  bool budget_exhausted = false;  // instructions or time ran out: every hook tick raises
  bool time_exhausted = false;
  int budget_line = -1;
  std::int64_t time_limit_ns = 0;
  std::int64_t deadline_ns = 0;  // steady clock; 0 outside a run
  size_t allocated_since_check = 0;    // bytes the allocator handed out since it last read the clock
  lua_State* current = nullptr;        // the thread running now: L, or the coroutine being resumed
  std::unique_ptr<LuaBlockPool> pool;  // outlives the lua_State (destroyed after lua_close)
};

// Owns a lua_State. Not thread-safe: one thread at a time uses it (LuaRuntime pools them).
class SandboxState {
 public:
  struct RunResult {
    LuaOutcome outcome = LuaOutcome::kOk;
    std::string message;  // for failures: "name:line: ..." where the line is known
  };

  // Opens the restricted library. Fails (kMemory) when the memory limit is too small for it.
  static RunResult Create(const std::string& script_name, Logger& logger, const LuaLimits& limits,
                          std::unique_ptr<SandboxState>& out);
  ~SandboxState();
  SandboxState(const SandboxState&) = delete;
  SandboxState& operator=(const SandboxState&) = delete;

  lua_State* L() const { return L_; }
  // For PushJson's object keys into this state.
  LuaKeyCache& keys() { return *keys_; }

  // Compiles `source` as a text chunk named "@name" and runs its top level under the limits, in
  // a fresh environment (see PushCallEnvironment), which HasFunction-like lookups can read with
  // PushLoadedEnvironment. The compiled chunk is kept for PushCallEnvironment.
  RunResult LoadChunk(const std::string& source);

  // Calls the function below `nargs` arguments on top of the stack under lua_pcall with the
  // message handler, with a fresh instruction budget. On kOk the `nresults` results are left on
  // the stack; on failure nothing is. A run is a budget failure whenever the budget ran out, even
  // if the script caught the error, and a memory failure when it failed after the allocator
  // refused a request.
  RunResult Run(int nargs, int nresults);

  // The state hit the budget or the memory cap: its globals are not to be trusted any more.
  bool Tainted() const { return ctx_->budget_exhausted || ctx_->memory_refused; }
  size_t MemoryUsed() const { return ctx_->memory_used; }
  // Instructions the last Run counted, in steps of the hook's interval.
  long InstructionsUsed() const { return ctx_->instructions_used; }
  // Makes the instruction hook run at every instruction (exact counts, slower runs).
  void CountEveryInstruction() { ctx_->hook_interval = 1; }

 private:
  SandboxState() = default;

  std::unique_ptr<LuaStateContext> ctx_;
  std::unique_ptr<LuaKeyCache> keys_;
  lua_State* L_ = nullptr;
};

// Pushes a fresh environment for one call: a new table whose missing names are read from the
// sandbox's globals (read-only: the library tables are read-only views, the base functions
// values), with the chunk's top level run again in it, so nothing a call stores, in globals or in
// the top level's locals, is seen by any later call. Raises Lua errors: call under Run.
void PushCallEnvironment(lua_State* L);
// Pushes the environment LoadChunk's run of the top level filled.
void PushLoadedEnvironment(lua_State* L);

// For C functions that loop on their own (the bounded string and table functions): raises the
// time-limit error once the current run's deadline has passed, and the budget's error whenever
// the run is already out of budget. Cheap enough to call every few thousand steps.
void SandboxCheckTime(lua_State* L);

// Replaces the string library's pattern functions (find, match, gmatch, gsub) and rep, and the
// table library's insert, remove, move, concat and sort in the tables at `string_index` and
// `table_index` with versions whose work is charged against the run's time limit (lua_patterns.cpp,
// lua_bounded_tables.cpp).
void OpenBoundedLibrary(lua_State* L, int string_index, int table_index);

}  // namespace rendezvous::core
