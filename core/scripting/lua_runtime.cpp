#include "scripting/lua_runtime.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <span>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>

#include "scripting/lua_sandbox.hpp"

namespace rendezvous::core {

struct LuaRuntime::Metrics {
  prometheus::Family<prometheus::Counter>& calls;
  prometheus::Family<prometheus::Counter>& errors;
  prometheus::Family<prometheus::Histogram>& duration;
  prometheus::Family<prometheus::Counter>& reloads;
};

namespace {

constexpr size_t kMaxScriptBytes = 4 * 1024 * 1024;
constexpr size_t kMaxNameLength = 48;  // stays below LUA_IDSIZE, so Lua never shortens it
constexpr size_t kMaxMessageBytes = 1024;
constexpr size_t kMaxIdleStates = 32;
constexpr size_t kMaxKnownFunctions = 64;

const char* KindName(LuaOutcome outcome) {
  switch (outcome) {
    case LuaOutcome::kOk: return "ok";
    case LuaOutcome::kRuntime: return "runtime";
    case LuaOutcome::kBudget: return "budget";
    case LuaOutcome::kMemory: return "memory";
    case LuaOutcome::kTime: return "time";
  }
  return "runtime";
}

std::string Truncate(std::string s) {
  if (s.size() > kMaxMessageBytes) {
    s.resize(kMaxMessageBytes);
    s += "...";
  }
  return s;
}

bool ValidName(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == '/';
  });
}

Result<std::string> ReadScriptFile(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return Status(ErrorCode::kNotFound,
                  "cannot read script file '" + path + "': " + std::strerror(errno));
  }
  std::string text;
  char buffer[8192];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) {
    text.append(buffer, n);
    if (text.size() > kMaxScriptBytes) {
      std::fclose(file);
      return Status(ErrorCode::kTooLarge, "script file '" + path + "' is larger than " +
                                              std::to_string(kMaxScriptBytes) + " bytes");
    }
  }
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) return Status(ErrorCode::kNotFound, "cannot read script file '" + path + "'");
  return text;
}

struct CallRequest {
  const std::string* function = nullptr;
  std::span<const nlohmann::json* const> args;
  bool missing = false;
  LuaKeyCache* keys = nullptr;  // the state's, for the arguments' object keys
};

// Runs under lua_pcall: every Lua error here (conversion, memory, the script itself) unwinds
// only to that pcall, and no local of this frame has a destructor.
int CallTrampoline(lua_State* L) {
  auto* request = static_cast<CallRequest*>(lua_touserdata(L, 1));
  lua_settop(L, 0);
  PushCallEnvironment(L);
  lua_pushlstring(L, request->function->data(), request->function->size());
  lua_rawget(L, -2);
  if (lua_type(L, -1) != LUA_TFUNCTION) {
    request->missing = true;
    return 0;
  }
  const std::span<const nlohmann::json* const> args = request->args;
  luaL_checkstack(L, static_cast<int>(std::min<size_t>(args.size(), 10000)) + LUA_MINSTACK,
                  "too many arguments");
  for (const nlohmann::json* arg : args) {
    if (request->keys != nullptr) {
      PushJson(L, *arg, *request->keys);
    } else {
      PushJson(L, *arg, 0);
    }
  }
  lua_call(L, static_cast<int>(args.size()), 1);
  return 1;
}

int HasFunctionTrampoline(lua_State* L) {
  auto* request = static_cast<CallRequest*>(lua_touserdata(L, 1));
  PushLoadedEnvironment(L);
  lua_pushlstring(L, request->function->data(), request->function->size());
  lua_rawget(L, -2);
  request->missing = lua_type(L, -1) != LUA_TFUNCTION;
  return 0;
}

