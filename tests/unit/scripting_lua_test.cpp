#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "scripting/lua_runtime.hpp"

namespace rendezvous::core {
namespace {

using nlohmann::json;

// Records what the runtime logs, so tests can check fields and that arguments never appear.
class RecordingLogger final : public Logger {
 public:
  struct Line {
    LogLevel level;
    std::string message;
    json fields;
  };
  void Log(LogLevel level, std::string_view message, const json& fields) override {
    std::lock_guard lock(mu_);
    lines_.push_back({level, std::string(message), fields});
  }
  bool Enabled(LogLevel) const override { return true; }
  std::vector<Line> lines() {
    std::lock_guard lock(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::vector<Line> lines_;
};

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "rdv-lua-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string file = (std::filesystem::path(path_) / name).string();
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
    return file;
  }

 private:
  std::string path_;
};

double MetricValue(prometheus::Registry& registry, const std::string& family,
                   const std::map<std::string, std::string>& labels) {
  for (const auto& f : registry.Collect()) {
    if (f.name != family) continue;
    for (const auto& m : f.metric) {
      bool match = true;
      for (const auto& [k, v] : labels) {
        bool found = false;
        for (const auto& l : m.label)
          if (l.name == k && l.value == v) found = true;
        match = match && found;
      }
      if (!match) continue;
      if (f.type == prometheus::MetricType::Histogram)
        return static_cast<double>(m.histogram.sample_count);
      return m.counter.value;
    }
  }
  return -1;
}

class LuaRuntimeTest : public ::testing::Test {
 protected:
  std::shared_ptr<Script> MustLoad(const std::string& name, const std::string& source,
                                   LuaLimits limits = {}) {
    auto loaded = runtime_.Load(name, dir_.Write(name + ".lua", source), limits);
    EXPECT_TRUE(loaded.ok()) << loaded.status().message();
    return loaded.ok() ? *loaded : nullptr;
  }

  TempDir dir_;
  prometheus::Registry registry_;
  RecordingLogger logger_;
  LuaRuntime runtime_{registry_, logger_};
};

// --- JSON <-> Lua ---------------------------------------------------------------------------

// Pushes a JSON value under lua_pcall, as the runtime does, and converts it back.
Result<json> RoundTrip(const json& value) {
  lua_State* L = luaL_newstate();
  struct Box {
    const json* value;
  } box{&value};
  lua_pushcfunction(L, [](lua_State* L) -> int {
    auto* b = static_cast<Box*>(lua_touserdata(L, 1));
    PushJson(L, *b->value, 0);
    return 1;
  });
  lua_pushlightuserdata(L, &box);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    std::string msg = lua_tostring(L, -1);
    lua_close(L);
    return Status(ErrorCode::kInvalid, msg);
  }
  const int top = lua_gettop(L);
  Result<json> back = ToJson(L, -1);
  EXPECT_EQ(top, lua_gettop(L)) << "ToJson must leave the stack as it found it";
  lua_close(L);
  return back;
}

TEST(LuaJsonTest, NestedValuesRoundTrip) {
  const json value = json::parse(R"({
    "triggerEvent": "BOOKING_CREATED",
    "payload": {"id": 42, "price": 12.5, "paid": false, "tags": ["a", "b"],
                "attendees": [{"name": "Zoë", "email": "z@example.com"}],
                "deep": {"deeper": {"deepest": [1, [2, [3]]]}}}
  })");
  Result<json> back = RoundTrip(value);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, value);
}

TEST(LuaJsonTest, ArraysKeepNullsAsSentinel) {
  const json value = json::parse(R"([1, null, "x", null, [null]])");
  Result<json> back = RoundTrip(value);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, value);
}

TEST(LuaJsonTest, IntegersStayIntegersFloatsStayFloats) {
  Result<json> back = RoundTrip(json::parse(R"({"i": 3, "f": 3.0, "big": 9007199254740993,
                                                "neg": -7, "half": 0.5})"));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE((*back)["i"].is_number_integer());
  EXPECT_TRUE((*back)["f"].is_number_float());
  EXPECT_EQ((*back)["big"].get<std::int64_t>(), 9007199254740993LL);
  EXPECT_EQ((*back)["neg"].get<std::int64_t>(), -7);
  EXPECT_DOUBLE_EQ((*back)["half"].get<double>(), 0.5);
  EXPECT_EQ(back->dump(), R"({"big":9007199254740993,"f":3.0,"half":0.5,"i":3,"neg":-7})");
}

TEST(LuaJsonTest, UnicodeAndBinaryStringsSurvive) {
  const std::string binary("a\0b\xff", 4);
  const json value = {{"name", "日本語 — café 🎉"}, {"bytes", binary}};
  Result<json> back = RoundTrip(value);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ((*back)["name"], "日本語 — café 🎉");
  EXPECT_EQ((*back)["bytes"].get<std::string>(), binary);
}

