#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
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

// Pushes through one state's key cache, as the runtime's calls do, and converts back.
Result<json> RoundTripCached(lua_State* L, LuaKeyCache& keys, const json& value) {
  struct Box {
    const json* value;
    LuaKeyCache* keys;
  } box{&value, &keys};
  lua_pushcfunction(L, [](lua_State* L) -> int {
    auto* b = static_cast<Box*>(lua_touserdata(L, 1));
    PushJson(L, *b->value, *b->keys);
    return 1;
  });
  lua_pushlightuserdata(L, &box);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    std::string msg = lua_tostring(L, -1);
    lua_settop(L, 0);
    return Status(ErrorCode::kInvalid, msg);
  }
  Result<json> back = ToJson(L, -1);
  lua_settop(L, 0);
  return back;
}

TEST(LuaJsonTest, KeysThroughTheKeyCacheRoundTrip) {
  lua_State* L = luaL_newstate();
  auto keys = std::make_unique<LuaKeyCache>();
  json many = json::object();  // more keys than the cache keeps
  for (int i = 0; i < LuaKeyCache::kMaxKeys + 60; ++i) many["key" + std::to_string(i)] = i;
  const json odd = {{"aaaaaaaaXaaaaaaaa", 1},  // same length, head and tail as the next
                    {"aaaaaaaaYaaaaaaaa", 2},
                    {std::string(LuaKeyCache::kMaxKeyBytes + 1, 'k'), 3},  // too long to keep
                    {std::string("nul\0key", 7), 4},
                    {"", 5},
                    {"a", {{"a", {{"a", "deep"}}}}}};
  for (int round = 0; round < 3; ++round) {  // learned in the first round, found in the others
    for (const json* value : std::vector<const json*>{&many, &odd}) {
      Result<json> back = RoundTripCached(L, *keys, *value);
      ASSERT_TRUE(back.ok()) << back.status().message();
      EXPECT_EQ(*back, *value) << "round " << round;
    }
  }
  lua_close(L);
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

// A result is converted within the state's memory limit: many references to one long string, or
// a chain of tables each referring twice to the next (2^60 values), fail at once instead of
// filling the server's memory or running for ever outside the time limit.
TEST_F(LuaRuntimeTest, ResultsLargerThanTheMemoryLimitFail) {
  auto script = MustLoad("large", R"(
    function shared_string()
      local s = string.rep(string.rep("x", 1024), 1024)  -- 1 MiB
      local t = {}
      for i = 1, 1000 do t[i] = s end
      return t
    end
    function doubling()
      local t = {"leaf"}
      for i = 1, 60 do t = {t, t} end
      return t
    end
    function shared_key_values()
      local s = string.rep("y", 512 * 1024)
      local t = {}
      for i = 1, 100 do t["k" .. i] = s end
      return t
    end
    function fits() local t = {} for i = 1, 1000 do t[i] = {n = i, s = "value"} end return t end
  )",
                         LuaLimits{100000000, 8 * 1024 * 1024, 10000});
  ASSERT_TRUE(script);
  for (const char* fn : {"shared_string", "doubling", "shared_key_values"}) {
    const auto start = std::chrono::steady_clock::now();
    auto result = script->Call(fn, {});
    ASSERT_FALSE(result.ok()) << fn;
    EXPECT_NE(result.status().message().find("value larger than 8388608 bytes as JSON"), std::string::npos)
        << fn << ": " << result.status().message();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << fn;
  }
  auto fits = script->Call("fits", {});
  ASSERT_TRUE(fits.ok()) << fits.status().message();
  EXPECT_EQ(fits->size(), 1000u);
  EXPECT_EQ(MetricValue(registry_, "lua_errors_total", {{"script", "large"}, {"kind", "runtime"}}), 3);
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
    -- Patterns whose first item is a single character: positions where it fails are passed over.
    function skipped()
      return {
        show(pack(string.gsub('a"b\\c\nd', '[%c"\\]', {['"'] = "Q", ["\\"] = "B", ["\n"] = "N"}))),
        (function()
          local r, n = string.gsub(string.rep("x", 9000) .. "y" .. string.rep("x", 9000) .. "y", "y", "z")
          return #r .. "," .. n .. "," .. r:sub(9000, 9002) .. "," .. r:sub(-2)
        end)(),
        show(pack(string.find(string.rep("a", 9000) .. "12", "%d+"))),
        show(pack(string.match("abcDEF", "%U+"))),
        show(pack(string.find("abcDEF", "%u"))),
        words("a1 b22 c333", "%d+"),
        show(pack(string.match("user@Example.COM", "@([^@]+)$"))),
        show(pack(string.gsub("aa bb  cc", " +", "_"))),
        show(pack(string.gsub("", "x", "y"))),
        show(pack(string.find("abcx", "[xy]", 2))),
        show(pack(string.find("abc", "[xy]"))),
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

  auto skipped = script->Call("skipped", {});
  ASSERT_TRUE(skipped.ok()) << skipped.status().message();
  const json expected_skipped = {"aQbBcNd,3",   "18002,2,xzx,xz", "9001,9002", "abc", "4,4", "1|22|333",
                                 "Example.COM", "aa_bb_cc,2",     ",0",        "4,4", "nil"};
  EXPECT_EQ(*skipped, expected_skipped);

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

// --- The time limit holds whatever the script does -------------------------------------------
// Each function below tries to run past the 50 ms limit through a path the instruction count does
// not see: a message handler (run by Lua after the hook's error, when hooks are off), the sort, a
// C function called in a loop on large values, memory refusals swallowed by pcall, coroutines
// whose pending __close would run unhooked. Each must end with the time limit (or the memory cap)
// within the limit plus a margin. The margin (150 ms) is for a loaded 2-core machine: the bound
// under test is "ends at the limit", not "ends eventually"; before these paths were metered they
// ran for seconds or never returned.
constexpr long kTightLimitMs = 50;
constexpr auto kLimitMargin = std::chrono::milliseconds(kTightLimitMs + 150);
// Room for large values: the larger they are, the longer one instruction or C call on them takes.
constexpr size_t kRunawayMemory = 64 * 1024 * 1024;

const char* kRunawayScript = R"(
    local function eight_mib() return string.rep(string.rep("abcdefgh", 512), 2048) end
    local function numbers(n) return table.pack(string.byte(string.rep("zyxwvutsrq", (n or 240000) // 10), 1, -1)) end
    local function spin() while true do end end
    local function closing() return setmetatable({}, {__close = spin}) end

    function xpcall_handler_loops() return xpcall(function() error("x") end, spin) end
    function xpcall_handler_loops_after_budget() return xpcall(spin, spin) end
    function xpcall_in_a_loop() while true do xpcall(spin, function(e) while true do end end) end end
    function xpcall_handler_errors() return xpcall(spin, function(e) error(e) end) end
    function xpcall_nested()
      return xpcall(function() return xpcall(function() error("in") end, spin) end, spin)
    end
    function sort_default() local t = numbers() while true do table.sort(t) end end
    function sort_lua_order() local t = numbers() table.sort(t, function(a, b) return a > b end) end
    function sort_c_order() local t = numbers() while true do table.sort(t, math.max) end end
    function sort_swallowed() local t = numbers() while true do pcall(table.sort, t) end end
    function sort_long_strings()
      local a = string.rep(string.rep("a", 4096), 2 * 1024)  -- 8 MiB
      local b = a .. "b"
      local t = {}
      for i = 1, 2000 do t[i] = i % 2 == 0 and a or b end
      table.sort(t)
    end
    function sort_made_up_length()
      table.sort(setmetatable({}, {__len = function() return 2147483646 end, __index = rawlen, __newindex = rawlen}))
    end
    function upper() local big = eight_mib() while true do local x = big:upper() end end
    function lower() local big = eight_mib() while true do local x = string.lower(big) end end
    function reverse() local big = eight_mib() while true do local x = big:reverse() end end
    function rep() while true do local x = string.rep("xy", 2 * 1024 * 1024) end end
    function format() local big = eight_mib() while true do local x = string.format("%s%s", big, big) end end
    function gsub() local big = eight_mib() while true do local x = big:gsub("a", "b") end end
    function concat_operator() local big = eight_mib() while true do local x = big .. "!" end end
    function utf8_len() local s = string.rep("\u{7FF}", 1024 * 1024) while true do utf8.len(s) end end
    function byte_slices() local big = eight_mib() while true do string.byte(big, 1, 900000) end end
    function unpack_slices() local t = numbers(900000) while true do table.unpack(t) end end
    function next_on_emptied_table()
      local t = numbers(900000)
      table.move({}, 1, 900000, 1, t)
      while true do next(t) end
    end
    function compare_long_strings()
      local a = string.rep(string.rep("a", 4096), 3 * 1024)  -- 12 MiB
      local b = a .. "b"
      while true do local x = a < b end
    end
    function equal_long_strings()
      local a, b = string.rep(string.rep("a", 4096), 3 * 1024), string.rep(string.rep("a", 4096), 3 * 1024)
      while true do local x = a == b end
    end
    function vararg_copies()
      local function first(x) return x end
      local function again(...) while true do first(...) end end
      again(table.unpack(numbers(400000)))
    end
    function pcall_swallows() while true do pcall(spin) end end
    function pcall_swallows_upper() local big = eight_mib() while true do pcall(string.upper, big) end end
    function memory_bomb_swallowed() while true do pcall(string.rep, "x", 1 << 40) end end
    function memory_bomb_full_collections()
      local keep = {}
      for i = 1, 60000 do keep[i] = {i} end
      while true do pcall(string.rep, "x", 1 << 40) end
    end
    function memory_bomb_near_cap() while true do pcall(string.rep, "x", 60 * 1024 * 1024) end end
    function coroutine_spins() coroutine.wrap(spin)() end
    function coroutine_close_on_error()
      coroutine.wrap(function() local guard <close> = closing() spin() end)()
    end
    function coroutine_close_later()
      local co = coroutine.create(function() local guard <close> = closing() spin() end)
      coroutine.resume(co)
      coroutine.close(co)
      spin()
    end
    function coroutine_spent_then_sort()
      local t = numbers()
      coroutine.resume(coroutine.create(spin))
      table.sort(t)
    end
    function coroutine_spent_then_wrapped_sort()
      local t = numbers()
      local inner = coroutine.wrap(function() coroutine.resume(coroutine.create(spin)) table.sort(t) end)
      inner()
    end
    function coroutine_handler()
      coroutine.wrap(function() xpcall(function() error("x") end, spin) end)()
    end
    function coroutine_yield_loop()
      local big = eight_mib()
      local co = coroutine.wrap(function() while true do coroutine.yield(big:upper()) end end)
      while true do co() end
    end
    function ok() return "fine" end
  )";

TEST_F(LuaRuntimeTest, TheTimeLimitHoldsWhateverTheScriptDoes) {
  auto script = MustLoad("runaway", kRunawayScript, LuaLimits{1000000000, kRunawayMemory, kTightLimitMs});
  ASSERT_TRUE(script);
  const std::vector<std::string> functions = {"xpcall_handler_loops",
                                              "xpcall_handler_loops_after_budget",
                                              "xpcall_in_a_loop",
                                              "xpcall_handler_errors",
                                              "xpcall_nested",
                                              "sort_default",
                                              "sort_lua_order",
                                              "sort_c_order",
                                              "sort_swallowed",
                                              "sort_long_strings",
                                              "sort_made_up_length",
                                              "upper",
                                              "lower",
                                              "reverse",
                                              "rep",
                                              "format",
                                              "gsub",
                                              "concat_operator",
                                              "utf8_len",
                                              "byte_slices",
                                              "unpack_slices",
                                              "next_on_emptied_table",
                                              "compare_long_strings",
                                              "equal_long_strings",
                                              "vararg_copies",
                                              "pcall_swallows",
                                              "pcall_swallows_upper",
                                              "memory_bomb_swallowed",
                                              "memory_bomb_near_cap",
                                              "memory_bomb_full_collections",
                                              "coroutine_spins",
                                              "coroutine_close_on_error",
                                              "coroutine_close_later",
                                              "coroutine_handler",
                                              "coroutine_spent_then_sort",
                                              "coroutine_spent_then_wrapped_sort",
                                              "coroutine_yield_loop"};
  for (const std::string& fn : functions) {
    const auto start = std::chrono::steady_clock::now();
    auto result = script->Call(fn, {});
    const auto elapsed = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(result.ok()) << fn << " returned " << result->dump();
    EXPECT_NE(result.status().message().find("time limit of 50 ms exceeded"), std::string::npos)
        << fn << ": " << result.status().message();
    EXPECT_LT(elapsed, kLimitMargin) << fn << " took "
                                     << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()
                                     << " ms";
    auto after = script->Call("ok", {});
    ASSERT_TRUE(after.ok()) << fn << ", then: " << after.status().message();
  }
  EXPECT_EQ(MetricValue(registry_, "lua_errors_total", {{"script", "runaway"}, {"kind", "time"}}),
            static_cast<double>(functions.size()));
}

// `rendezvous lua check` runs the same sandbox: the looping handler and the sort end there too.
TEST_F(LuaRuntimeTest, CheckLuaCallEndsAtTheTimeLimit) {
  const std::string path = dir_.Write("runaway.lua", kRunawayScript);
  for (const char* fn : {"xpcall_handler_loops", "sort_default", "upper"}) {
    const auto start = std::chrono::steady_clock::now();
    LuaCheckResult r = CheckLuaCall("webhooks.render", path,
                                    LuaLimits{1000000000, kRunawayMemory, kTightLimitMs}, fn, {}, logger_);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(r.status.ok()) << fn;
    EXPECT_NE(r.status.message().find("time: webhooks.render:"), std::string::npos) << r.status.message();
    EXPECT_NE(r.status.message().find("time limit of 50 ms exceeded"), std::string::npos)
        << r.status.message();
    // The check compiles and runs the top level first, under its own limit.
    EXPECT_LT(elapsed, kLimitMargin + std::chrono::milliseconds(kTightLimitMs)) << fn;
  }
}

// The replaced functions answer as Lua's.
TEST_F(LuaRuntimeTest, SortXpcallAndCoroutinesKeepLuaSemantics) {
  auto script = MustLoad("semantics", R"(
    function sorts()
      local out = {}
      local t = {5, 3, 9, 1, 1, 7, 2, 8, 6, 4}
      table.sort(t)
      out[#out + 1] = table.concat(t, ",")
      table.sort(t, function(a, b) return a > b end)
      out[#out + 1] = table.concat(t, ",")
      local words = {"pear", "Apple", "fig", "banana"}
      table.sort(words)
      out[#out + 1] = table.concat(words, ",")
      local proxy = setmetatable({}, {__index = {3, 1, 2}, __len = function() return 3 end})
      local seen = {}
      setmetatable(proxy, {__index = function(_, i) return seen[i] or ({3, 1, 2})[i] end,
                           __newindex = function(_, i, v) seen[i] = v end,
                           __len = function() return 3 end})
      table.sort(proxy)
      out[#out + 1] = seen[1] .. seen[2] .. seen[3]
      local big = {} for i = 1, 1000 do big[i] = (i * 7919) % 1000 end
      table.sort(big)
      local sorted = true
      for i = 2, #big do if big[i - 1] > big[i] then sorted = false end end
      out[#out + 1] = sorted
      out[#out + 1] = select(2, pcall(table.sort, {1, "x", 2})):match("attempt to compare") ~= nil
      out[#out + 1] = select(2, pcall(table.sort, {3, 2, 1}, 42)):match("bad argument #2") ~= nil
      table.sort({}) table.sort({1})
      return out
    end
    function xpcalls()
      local out = {}
      out[1] = select(2, xpcall(function() error("boom", 0) end, function(e) return "handled " .. e end))
      out[2] = table.concat({xpcall(function(a, b) return a + b, "more" end, print, 2, 3)}, ",", 2)
      out[3] = tostring((xpcall(function() error({}) end, function(e) return e end)))
      local co = coroutine.wrap(function()
        return xpcall(function() coroutine.yield("yielded") return "done" end, print)
      end)
      out[4] = co()
      local done, value = co()
      out[5] = tostring(done) .. "," .. value
      out[6] = select(2, pcall(xpcall, print)):match("bad argument #2") ~= nil
      return out
    end
    function coroutines()
      local out = {}
      local co = coroutine.create(function(a) local b = coroutine.yield(a + 1) return b * 2 end)
      local resumed, first = coroutine.resume(co, 1)
      out[1] = tostring(resumed) .. "," .. first
      local ok, v = coroutine.resume(co, 1)
      out[2] = tostring(ok) .. "," .. v .. "," .. coroutine.status(co)
      ok, v = coroutine.resume(co)
      out[3] = tostring(ok) .. "," .. v
      local gen = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i) end end)
      out[4] = gen() + gen() + gen()
      local failing = coroutine.wrap(function() error("inside") end)
      out[5] = select(2, pcall(failing))
      local closed = false
      local withclose = coroutine.wrap(function()
        local guard <close> = setmetatable({}, {__close = function() closed = true end})
        error("late")
      end)
      pcall(withclose)
      out[6] = closed
      local suspended = coroutine.create(function()
        local guard <close> = setmetatable({}, {__close = function() closed = "by close" end})
        coroutine.yield()
      end)
      coroutine.resume(suspended)
      out[7] = tostring(coroutine.close(suspended)) .. "," .. closed
      out[8] = select(2, pcall(coroutine.resume, 42)):match("bad argument #1") ~= nil
      out[9] = select(2, pcall(utf8.len, 42, "x")):match("utf8.len") ~= nil
      out[10] = select(2, pcall(tonumber)):match("'tonumber'") ~= nil
      return out
    end
  )");
  ASSERT_TRUE(script);
  auto sorts = script->Call("sorts", {});
  ASSERT_TRUE(sorts.ok()) << sorts.status().message();
  EXPECT_EQ(*sorts,
            json::parse(R"(["1,1,2,3,4,5,6,7,8,9", "9,8,7,6,5,4,3,2,1,1", "Apple,banana,fig,pear", "123",
                                    true, true, true])"));
  auto xpcalls = script->Call("xpcalls", {});
  ASSERT_TRUE(xpcalls.ok()) << xpcalls.status().message();
  EXPECT_EQ(*xpcalls, json::parse(R"(["handled boom", "5,more", "false", "yielded", "true,done", true])"));
  auto coroutines = script->Call("coroutines", {});
  ASSERT_TRUE(coroutines.ok()) << coroutines.status().message();
  EXPECT_EQ(*coroutines, json::parse(R"(["true,2", "true,2,dead", "false,cannot resume dead coroutine", 6,
                                         "semantics:54: inside", true, "true,by close", true, true, true])"));
}

}  // namespace
}  // namespace rendezvous::core