// A loaded script: the current source and a pool of Lua states built from it. States go to one
// caller at a time; a state built from an older source, or one that hit a limit, is closed
// instead of going back to the pool.
class LuaScript final : public Script {
 public:
  LuaScript(std::string name, std::string path, LuaLimits limits, Logger& logger,
            std::shared_ptr<LuaRuntime::Metrics> metrics)
      : name_(std::move(name)),
        path_(std::move(path)),
        limits_(limits),
        logger_(logger),
        metrics_(std::move(metrics)),
        errors_runtime_(metrics_->errors.Add({{"script", name_}, {"kind", "runtime"}})),
        errors_budget_(metrics_->errors.Add({{"script", name_}, {"kind", "budget"}})),
        errors_memory_(metrics_->errors.Add({{"script", name_}, {"kind", "memory"}})),
        errors_time_(metrics_->errors.Add({{"script", name_}, {"kind", "time"}})),
        errors_missing_(metrics_->errors.Add({{"script", name_}, {"kind", "missing"}})),
        duration_(metrics_->duration.Add(
            {{"script", name_}},
            prometheus::Histogram::BucketBoundaries{0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1})),
        reloads_ok_(metrics_->reloads.Add({{"script", name_}, {"result", "ok"}})),
        reloads_error_(metrics_->reloads.Add({{"script", name_}, {"result", "error"}})) {}

  const std::string& name() const override { return name_; }
  const std::string& path() const override { return path_; }

  // First compilation (from Load); the caller has not shared the script yet.
  Status Initialize() {
    Result<std::string> text = ReadScriptFile(path_);
    if (!text.ok()) return text.status();
    std::unique_ptr<SandboxState> state;
    SandboxState::RunResult built = Build(*text, state);
    if (built.outcome != LuaOutcome::kOk) return Status(ErrorCode::kInvalid, Truncate(built.message));
    source_ = std::make_shared<const Source>(Source{std::move(text).value(), 1});
    idle_.push_back(Pooled{std::move(state), 1});
    return Status::Ok();
  }

  // Answered from a state of the current source, then remembered for that source (a reload
  // starts afresh): callers ask before every call.
  bool HasFunction(const std::string& function) override {
    std::uint64_t generation = 0;
    {
      std::lock_guard lock(mu_);
      generation = source_->generation;
      if (functions_generation_ == generation) {
        auto known = functions_.find(function);
        if (known != functions_.end()) return known->second;
      }
    }
    Pooled pooled;
    if (Acquire(pooled).outcome != LuaOutcome::kOk) return false;
    CallRequest request{&function, {}, false};
    lua_State* L = pooled.state->L();
    lua_settop(L, 0);
    lua_pushcfunction(L, HasFunctionTrampoline);
    lua_pushlightuserdata(L, &request);
    const SandboxState::RunResult run = pooled.state->Run(1, 0);
    lua_settop(L, 0);
    const bool found = run.outcome == LuaOutcome::kOk && !request.missing;
    const bool answered = run.outcome == LuaOutcome::kOk && pooled.generation == generation;
    Release(std::move(pooled));
    if (answered) {
      std::lock_guard lock(mu_);
      if (functions_generation_ != generation) {
        functions_.clear();
        functions_generation_ = generation;
      }
      if (functions_.size() < kMaxKnownFunctions) functions_.emplace(function, found);
    }
    return found;
  }

  Result<nlohmann::json> Call(const std::string& function,
                              const std::vector<nlohmann::json>& args) override {
    std::vector<const nlohmann::json*> pointers;
    pointers.reserve(args.size());
    for (const nlohmann::json& arg : args) pointers.push_back(&arg);
    return CallInPlace(function, pointers);
  }

  Result<nlohmann::json> CallInPlace(const std::string& function,
                                     std::span<const nlohmann::json* const> args) override {
    const auto start = std::chrono::steady_clock::now();
    CallCounter(function).Increment();
    Result<nlohmann::json> result = CallUnmetered(function, args);
    duration_.Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return result;
  }

  Status Reload() override {
    std::lock_guard reload_lock(reload_mu_);
    Result<std::string> text = ReadScriptFile(path_);
    if (!text.ok()) {
      reloads_error_.Increment();
      return text.status();
    }
    std::unique_ptr<SandboxState> state;
    SandboxState::RunResult built = Build(*text, state);
    if (built.outcome != LuaOutcome::kOk) {
      reloads_error_.Increment();
      return Status(ErrorCode::kInvalid, Truncate(built.message));
    }
    std::vector<Pooled> retired;
    {
      std::lock_guard lock(mu_);
      const std::uint64_t generation = source_->generation + 1;
      source_ = std::make_shared<const Source>(Source{std::move(text).value(), generation});
      retired.swap(idle_);
      idle_.push_back(Pooled{std::move(state), generation});
    }
    reloads_ok_.Increment();
    return Status::Ok();
  }