TEST(LuaJsonTest, TopLevelNullIsNilAndEmptyTableIsObject) {
  Result<json> null_back = RoundTrip(json(nullptr));
  ASSERT_TRUE(null_back.ok());
  EXPECT_TRUE(null_back->is_null());
  Result<json> empty = RoundTrip(json::array());
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, json::object()) << "an empty Lua table converts to {} (documented)";
  Result<json> object_null = RoundTrip(json::parse(R"({"a": null, "b": 1})"));
  ASSERT_TRUE(object_null.ok());
  EXPECT_EQ(*object_null, json::parse(R"({"b": 1})")) << "null members are absent keys in Lua";
}

TEST(LuaJsonTest, TooDeepJsonIsALuaErrorNotACrash) {
  json deep = json::array();
  for (int i = 0; i < 200; ++i) deep = json::array({deep});
  Result<json> back = RoundTrip(deep);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("deeper"), std::string::npos) << back.status().message();
}

TEST(LuaJsonTest, UnconvertibleLuaValuesFail) {
  lua_State* L = luaL_newstate();
  luaL_openlibs(L);
  const char* cases[] = {
      "return function() end",               // function
      "return coroutine.create(print)",      // thread
      "return 0/0",                          // NaN
      "return math.huge",                    // infinity
      "return {1, 2, nil, 4}",               // sparse
      "return {1, x = 2}",                   // mixed keys
      "return {[1.5] = true}",               // float key
      "local t = {} t.self = t return t",    // cycle: caught by the depth limit
  };
  for (const char* code : cases) {
    ASSERT_EQ(luaL_dostring(L, code), LUA_OK) << code;
    const int top = lua_gettop(L);
    Result<json> converted = ToJson(L, -1);
    EXPECT_FALSE(converted.ok()) << code;
    EXPECT_EQ(top, lua_gettop(L)) << code;
    lua_settop(L, 0);
  }
  ASSERT_EQ(luaL_dostring(L, "return {[1]='a', [2]='b', [3]='c'}"), LUA_OK);
  Result<json> array = ToJson(L, -1);
  ASSERT_TRUE(array.ok());
  EXPECT_EQ(*array, json::parse(R"(["a","b","c"])"));
  lua_close(L);
}

// --- Calls through the runtime ----------------------------------------------------------------

TEST_F(LuaRuntimeTest, CallsConvertArgumentsAndResults) {
  auto script = MustLoad("echo", R"(
    function echo(event, webhook)
      return { trigger = event.triggerEvent, url = webhook.subscriberUrl,
               n = #event.payload.attendees, first = event.payload.attendees[1],
               null_is_sentinel = event.list[2] == json.null, count = 3, ratio = 1.5 }
    end
    function nothing() end
  )");
  ASSERT_TRUE(script);
  EXPECT_TRUE(script->HasFunction("echo"));
  EXPECT_FALSE(script->HasFunction("absent"));
  const json event = {{"triggerEvent", "BOOKING_CREATED"},
                      {"payload", {{"attendees", {"a@example.com", "b@example.com"}}}},
                      {"list", {1, nullptr, 3}}};
  auto result = script->Call("echo", {event, {{"subscriberUrl", "http://x"}}});
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(*result, json::parse(R"({"trigger":"BOOKING_CREATED","url":"http://x","n":2,
      "first":"a@example.com","null_is_sentinel":true,"count":3,"ratio":1.5})"));
  EXPECT_TRUE((*result)["count"].is_number_integer());
  // Read in place, the same arguments give the same answer.
  const json webhook = {{"subscriberUrl", "http://x"}};
  const json* in_place[] = {&event, &webhook};
  auto again = script->CallInPlace("echo", in_place);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(*again, *result);

  auto nothing = script->Call("nothing", {});
  ASSERT_TRUE(nothing.ok());
  EXPECT_TRUE(nothing->is_null());
}

