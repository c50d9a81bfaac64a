// The sandboxed Lua 5.4 implementation of ScriptRuntime (DESIGN §6).
//
// What a script sees: the base library without dofile, loadfile, load and warn (collectgarbage
// answers only "count"; setmetatable refuses metatables with __gc), and string (without dump),
// table, math, utf8, coroutine, os.time/os.date/os.clock, plus `json.null`. No io, package,
// require, debug. Chunks are loaded as text only, never bytecode. `print` writes one Info line to
// the host logger with the field {"script": name} (at most 1 KiB of text per call).
//
// Limits (LuaLimits) apply to every call and to running a file's top level: an instruction budget
// (a count hook; once spent, every further hook tick raises, so a script's own pcall cannot swallow
// it, and the call is reported as a budget failure even if the script caught the error), a time
// limit, and a memory cap per Lua state (a counting allocator; a refusal is reported with the
// script's line). A state that hit a limit is closed and the next call builds a fresh one from the
// current source.
//
// The time limit holds whatever the script does; the clock is read
// - by the hook, every interval of instructions; the interval shrinks as the state's memory grows
//   (one instruction may compare or copy a string or stack as large as the state), so that the
//   work between two reads stays about the same;
// - by the allocator, every 64 KiB handed out: the C functions that build large values (string.upper,
//   lower, reverse, format, the .. operator, ...) allocate in proportion to their work. Past the
//   deadline it refuses every growth and makes the running thread's next instruction raise;
// - by the library functions that loop in C: the pattern functions string.find/match/gmatch/gsub,
//   string.rep, table.insert/remove/move/concat/sort are the sandbox's own, charging their steps;
// - before each call of the functions that loop in C without allocating (rawequal, tonumber, next
//   and the iterator of pairs, string.byte/packsize/unpack, table.unpack, utf8.len/offset/codepoint
//   and the iterator of utf8.codes).
// Lua runs a message handler after the hook's error with hooks off: xpcall's handler is not called
// once the budget ran out (the error is handed on as it is). coroutine.resume and wrap are the
// sandbox's own (the allocator knows the running thread); a coroutine that died of the budget is not
// closed, since its __close metamethods would run with its hooks off.
//
// Nothing persists from one call to the next: each call runs the file's top level again in a new
// environment (its globals) whose unknown names are read from the sandbox's globals, and the
// library tables are read-only views (rawset refuses them, the strings' metatable is hidden,
// math.randomseed is absent). A call can neither see nor leave data for another delivery or user.
//
// Metrics (on the registry given to LuaRuntime): lua_calls_total{script,function},
// lua_errors_total{script,kind="runtime|budget|memory|time|missing"}, lua_call_duration_seconds{script},
// lua_reloads_total{script,result="ok|error"}. Failures are logged at Warn with the script, the
// function and the message (which carries the line); arguments are never logged.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <lua.hpp>
#include <nlohmann/json.hpp>
#include <prometheus/registry.h>

#include "rendezvous/log.hpp"
#include "rendezvous/scripting.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::core {

// Deepest nesting converted in either direction; deeper values (or Lua tables with cycles) fail.
inline constexpr int kLuaJsonMaxDepth = 64;

// Loads scripts and tracks them for ReloadAll. Thread-safe. The registry and the logger must
// outlive the runtime and every Script it returned; a Script may outlive the runtime (it then just
// drops out of ReloadAll).
class LuaRuntime final : public ScriptRuntime {
 public:
  LuaRuntime(prometheus::Registry& registry, Logger& logger);
  ~LuaRuntime() override;

  // Reads and compiles the file and runs its top level once under the limits. Errors: kInvalid
  // for a bad name or limits, a syntax error or a failing top level (message "name:line: ...");
  // kNotFound when the file cannot be read; kTooLarge for a file over 4 MiB.
  Result<std::shared_ptr<Script>> Load(const std::string& name, const std::string& path,
                                       const LuaLimits& limits) override;
  // Reloads every live script; failures are logged (Warn) and leave that script's previous
  // version in force.
  void ReloadAll() override;
  // CheckLuaCall with the runtime's logger.
  Result<ScriptCheck> Check(const std::string& name, const std::string& path, const LuaLimits& limits,
                            const std::string& function, const std::vector<nlohmann::json>& args) override;