  void Unusable(const std::string& function, const std::string& message) override {
    Fail(function, LuaOutcome::kRuntime, name_ + ": " + function + " " + message);
  }

 private:
  struct Source {
    std::string text;
    std::uint64_t generation;
  };
  struct Pooled {
    std::unique_ptr<SandboxState> state;
    std::uint64_t generation = 0;
  };

  SandboxState::RunResult Build(const std::string& text, std::unique_ptr<SandboxState>& out) {
    std::unique_ptr<SandboxState> state;
    SandboxState::RunResult created = SandboxState::Create(name_, logger_, limits_, state);
    if (created.outcome != LuaOutcome::kOk) return created;
    SandboxState::RunResult loaded = state->LoadChunk(text);
    if (loaded.outcome != LuaOutcome::kOk) return loaded;
    if (state->Tainted()) {
      return {LuaOutcome::kMemory, name_ + ": memory limit of " +
                                       std::to_string(limits_.memory_limit_bytes) +
                                       " bytes reached while running the top level"};
    }
    out = std::move(state);
    return {};
  }

  // Hands out an idle state of the current source, or builds one.
  SandboxState::RunResult Acquire(Pooled& out) {
    std::shared_ptr<const Source> source;
    std::vector<Pooled> stale;
    {
      std::lock_guard lock(mu_);
      source = source_;
      while (!idle_.empty()) {
        Pooled candidate = std::move(idle_.back());
        idle_.pop_back();
        if (candidate.generation == source->generation) {
          out = std::move(candidate);
          break;
        }
        stale.push_back(std::move(candidate));
      }
    }
    if (out.state) return {};
    std::unique_ptr<SandboxState> state;
    SandboxState::RunResult built = Build(source->text, state);
    if (built.outcome != LuaOutcome::kOk) return built;
    out = Pooled{std::move(state), source->generation};
    return {};
  }

  void Release(Pooled pooled) {
    if (pooled.state->Tainted()) return;
    lua_settop(pooled.state->L(), 0);
    {
      std::lock_guard lock(mu_);
      if (pooled.generation == source_->generation && idle_.size() < kMaxIdleStates) {
        idle_.push_back(std::move(pooled));
        return;
      }
    }
    // A stale or surplus state is closed here, after the lock is released.
  }

  // lua_calls_total{script, function}: looked up once per function name rather than on every
  // call (a family lookup hashes the labels under the family's lock).
  prometheus::Counter& CallCounter(const std::string& function) {
    std::lock_guard lock(calls_mu_);
    auto it = calls_.find(function);
    if (it != calls_.end()) return *it->second;
    prometheus::Counter& counter = metrics_->calls.Add({{"script", name_}, {"function", function}});
    calls_.emplace(function, &counter);
    return counter;
  }

  Result<nlohmann::json> Fail(const std::string& function, LuaOutcome outcome,
                              std::string message) {
    message = Truncate(std::move(message));
    switch (outcome) {
      case LuaOutcome::kBudget: errors_budget_.Increment(); break;
      case LuaOutcome::kMemory: errors_memory_.Increment(); break;
      case LuaOutcome::kTime: errors_time_.Increment(); break;
      default: errors_runtime_.Increment(); break;
    }
    logger_.Warn("lua call failed", {{"script", name_},
                                     {"function", function},
                                     {"kind", KindName(outcome)},
                                     {"error", message}});
    return Status(ErrorCode::kInternal, std::move(message));
  }