TEST_F(LuaRuntimeTest, ForbiddenGlobalsAreAbsentOrFail) {
  auto script = MustLoad("sandbox", R"(
    function probe()
      return {
        io = io == nil, require = require == nil, dofile = dofile == nil,
        loadfile = loadfile == nil, load = load == nil, debug = debug == nil,
        package = package == nil, execute = os.execute == nil, getenv = os.getenv == nil,
        exit = os.exit == nil, remove = os.remove == nil, dump = string.dump == nil,
        time = type(os.time()) == "number", date = type(os.date("!%Y")) == "string",
        clock = type(os.clock()) == "number", string = string.upper("a") == "A",
        utf8 = utf8.len("é") == 1, co = coroutine.wrap(function() coroutine.yield(1) end)() == 1,
      }
    end
    function binary_chunk()
      -- string.dump is gone; even when handed bytecode, nothing in the sandbox can load it.
      local dumper = string.dump or ("").dump
      if dumper then return "dump available" end
      if load then return load("\27Lua", "x", "b") and "loaded" or "refused" end
      return "no loader"
    end
    function gc_collect() return collectgarbage("collect") end
    function gc_count() return collectgarbage("count") > 0 end
    function gc_finalizer() setmetatable({}, {__gc = function() end}) end
  )");
  ASSERT_TRUE(script);
  auto probe = script->Call("probe", {});
  ASSERT_TRUE(probe.ok()) << probe.status().message();
  for (auto it = probe->begin(); it != probe->end(); ++it)
    EXPECT_EQ(it.value(), true) << it.key();

  auto binary = script->Call("binary_chunk", {});
  ASSERT_TRUE(binary.ok()) << binary.status().message();
  EXPECT_EQ(*binary, "no loader");

  EXPECT_FALSE(script->Call("gc_collect", {}).ok());
  auto count = script->Call("gc_count", {});
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, true);
  EXPECT_FALSE(script->Call("gc_finalizer", {}).ok());
}

TEST_F(LuaRuntimeTest, BytecodeFilesAreRefused) {
  // A precompiled chunk written by a full Lua state: the runtime loads text only.
  lua_State* L = luaL_newstate();
  luaL_openlibs(L);
  ASSERT_EQ(luaL_dostring(L, "return string.dump(function() return 1 end)"), LUA_OK);
  size_t len = 0;
  const char* bytes = lua_tolstring(L, -1, &len);
  const std::string path = dir_.Write("bytecode.lua", std::string(bytes, len));
  lua_close(L);
  auto loaded = runtime_.Load("bytecode", path, {});
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), ErrorCode::kInvalid);
  EXPECT_NE(loaded.status().message().find("binary"), std::string::npos)
      << loaded.status().message();
}

TEST_F(LuaRuntimeTest, PrintGoesToTheLogger) {
  auto script = MustLoad("printer", "function hello(x) print('hello', x, nil) end");
  ASSERT_TRUE(script);
  ASSERT_TRUE(script->Call("hello", {42}).ok());
  bool seen = false;
  for (const auto& line : logger_.lines()) {
    if (line.message == "lua print" && line.fields.value("script", "") == "printer") {
      EXPECT_EQ(line.fields.value("text", ""), "hello\t42\tnil");
      EXPECT_EQ(line.level, LogLevel::kInfo);
      seen = true;
    }
  }
  EXPECT_TRUE(seen);
}

TEST_F(LuaRuntimeTest, InfiniteLoopHitsTheBudgetQuickly) {
  auto script = MustLoad("spin", "function spin() while true do end end\nfunction ok() return 1 end",
                         LuaLimits{100000, 4 * 1024 * 1024, 10000});
  ASSERT_TRUE(script);
  const auto start = std::chrono::steady_clock::now();
  auto result = script->Call("spin", {});
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), ErrorCode::kInternal);
  EXPECT_NE(result.status().message().find("spin:1: instruction limit"), std::string::npos)
      << result.status().message();
  EXPECT_LT(elapsed, std::chrono::seconds(2));
  auto after = script->Call("ok", {});
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_EQ(*after, 1);
  EXPECT_EQ(MetricValue(registry_, "lua_errors_total", {{"script", "spin"}, {"kind", "budget"}}), 1);
}

TEST_F(LuaRuntimeTest, PcallCannotSwallowTheBudget) {
  auto script = MustLoad("sneaky", R"(
    function swallow()
      local ok = pcall(function() while true do end end)
      return "survived"
    end
    function tail()
      -- A tail call: no instruction of this script runs after pcall has caught the error, so
      -- only the host-side flag can tell that the budget ran out.
      return pcall(function() while true do end end)
    end
    function persistent()
      while true do pcall(function() while true do end end) end
    end
    function via_coroutines()
      while true do
        coroutine.resume(coroutine.create(function() while true do end end))
      end
    end
    function via_xpcall()
      while true do xpcall(function() while true do end end, function(e) return e end) end
    end
  )",
                         LuaLimits{100000, 4 * 1024 * 1024, 10000});
  ASSERT_TRUE(script);
  for (const char* fn : {"swallow", "tail", "persistent", "via_coroutines", "via_xpcall"}) {
    const auto start = std::chrono::steady_clock::now();
    auto result = script->Call(fn, {});
    EXPECT_FALSE(result.ok()) << fn << " returned " << (result.ok() ? result->dump() : "");
    if (!result.ok()) {
      EXPECT_NE(result.status().message().find("instruction limit"), std::string::npos)
          << fn << ": " << result.status().message();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << fn;
  }
  EXPECT_EQ(MetricValue(registry_, "lua_errors_total", {{"script", "sneaky"}, {"kind", "budget"}}), 5);
}

