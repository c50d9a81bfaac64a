-- wrk script: each request GETs the next of the paths in $BENCH_PATHS (space-separated), in turn,
-- and checks that the answer lists at least one slot (a "start"); at the end it prints
-- "answers without slots: N" (answers not 200 or without a slot, over every thread).
local paths = {}
for p in string.gmatch(os.getenv("BENCH_PATHS") or "/", "%S+") do paths[#paths + 1] = p end
local next_path = 0
local threads = {}

setup = function(thread)
  threads[#threads + 1] = thread
end

init = function()
  without_slots = 0
end

request = function()
  next_path = next_path % #paths + 1
  return wrk.format("GET", paths[next_path])
end

response = function(status, headers, body)
  if status ~= 200 or not string.find(body, '"start"', 1, true) then without_slots = without_slots + 1 end
end

done = function(summary, latency, requests)
  local n = 0
  for _, thread in ipairs(threads) do n = n + thread:get("without_slots") end
  io.write(string.format("answers without slots: %d\n", n))
end
