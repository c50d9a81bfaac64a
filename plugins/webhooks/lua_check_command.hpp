// `rendezvous lua check --hook filter|render --script FILE [--event FILE] [--webhook FILE]`
// (docs/webhooks.md): one call of a webhook hook as a delivery makes it, under the plugin's Lua
// limits (plugins.webhooks.lua), in a fresh sandbox state; its result and cost as JSON. Without
// --event or --webhook the hook gets a sample booking event and a webhook without a template.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "rendezvous/scripting.hpp"

namespace rendezvous::webhooks {

// `args`: the words after `lua`. Prints {"ok":true,"result":...,"instructions":N,"memoryBytes":N,
// "durationMicros":N} to `out` and returns 0; a failing script: "lua check failed: name:line: ..."
// on `err`, 1; a bad invocation or an unreadable --event/--webhook file: the reason on `err`, 2.
int RunLuaCheck(ScriptRuntime& scripts, const LuaLimits& limits, const std::vector<std::string>& args,
                std::ostream& out, std::ostream& err);

}  // namespace rendezvous::webhooks