TEST_F(LuaRuntimeTest, MemoryBombFailsAndTheNextCallWorks) {
  auto script = MustLoad("bomb", R"(
    hoard = {}
    function rep() return #string.rep("x", 64 * 1024 * 1024) end
    function grow() local s = "x" while true do s = s .. s end end
    function fill() local t = {} for i = 1, 1e9 do t[i] = {i} end end
    function caught() local ok = pcall(string.rep, "x", 64 * 1024 * 1024) hoard.poisoned = true return ok end
    function poisoned() return hoard.poisoned == true end
    function ok() return "fine" end
  )",
                         LuaLimits{50000000, 2 * 1024 * 1024, 10000});
  ASSERT_TRUE(script);
  for (const char* fn : {"rep", "grow", "fill"}) {
    auto result = script->Call(fn, {});
    ASSERT_FALSE(result.ok()) << fn;
    EXPECT_NE(result.status().message().find("memory limit"), std::string::npos)
        << fn << ": " << result.status().message();
    auto next = script->Call("ok", {});
    ASSERT_TRUE(next.ok()) << next.status().message();
    EXPECT_EQ(*next, "fine");
  }
  // A script that catches the memory error gets its answer, but the state is rebuilt afterwards.
  auto caught = script->Call("caught", {});
  ASSERT_TRUE(caught.ok()) << caught.status().message();
  EXPECT_EQ(*caught, false);
  auto poisoned = script->Call("poisoned", {});
  ASSERT_TRUE(poisoned.ok());
  EXPECT_EQ(*poisoned, false) << "a state that hit the memory cap must not be reused";
  EXPECT_EQ(MetricValue(registry_, "lua_errors_total", {{"script", "bomb"}, {"kind", "memory"}}), 3);
}

TEST_F(LuaRuntimeTest, RuntimeErrorsNameScriptAndLine) {
  auto script = MustLoad("faulty", "local x = 1\n\nfunction boom(t)\n  return t.missing.field\nend\n"
                                   "function raise() error({code = 1}) end\n"
                                   "function raise0()\n  error('plain', 0)\nend\n");
  ASSERT_TRUE(script);
  auto boom = script->Call("boom", {json::object({{"secret", "do-not-log"}})});
  ASSERT_FALSE(boom.ok());
  EXPECT_EQ(boom.status().code(), ErrorCode::kInternal);
  EXPECT_NE(boom.status().message().find("faulty:4: "), std::string::npos) << boom.status().message();

  auto raise = script->Call("raise", {});
  ASSERT_FALSE(raise.ok());
  EXPECT_NE(raise.status().message().find("faulty:6: (error object is a table value)"),
            std::string::npos)
      << raise.status().message();
  auto raise0 = script->Call("raise0", {});
  ASSERT_FALSE(raise0.ok());
  EXPECT_NE(raise0.status().message().find("faulty:8: plain"), std::string::npos)
      << raise0.status().message();

  auto missing = script->Call("nope", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);

  bool warned = false;
  for (const auto& line : logger_.lines()) {
    EXPECT_EQ(line.fields.dump().find("do-not-log"), std::string::npos) << "arguments were logged";
    if (line.level == LogLevel::kWarn && line.fields.value("function", "") == "boom") {
      warned = true;
      EXPECT_NE(line.fields.value("error", "").find("faulty:4:"), std::string::npos);
    }
  }
  EXPECT_TRUE(warned);
  EXPECT_EQ(MetricValue(registry_, "lua_errors_total", {{"script", "faulty"}, {"kind", "runtime"}}), 3);
  EXPECT_EQ(MetricValue(registry_, "lua_errors_total", {{"script", "faulty"}, {"kind", "missing"}}), 1);
}