  Result<nlohmann::json> CallUnmetered(const std::string& function,
                                       std::span<const nlohmann::json* const> args) {
    Pooled pooled;
    SandboxState::RunResult acquired = Acquire(pooled);
    if (acquired.outcome != LuaOutcome::kOk)
      return Fail(function, acquired.outcome, std::move(acquired.message));

    CallRequest request{&function, args, false, &pooled.state->keys()};
    lua_State* L = pooled.state->L();
    lua_settop(L, 0);
    lua_pushcfunction(L, CallTrampoline);
    lua_pushlightuserdata(L, &request);
    SandboxState::RunResult run = pooled.state->Run(1, 1);

    Result<nlohmann::json> result = nlohmann::json(nullptr);
    if (run.outcome != LuaOutcome::kOk) {
      result = Fail(function, run.outcome, std::move(run.message));
    } else if (request.missing) {
      errors_missing_.Increment();
      logger_.Warn("lua call failed", {{"script", name_},
                                       {"function", function},
                                       {"kind", "missing"},
                                       {"error", "no such function"}});
      result = Status(ErrorCode::kNotFound,
                      "script '" + name_ + "' has no function '" + function + "'");
    } else {
      Result<nlohmann::json> converted = ToJsonWithin(L, -1, limits_.memory_limit_bytes);
      if (converted.ok()) {
        result = std::move(converted);
      } else {
        result = Fail(function, LuaOutcome::kRuntime,
                      name_ + ": " + function + " returned a value that is not JSON: " +
                          converted.status().message());
      }
    }
    lua_settop(L, 0);
    Release(std::move(pooled));
    return result;
  }

  const std::string name_;
  const std::string path_;
  const LuaLimits limits_;
  Logger& logger_;
  const std::shared_ptr<LuaRuntime::Metrics> metrics_;
  prometheus::Counter& errors_runtime_;
  prometheus::Counter& errors_budget_;
  prometheus::Counter& errors_memory_;
  prometheus::Counter& errors_time_;
  prometheus::Counter& errors_missing_;
  prometheus::Histogram& duration_;
  prometheus::Counter& reloads_ok_;
  prometheus::Counter& reloads_error_;

  std::mutex reload_mu_;  // one Reload at a time
  std::mutex mu_;         // source_, idle_, functions_
  std::shared_ptr<const Source> source_;
  std::vector<Pooled> idle_;
  std::map<std::string, bool, std::less<>> functions_;  // HasFunction's answers for functions_generation_
  std::uint64_t functions_generation_ = 0;
  std::mutex calls_mu_;
  std::map<std::string, prometheus::Counter*, std::less<>> calls_;
};

}  // namespace

LuaRuntime::LuaRuntime(prometheus::Registry& registry, Logger& logger)
    : logger_(logger),
      metrics_(std::make_shared<Metrics>(Metrics{
          prometheus::BuildCounter()
              .Name("lua_calls_total")
              .Help("Calls of Lua script functions")
              .Register(registry),
          prometheus::BuildCounter()
              .Name("lua_errors_total")
              .Help("Failed Lua calls by kind: runtime error, instruction budget, memory limit, "
                    "time limit, missing function")
              .Register(registry),
          prometheus::BuildHistogram()
              .Name("lua_call_duration_seconds")
              .Help("Duration of Lua script calls, including building a state when needed")
              .Register(registry),
          prometheus::BuildCounter()
              .Name("lua_reloads_total")
              .Help("Script reloads by result")
              .Register(registry),
      })) {}

LuaRuntime::~LuaRuntime() = default;

Result<std::shared_ptr<Script>> LuaRuntime::Load(const std::string& name, const std::string& path,
                                                 const LuaLimits& limits) {
  if (!ValidName(name)) {
    return Status(ErrorCode::kInvalid, "script name '" + name.substr(0, kMaxNameLength) +
                                           "' must be 1-48 characters of [A-Za-z0-9_./-]");
  }
  if (limits.instruction_limit <= 0 || limits.memory_limit_bytes == 0 || limits.time_limit_ms <= 0) {
    return Status(ErrorCode::kInvalid,
                  "script '" + name + "': instruction, memory and time limits must be positive");
  }
  auto script = std::make_shared<LuaScript>(name, path, limits, logger_, metrics_);
  Status initialized = script->Initialize();
  if (!initialized.ok()) return initialized;

  std::lock_guard lock(mu_);
  std::erase_if(scripts_, [](const std::weak_ptr<Script>& s) { return s.expired(); });
  scripts_.push_back(script);
  return std::shared_ptr<Script>(std::move(script));
}

