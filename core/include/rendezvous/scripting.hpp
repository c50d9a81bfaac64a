// The sandboxed Lua runtime (DESIGN §6): operator scripts called with JSON values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rendezvous/status.hpp"

namespace rendezvous {

// Per call (instructions, time) and per Lua state (memory). The time limit covers everything a
// call does, the library's C functions included.
struct LuaLimits {
  long instruction_limit = 1000000;
  size_t memory_limit_bytes = 16 * 1024 * 1024;
  long time_limit_ms = 50;
};

// A loaded script file. Calls are thread-safe: each worker thread gets its own Lua state for the
// script, built from the current source. Reload() recompiles from the file; when compilation
// fails the previous source stays in force and the error is returned.
class Script {
 public:
  virtual ~Script() = default;
  virtual const std::string& name() const = 0;
  virtual const std::string& path() const = 0;
  virtual bool HasFunction(const std::string& function) = 0;
  // Calls a global function with arguments converted from JSON (objects -> tables, arrays ->
  // sequences, null -> nil). Returns the first result converted to JSON (nil -> null).
  // Errors (runtime error, instruction or memory limit, missing function) return a Status whose
  // message names the script and line; they are logged and counted by the runtime.
  virtual Result<nlohmann::json> Call(const std::string& function,
                                      const std::vector<nlohmann::json>& args) = 0;
  virtual Status Reload() = 0;
  // For an answer of `function` the caller cannot use (the wrong type, text that is not UTF-8):
  // logged at Warn with `message` and counted as a failed call like a runtime error. The default
  // does nothing; the Lua runtime counts it in lua_errors_total{kind="runtime"}.
  virtual void Unusable(const std::string& function, const std::string& message) {
    (void)function;
    (void)message;
  }
  // Call, with the arguments read where they are: nothing is copied, so a large value (an
  // event) costs only its conversion. They must stay alive and unchanged during the call. The
  // default copies them into Call's vector; the Lua runtime reads them in place.
  virtual Result<nlohmann::json> CallInPlace(const std::string& function,
                                             std::span<const nlohmann::json* const> args) {
    std::vector<nlohmann::json> values;
    values.reserve(args.size());
    for (const nlohmann::json* arg : args) values.push_back(*arg);
    return Call(function, values);
  }
};

// One call of a script's function, measured (ScriptRuntime::Check).
struct ScriptCheck {
  nlohmann::json result;        // the function's first result
  long instructions = 0;        // the call's VM instructions
  size_t memory_bytes = 0;      // the state's memory after the call
  int64_t duration_micros = 0;  // the call's wall-clock time
};

class ScriptRuntime {
 public:
  virtual ~ScriptRuntime() = default;
  // Compiles the file now. Errors: file missing, syntax error (with line).
  virtual Result<std::shared_ptr<Script>> Load(const std::string& name, const std::string& path,
                                               const LuaLimits& limits) = 0;
  // Reloads every loaded script (SIGHUP).
  virtual void ReloadAll() = 0;
  // One call as a live call makes it, for a check from the command line: the file compiled and its
  // top level run in a fresh state under `limits`, then `function` called with `args`. Nothing is
  // kept, counted or logged but the script's own print. Errors name the script and line
  // ("name:line: ..."). The default: kInternal, checking not supported.
  virtual Result<ScriptCheck> Check(const std::string& name, const std::string& path, const LuaLimits& limits,
                                    const std::string& function, const std::vector<nlohmann::json>& args) {
    (void)name, (void)path, (void)limits, (void)function, (void)args;
    return Status(ErrorCode::kInternal, "this script runtime cannot check scripts");
  }
};

}  // namespace rendezvous