TEST_F(LuaRuntimeTest, LoadErrors) {
  auto syntax = runtime_.Load("broken", dir_.Write("broken.lua", "function f(\n  return 1\nend\n"), {});
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.status().code(), ErrorCode::kInvalid);
  EXPECT_NE(syntax.status().message().find("broken:2:"), std::string::npos) << syntax.status().message();

  auto missing = runtime_.Load("missing", dir_.Write("x.lua", "") + ".absent", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);

  auto top_level = runtime_.Load("toplevel", dir_.Write("toplevel.lua", "local a = 1\nerror('no')\n"), {});
  ASSERT_FALSE(top_level.ok());
  EXPECT_NE(top_level.status().message().find("toplevel:2: no"), std::string::npos)
      << top_level.status().message();

  auto spinning = runtime_.Load("spinning", dir_.Write("spinning.lua", "while true do end"),
                                LuaLimits{10000, 1024 * 1024});
  ASSERT_FALSE(spinning.ok());
  EXPECT_NE(spinning.status().message().find("instruction limit"), std::string::npos);

  EXPECT_FALSE(runtime_.Load("bad name:with colon", dir_.Write("n.lua", ""), {}).ok());
  EXPECT_FALSE(runtime_.Load("zero", dir_.Write("z.lua", ""), LuaLimits{0, 1024 * 1024}).ok());
  EXPECT_FALSE(runtime_.Load("tiny", dir_.Write("t.lua", ""), LuaLimits{1000, 512}).ok());
  EXPECT_FALSE(runtime_.Load("timeless", dir_.Write("tl.lua", ""), LuaLimits{1000, 1024 * 1024, 0}).ok());
}

TEST_F(LuaRuntimeTest, ReloadKeepsOldVersionOnErrorAndSwitchesOnSuccess) {
  const std::string path = dir_.Write("hook.lua", "function version() return 1 end");
  auto loaded = runtime_.Load("hook", path, {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  auto script = *loaded;
  ASSERT_EQ(*script->Call("version", {}), 1);

  dir_.Write("hook.lua", "function version()\n  return 2 +\nend\n");
  Status failed = script->Reload();
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("hook:3:"), std::string::npos) << failed.message();
  auto still = script->Call("version", {});
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(*still, 1);

  dir_.Write("hook.lua", "function version() return 2 end\nfunction extra() return true end");
  ASSERT_TRUE(script->Reload().ok());
  EXPECT_EQ(*script->Call("version", {}), 2);
  EXPECT_TRUE(script->HasFunction("extra"));

  dir_.Write("hook.lua", "function version() return 3 end");
  runtime_.ReloadAll();
  EXPECT_EQ(*script->Call("version", {}), 3);
  dir_.Write("hook.lua", "syntax error here");
  runtime_.ReloadAll();
  EXPECT_EQ(*script->Call("version", {}), 3);

  EXPECT_EQ(MetricValue(registry_, "lua_reloads_total", {{"script", "hook"}, {"result", "ok"}}), 2);
  EXPECT_EQ(MetricValue(registry_, "lua_reloads_total", {{"script", "hook"}, {"result", "error"}}), 2);
  bool logged = false;
  for (const auto& line : logger_.lines())
    if (line.level == LogLevel::kWarn && line.fields.value("script", "") == "hook") logged = true;
  EXPECT_TRUE(logged) << "ReloadAll logs failures";
}

TEST_F(LuaRuntimeTest, FourThreadsCallConcurrently) {
  auto script = MustLoad("worker", R"(
    counter = 0
    function work(n, tag)
      counter = counter + 1
      local sum = 0
      for i = 1, n do sum = sum + i end
      return {sum = sum, tag = tag}
    end
  )");
  ASSERT_TRUE(script);
  constexpr int kThreads = 4;
  constexpr int kCalls = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        const int n = 100 + t * 10 + i;
        const std::string tag = "t" + std::to_string(t) + "-" + std::to_string(i);
        auto result = script->Call("work", {n, tag});
        if (!result.ok() || (*result)["sum"] != static_cast<std::int64_t>(n) * (n + 1) / 2 ||
            (*result)["tag"] != tag) {
          ++failures;
        }
        // Reloads in the middle of the traffic must not break callers either.
        if (t == 0 && i % 50 == 25 && !script->Reload().ok()) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(MetricValue(registry_, "lua_calls_total", {{"script", "worker"}, {"function", "work"}}),
            kThreads * kCalls);
  EXPECT_EQ(MetricValue(registry_, "lua_call_duration_seconds", {{"script", "worker"}}),
            kThreads * kCalls);
}

TEST_F(LuaRuntimeTest, DeepRecursionFailsCleanly) {
  auto script = MustLoad("deep", R"(
    function lua_stack() local function r(n) return 1 + r(n + 1) end return r(1) end
    function c_stack() local function p() return select(2, pcall(p)) end return p() end
    function deep_result() local t = {} local cur = t for i = 1, 100 do cur.x = {} cur = cur.x end return t end
    function ok() return true end
  )",
                         LuaLimits{10000000, 8 * 1024 * 1024, 10000});
  ASSERT_TRUE(script);
  EXPECT_FALSE(script->Call("lua_stack", {}).ok());
  auto c_stack = script->Call("c_stack", {});  // pcall nesting hits Lua's C-stack limit
  if (c_stack.ok()) {
    EXPECT_TRUE(c_stack->is_string() || c_stack->is_null()) << c_stack->dump();
  }
  auto deep = script->Call("deep_result", {});
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("deeper"), std::string::npos) << deep.status().message();
  EXPECT_TRUE(script->Call("ok", {}).ok());
}

