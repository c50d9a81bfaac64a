-- wrk script: each request GETs the next of the paths in $BENCH_PATHS (space-separated), in turn.
local paths = {}
for p in string.gmatch(os.getenv("BENCH_PATHS") or "/", "%S+") do paths[#paths + 1] = p end
local next_path = 0
request = function()
  next_path = next_path % #paths + 1
  return wrk.format("GET", paths[next_path])
end