void LuaRuntime::ReloadAll() {
  std::vector<std::shared_ptr<Script>> live;
  {
    std::lock_guard lock(mu_);
    std::erase_if(scripts_, [](const std::weak_ptr<Script>& s) { return s.expired(); });
    for (const auto& weak : scripts_)
      if (auto script = weak.lock()) live.push_back(std::move(script));
  }
  for (const auto& script : live) {
    Status status = script->Reload();
    if (status.ok()) {
      logger_.Info("lua script reloaded", {{"script", script->name()}, {"path", script->path()}});
    } else {
      logger_.Warn("lua script reload failed; the previous version stays in force",
                   {{"script", script->name()}, {"path", script->path()}, {"error", status.message()}});
    }
  }
}

Result<ScriptCheck> LuaRuntime::Check(const std::string& name, const std::string& path,
                                      const LuaLimits& limits, const std::string& function,
                                      const std::vector<nlohmann::json>& args) {
  LuaCheckResult r = CheckLuaCall(name, path, limits, function, args, logger_);
  if (!r.status.ok()) return r.status;
  ScriptCheck out;
  out.result = std::move(r.result);
  out.instructions = r.instructions;
  out.memory_bytes = r.memory_bytes;
  out.duration_micros = r.duration_micros;
  return out;
}

LuaCheckResult CheckLuaCall(const std::string& name, const std::string& path, const LuaLimits& limits,
                            const std::string& function, const std::vector<nlohmann::json>& args, Logger& logger) {
  LuaCheckResult out;
  auto failed = [&](LuaOutcome outcome, const std::string& message) {
    out.status = Status(ErrorCode::kInvalid, std::string(KindName(outcome)) + ": " + message);
    return out;
  };
  Result<std::string> text = ReadScriptFile(path);
  if (!text.ok()) {
    out.status = text.status();
    return out;
  }
  std::unique_ptr<SandboxState> state;
  SandboxState::RunResult created = SandboxState::Create(name, logger, limits, state);
  if (created.outcome != LuaOutcome::kOk) return failed(created.outcome, created.message);
  SandboxState::RunResult loaded = state->LoadChunk(*text);
  if (loaded.outcome != LuaOutcome::kOk) return failed(loaded.outcome, loaded.message);

  std::vector<const nlohmann::json*> pointers;
  for (const nlohmann::json& arg : args) pointers.push_back(&arg);
  CallRequest request{&function, pointers, false, &state->keys()};
  lua_State* L = state->L();
  auto call = [&] {
    lua_settop(L, 0);
    lua_pushcfunction(L, CallTrampoline);
    lua_pushlightuserdata(L, &request);
    return state->Run(1, 1);
  };
  // The call as production makes it (its time, memory and outcome), then once more counting every
  // instruction: production counts them in steps of the hook's interval.
  const auto started = std::chrono::steady_clock::now();
  SandboxState::RunResult run = call();
  out.duration_micros =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count();
  out.instructions = state->InstructionsUsed();
  out.memory_bytes = state->MemoryUsed();
  if (run.outcome != LuaOutcome::kOk) return failed(run.outcome, run.message);
  if (request.missing) {
    out.status = Status(ErrorCode::kNotFound, "script '" + name + "' has no function '" + function + "'");
    return out;
  }
  Result<nlohmann::json> converted = ToJsonWithin(L, -1, limits.memory_limit_bytes);
  lua_settop(L, 0);
  if (!converted.ok()) {
    return failed(LuaOutcome::kRuntime,
                  name + ": " + function + " returned a value that is not JSON: " + converted.status().message());
  }
  out.result = std::move(converted.value());
  state->CountEveryInstruction();
  if (call().outcome == LuaOutcome::kOk) out.instructions = state->InstructionsUsed();
  lua_settop(L, 0);
  return out;
}

}  // namespace rendezvous::core