TEST_F(LuaRuntimeTest, ResultsThatAreNotJsonFail) {
  auto script = MustLoad("results", "function f() return print end\nfunction g() return 0/0 end");
  ASSERT_TRUE(script);
  auto f = script->Call("f", {});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), ErrorCode::kInternal);
  EXPECT_FALSE(script->Call("g", {}).ok());
}

// --- The time limit covers the library's C functions ----------------------------------------

TEST_F(LuaRuntimeTest, PathologicalPatternsStopAtTheTimeLimit) {
  // Each of these spends its time inside one C function call, where no instruction is counted.
  auto script = MustLoad("patterns", R"(
    local s = string.rep("a", 480)
    function find() return string.find(s, ".-.-.-b") end
    function method() return s:match(".-.-.-b") end
    function gsub() return (string.gsub(s, ".-.-.-b", "")) end
    function gmatch() for m in s:gmatch(".-.-.-b") do return m end end
    function caught()
      while true do pcall(string.find, s, ".-.-.-b") end
    end
    function plain()
      local hay = string.rep("a", 4 * 1024 * 1024)
      local needle = string.rep("a", 1024 * 1024) .. "b"
      return hay:find(needle, 1, true)
    end
    function insert()
      local t = setmetatable({}, {__len = function() return math.maxinteger - 1 end})
      table.insert(t, 1, "x")
    end
    function move() return #table.move({}, 1, math.maxinteger // 2, 2) end
    function concat()
      return #table.concat(setmetatable({}, {__index = table.concat}), "", 1, math.maxinteger)
    end
    function spin() while true do end end
    function ok() return "fine" end
  )",
                         LuaLimits{1000000000, 16 * 1024 * 1024, 50});
  ASSERT_TRUE(script);
  const std::vector<std::string> functions = {"find", "method", "gsub",   "gmatch", "caught",
                                              "plain", "insert", "move", "concat", "spin"};
  for (const std::string& fn : functions) {
    const auto start = std::chrono::steady_clock::now();
    auto result = script->Call(fn, {});
    const auto elapsed = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(result.ok()) << fn << " returned " << result->dump();
    EXPECT_NE(result.status().message().find("time limit of 50 ms exceeded"), std::string::npos)
        << fn << ": " << result.status().message();
    EXPECT_NE(result.status().message().find("patterns:"), std::string::npos) << result.status().message();
    // The limit, plus at most one clock check's worth of steps and the scheduler's noise.
    EXPECT_LT(elapsed, std::chrono::milliseconds(500)) << fn;
    auto after = script->Call("ok", {});
    ASSERT_TRUE(after.ok()) << after.status().message();
  }
  EXPECT_EQ(MetricValue(registry_, "lua_errors_total", {{"script", "patterns"}, {"kind", "time"}}),
            static_cast<double>(functions.size()));
  EXPECT_EQ(MetricValue(registry_, "lua_errors_total", {{"script", "patterns"}, {"kind", "budget"}}), 0);
}