  struct Metrics;

 private:
  Logger& logger_;
  std::shared_ptr<Metrics> metrics_;
  std::mutex mu_;
  std::vector<std::weak_ptr<Script>> scripts_;
};

// The object keys one Lua state has been handed, kept as its Lua strings so that pushing a key
// again is a hash of its bytes and a table read rather than Lua's interning of a new string. Keys
// repeat from one event to the next (the same members in every booking), so most are found. At
// most kMaxKeys keys of at most kMaxKeyBytes each; once full it keeps those it has. Holds no
// allocation of its own beyond its fixed arrays (a Lua error may unwind through Push). Belongs to
// one lua_State (its strings live in that state's registry); not thread-safe.
class LuaKeyCache {
 public:
  static constexpr int kMaxKeys = 256;
  static constexpr size_t kMaxKeyBytes = 40;

  // Pushes `key` (a Lua string). `strings` is the absolute stack index of the state's table of
  // cached strings (PushJson pushes it). Raises Lua errors (out of memory).
  void Push(lua_State* L, int strings, std::string_view key);

 private:
  static constexpr int kSlots = 2 * kMaxKeys;  // a power of two: open addressing, half full at most
  struct Entry {
    std::uint32_t hash;
    std::uint8_t size;
    char bytes[kMaxKeyBytes];
  };
  int used_ = 0;
  std::int16_t slots_[kSlots] = {};  // 0: free, else 1 + the index of an entry (and of its string)
  Entry entries_[kMaxKeys];
};

// JSON -> Lua. Pushes one value: objects become tables with string keys (members whose value is
// null are left out), arrays become sequences 1..n with JSON null as the `json.null` sentinel,
// null at the top level (depth 0) becomes nil; integers stay integers (unsigned values above
// INT64_MAX become floats), floats stay floats, strings are pushed byte for byte. Raises a Lua
// error (nesting deeper than kLuaJsonMaxDepth, out of memory), so call it from protected code (a C
// function run by lua_pcall), never bare from C++.
void PushJson(lua_State* L, const nlohmann::json& value, int depth = 0);
// The same, pushing object keys through `keys` (one cache per lua_State, used with no other).
void PushJson(lua_State* L, const nlohmann::json& value, LuaKeyCache& keys);

// Lua -> JSON for the value at `index`. nil -> null; the `json.null` sentinel -> null; booleans;
// integers stay integers, floats stay floats (NaN and infinities fail); strings byte for byte;
// a table whose keys are exactly 1..n -> array; an empty table -> {} (an empty object); a table
// with only string keys -> object; anything else (mixed or sparse keys, functions, userdata,
// threads, nesting deeper than kLuaJsonMaxDepth, which also catches cycles) -> kInvalid. Uses raw
// access only: never runs metamethods and never raises a Lua error, so it is safe outside
// lua_pcall. Leaves the stack as it found it.
Result<nlohmann::json> ToJson(lua_State* L, int index, int depth = 0);
// The same, failing (kInvalid, "value larger than N bytes as JSON") once the result would hold
// more than `max_bytes`, counting 16 bytes a value plus the bytes of strings and keys: a table that
// refers to one long string or one table many times converts to far more than the Lua memory it
// occupies. The runtime converts a call's result within the state's memory limit.
Result<nlohmann::json> ToJsonWithin(lua_State* L, int index, size_t max_bytes);

// One call of a script's function as a delivery makes it, measured (`rendezvous lua check`): the
// file compiled and its top level run in a fresh sandbox state under `limits`, then `function`
// called with `args`. No metrics, no pool, nothing logged but the script's own print.
struct LuaCheckResult {
  Status status;                 // failures: the kind and "name:line: ..." where the line is known
  nlohmann::json result;         // on success
  long instructions = 0;         // the call's VM instructions (counted in a second, exact run)
  size_t memory_bytes = 0;       // the state's memory after the call
  int64_t duration_micros = 0;   // the call's wall-clock time
};
LuaCheckResult CheckLuaCall(const std::string& name, const std::string& path, const LuaLimits& limits,
                            const std::string& function, const std::vector<nlohmann::json>& args, Logger& logger);

// Pushes the `json.null` sentinel (a light userdata), for code that builds Lua values itself.
void PushJsonNull(lua_State* L);

}  // namespace rendezvous::core