// The sandbox's own pattern functions answer as Lua 5.4's do.
TEST_F(LuaRuntimeTest, PatternFunctionsKeepLuaSemantics) {
  auto script = MustLoad("semantics", R"lua(
    local function pack(...) return {n = select("#", ...), ...} end
    local function show(t)
      local out = {}
      for i = 1, t.n do out[i] = tostring(t[i]) end
      return table.concat(out, ",")
    end
    local function words(s, p, init)
      local out = {}
      for a, b in string.gmatch(s, p, init) do out[#out + 1] = b and (a .. "=" .. b) or a end
      return table.concat(out, "|")
    end
    function cases()
      return {
        show(pack(string.find("hello world", "o w"))),
        show(pack(string.find("hello", "l+"))),
        show(pack(string.find("hello", "xyz"))),
        show(pack(string.find("a.b", ".", 1, true))),
        show(pack(string.find("abc", "b", -1))),
        show(pack(string.find("abc", "c", -1))),
        show(pack(string.find("abc", "", 10))),
        show(pack(string.find("abc", "", 4))),
        show(pack(string.find("a+b", "+", 1, true))),
        show(pack(string.find("key = val", "(%w+) = (%w+)"))),
        show(pack(string.match("key=value", "(%w+)=(%w+)"))),
        show(pack(string.match("  trim me  ", "^%s*(.-)%s*$"))),
        show(pack(string.match("hello", "()ll()"))),
        show(pack(string.match("THE (quick) fox", "%((%a+)%)"))),
        show(pack(string.match("f(a(b)c)d", "%b()"))),
        show(pack(string.match("abc123", "[^%a]+"))),
        show(pack(string.match("a-b", "[a-]+"))),
        show(pack(string.match("a]b", "[]]"))),
        show(pack(string.match("ab12", "%D+"))),
        show(pack(string.match("hello", "lo$"))),
        show(pack(string.match("hello$", "o%$"))),
        show(pack(string.find("a$b", "a$b"))),
        show(pack(string.match('say "hi" ok', "([\"'])(.-)%1"))),
        show(pack(string.match("2024-01-05", "^(%d+)-(%d%d)-(%d%d)$"))),
        show(pack(string.match("x", "^(x?)(x?)$"))),
        show(pack(string.match("aaa", "a-b"))),
        show(pack(string.match("aaab", "a-b"))),
        show(pack(string.match("THE END", "%f[%a]%a+", 2))),
        show(pack(string.gsub("hello world", "o", "0"))),
        show(pack(string.gsub("hello world", "(%w+)", "<%1>"))),
        show(pack(string.gsub("abc", "%w", "%0%0"))),
        show(pack(string.gsub("hello world", "%w+", {hello = "HI"}))),
        show(pack(string.gsub("abc", "", "-"))),
        show(pack(string.gsub("hello", "l", function() return nil end))),
        show(pack(string.gsub("abc def", "%f[%w]%w+", string.upper))),
        show(pack(string.gsub("xx", "^x", "y"))),
        show(pack(string.gsub("50", "%d+", "%0%%"))),
        show(pack(string.gsub("abc", "%w", "-", 2))),
        show(pack(string.gsub("a,b", ",", 1))),
        words("one two  three", "%a+"),
        words("k1=v1, k2=v2", "(%w+)=(%w+)"),
        words("abc", ".", 2),
        words("abc", "x*"),
        string.rep("ab", 3, ","),
        string.rep("x", 0),
        string.rep("", math.maxinteger),
        string.rep("", 3, "-"),
      }
    end
    function errors()
      local out = {}
      for _, f in ipairs({
        function() return string.gsub("abc", ".", "%2") end,
        function() return string.find("a", "[a") end,
        function() return string.find("a", "%") end,
        function() return string.find("a", "(a") end,
        function() return string.match("a", "a)") end,
        function() return string.find("a", "%bx") end,
        function() return string.find("a", "%fx") end,
        function() return string.gsub("a", "a", "%") end,
        function() return string.gsub("a", "a", true) end,
        function() return string.gsub("a", "a", {a = true}) end,
        function() return string.find(string.rep("a", 300), string.rep("(a?)", 300)) end,
      }) do
        local ok, err = pcall(f)
        out[#out + 1] = ok and "ok" or err:gsub("^[^:]*:%d+: ", "")
      end
      return out
    end
    function tables()
      local t = {"a", "b", "c"}
      table.insert(t, "d")
      table.insert(t, 1, "z")
      local removed = table.remove(t)
      local first = table.remove(t, 1)
      local moved = table.move({1, 2, 3}, 1, 3, 2)
      local into = table.move({1, 2}, 1, 2, 1, {9, 9, 9})
      return {table.concat(t, ""), removed, first, table.concat(moved, ""), table.concat(into, ""),
              select(2, pcall(table.insert, {}, 5, "x")):match("position out of bounds") ~= nil,
              table.concat({1, 2.5, "x"}, ", "), table.concat({"a", "b", "c", "d"}, "-", 2, 3),
              table.concat({}, "-"), table.concat({"a"}, "-", 3, 2),
              select(2, pcall(table.concat, {1, {}, 3})):match("invalid value %(at index 2%)") ~= nil}
    end
  )lua");
  ASSERT_TRUE(script);
  auto cases = script->Call("cases", {});
  ASSERT_TRUE(cases.ok()) << cases.status().message();
  const std::vector<std::string> expected = {
      "5,7", "3,4", "nil", "2,2", "nil", "3,3", "nil", "4,3", "2,2", "1,9,key,val", "key,value",
      "trim me", "3,5", "quick", "(a(b)c)", "123", "a-", "]", "ab", "lo", "o$", "1,3", "\",hi",
      "2024,01,05", "x,", "nil", "aaab", "END", "hell0 w0rld,2", "<hello> <world>,2", "aabbcc,3",
      "HI world,2", "-a-b-c-,4", "hello,2", "ABC DEF,2", "yx,1", "50%,1", "--c,2", "a1b,1",
      "one|two|three", "k1=v1|k2=v2", "b|c", "|||", "ab,ab,ab", "", "", "--"};
  ASSERT_EQ(cases->size(), expected.size()) << cases->dump();
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ((*cases)[i], expected[i]) << "case " << i + 1;

  auto errors = script->Call("errors", {});
  ASSERT_TRUE(errors.ok()) << errors.status().message();
  const std::vector<std::string> messages = {
      "invalid capture index %2",  // in the replacement
      "malformed pattern (missing ']')",
      "malformed pattern (ends with '%')",
      "unfinished capture",
      "invalid pattern capture",
      "malformed pattern (missing arguments to '%b')",
      "missing '[' after '%f' in pattern",
      "invalid use of '%' in replacement string",
      "(string/function/table expected, got boolean)",
      "invalid replacement value (a boolean)",
      "too many captures"};
  ASSERT_EQ(errors->size(), messages.size()) << errors->dump();
  for (size_t i = 0; i < messages.size(); ++i) {
    EXPECT_NE((*errors)[i].get<std::string>().find(messages[i]), std::string::npos)
        << "error " << i + 1 << ": " << (*errors)[i];
  }

  auto tables = script->Call("tables", {});
  ASSERT_TRUE(tables.ok()) << tables.status().message();
  EXPECT_EQ(*tables, json::parse(R"(["abc", "d", "z", "1123", "129", true, "1, 2.5, x", "b-c", "", "", true])"));
}

// Nothing a call stores is seen by a later call: globals, the top level's locals, the library
// tables.
TEST_F(LuaRuntimeTest, NothingPersistsFromOneCallToTheNext) {
  auto script = MustLoad("isolated", R"(
    loads = (loads or 0) + 1
    local seen = {}
    function remember(x)
      seen[#seen + 1] = x
      stored = (stored or 0) + 1
      return {seen = #seen, stored = stored, loads = loads}
    end
    function tamper_string() string.leak = "secret" end
    function tamper_rawset() rawset(string, "leak", "secret") end
    function tamper_metatable() getmetatable("").__index.leak = "secret" end
    function tamper_table() table.insert = function() end end
    function tamper_global() _G.string = {} end
    function tamper_env() _ENV.string = {} end
    function tamper_seed() math.randomseed(42) end
    function leaked()
      return {string.leak == nil, ("x").leak == nil, type(table.insert) == "function",
              type(string.find) == "function", select("#", pairs(string)) == 3}
    end
    function library_names()
      local n = 0
      for name in pairs(string) do n = n + 1 end
      return n
    end
  )");
  ASSERT_TRUE(script);
  for (const char* user : {"first", "second", "third"}) {
    auto result = script->Call("remember", {user});
    ASSERT_TRUE(result.ok()) << result.status().message();
    EXPECT_EQ(*result, json::parse(R"({"seen": 1, "stored": 1, "loads": 1})")) << user;
  }
  for (const char* fn : {"tamper_string", "tamper_rawset", "tamper_metatable", "tamper_table", "tamper_seed"}) {
    EXPECT_FALSE(script->Call(fn, {}).ok()) << fn << " must fail";
  }
  for (const char* fn : {"tamper_global", "tamper_env"}) {
    EXPECT_TRUE(script->Call(fn, {}).ok()) << fn << " changes only its own call's environment";
  }
  auto leaked = script->Call("leaked", {});
  ASSERT_TRUE(leaked.ok()) << leaked.status().message();
  EXPECT_EQ(*leaked, json::parse("[true, true, true, true, true]"));
  auto names = script->Call("library_names", {});
  ASSERT_TRUE(names.ok()) << names.status().message();
  EXPECT_GE(names->get<int>(), 15) << "pairs over a library table lists its functions";
}

TEST_F(LuaRuntimeTest, MemoryErrorsNameTheLine) {
  auto script = MustLoad("hungry", "function big()\n  local s = 'x'\n  return #string.rep(s, 64 * 1024 * 1024)\nend\n"
                                   "function grow()\n  local t = {}\n  for i = 1, 1e9 do\n    t[i] = i\n  end\nend\n",
                         LuaLimits{100000000, 2 * 1024 * 1024, 10000});
  ASSERT_TRUE(script);
  auto big = script->Call("big", {});
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("hungry:3: memory limit of 2097152 bytes exceeded"), std::string::npos)
      << big.status().message();
  auto grow = script->Call("grow", {});
  ASSERT_FALSE(grow.ok());
  EXPECT_NE(grow.status().message().find("hungry:8: memory limit"), std::string::npos) << grow.status().message();
  bool logged = false;
  for (const auto& line : logger_.lines())
    if (line.level == LogLevel::kWarn && line.fields.value("error", "").find("hungry:3: memory") != std::string::npos)
      logged = true;
  EXPECT_TRUE(logged);
}

}  // namespace
}  // namespace rendezvous::core
