#!/usr/bin/env bash
# Load benchmarks on loopback with wrk; appends results to bench/RESULTS.md.
#   bench/run.sh [BUILD_DIR]   (make bench)
#   BENCH_SCENARIOS="http refresh code slots create lua" picks scenarios; BENCH_DURATION=10s; BENCH_PERF=1 records a
#   CPU profile of the server (perf, cpu-clock) during the refresh scenario into var/bench-refresh.perf.
# Each run is bounded: wrk -d for every scenario, the server is stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$build/bin/rendezvous
cfg=bench/bench.yaml
duration=${BENCH_DURATION:-10s}
conns=${BENCH_CONNECTIONS:-64}
threads=${BENCH_THREADS:-2}
# The credential key the calendar plugin wants (the one `make run` made, else a throw-away one).
if [ -z "${RENDEZVOUS_ENCRYPTION_KEY:-}" ]; then
  RENDEZVOUS_ENCRYPTION_KEY=$(cat var/encryption.key 2>/dev/null || openssl rand -base64 32)
  export RENDEZVOUS_ENCRYPTION_KEY
fi
mariadb --no-defaults -S var/db/mysqld.sock -uroot -e "DROP DATABASE IF EXISTS rendezvous_bench; CREATE DATABASE rendezvous_bench"
$bin migrate --config $cfg >/dev/null
uid=$($bin admin user create --config $cfg --email bench@example.com --name Bench --password bench-password | sed -E 's/.*"id":([0-9]+).*/\1/')
key=$($bin admin api-key create --config $cfg --user-id "$uid" | sed -E 's/.*"key":"([^"]+)".*/\1/')
$bin serve --config $cfg 2>var/bench-server.log &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -fs http://127.0.0.1:18090/healthz >/dev/null && break; sleep 0.1; done

run() { # name, wrk args...
  local name=$1; shift
  local out; out=$(wrk -t"$threads" -c"$conns" -d"$duration" --latency "$@")
  local rps; rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  local p50 p99; p50=$(echo "$out" | awk '$1=="50%" {print $2}'); p99=$(echo "$out" | awk '$1=="99%" {print $2}')
  local non2xx; non2xx=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
  echo "| $name | ${rps} | ${p50} | ${p99} | ${non2xx:-0} |"
}

# CPU time (ms) a process has used so far: utime + stime from /proc (clock ticks).
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{printf "%d", ($14 + $15) * 1000 / hz}' "/proc/$1/stat"; }
db_pid=$(cat var/db/mysqld.pid)

want() { [[ " ${BENCH_SCENARIOS:-http refresh code slots create lua} " == *" $1 "* ]]; }
# POST /v2/event-types as the bench user; prints the new event type's id.
event_type() { # slug, length, extra JSON members
  curl -fs -H "Authorization: Bearer $key" -H "Content-Type: application/json" \
    -d "{\"title\":\"Bench $1\",\"slug\":\"$1\",\"lengthInMinutes\":$2$3}" http://127.0.0.1:18090/v2/event-types \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["id"])'
}

{
  echo
  tree=$(git diff --quiet HEAD -- . ':!bench/RESULTS.md' 2>/dev/null && echo "clean tree" || echo "DIRTY tree: not a measurement of this commit")
  echo "## $(date -u +%Y-%m-%dT%H:%MZ) — $(git rev-parse --short HEAD 2>/dev/null || echo unknown) ($tree), $(nproc) cores"
  echo
  echo "Command: \`make bench\` (wrk -t$threads -c$conns -d$duration, keep-alive, server and MariaDB on this machine)"
  echo
  echo "| scenario | requests/s | p50 | p99 | non-2xx |"
  echo "|---|---|---|---|---|"
  if want http; then
    # The yardstick in the same run: a bare Pistache hello-world with as many reactor threads.
    $build/bench/pistache_hello 18095 2 &
    hello_pid=$!
    for _ in $(seq 1 100); do curl -fs http://127.0.0.1:18095/ >/dev/null && break; sleep 0.1; done
    bare=$(run "GET / (bare Pistache 0.0.5 hello-world, bench/pistache_hello)" -H "Connection: keep-alive" http://127.0.0.1:18095/)
    kill $hello_pid; wait $hello_pid 2>/dev/null || true
    echo "$bare"
    health=$(run "GET /healthz" -H "Connection: keep-alive" http://127.0.0.1:18090/healthz)
    echo "$health"
    me=$(run "GET /v2/me (API key)" -H "Connection: keep-alive" -H "Authorization: Bearer $key" http://127.0.0.1:18090/v2/me)
    echo "$me"
    rps() { echo "$1" | awk -F'|' '{gsub(/ /, "", $3); print $3}'; }
    echo "Against bare Pistache in this run: /healthz $(python3 -c "print(f'{100*$(rps "$health")/$(rps "$bare"):.0f}')") %," \
      "/v2/me $(python3 -c "print(f'{100*$(rps "$me")/$(rps "$bare"):.0f}')") %." > var/bench-ratio.txt
  fi
} | tee -a bench/RESULTS.md

# The OAuth client both token scenarios use.
client=$($bin admin oauth-client create --config $cfg --owner-id "$uid" --name "Bench client" \
  --redirect-uri https://bench.example.com/cb --scope PROFILE_READ)
client_id=$(echo "$client" | sed -E 's/.*"client_id":"([^"]+)".*/\1/')
client_secret=$(echo "$client" | sed -E 's/.*"client_secret":"([^"]+)".*/\1/')
$bin admin oauth-client review --config $cfg "$client_id" --accept >/dev/null

# Refresh grants: 32 connections, each rotating its own managed-user grant's refresh token.
# With BENCH_PERF=1 the server is profiled meanwhile (perf record -e cpu-clock -g).
if want refresh; then
refresh_conns=${BENCH_REFRESH_CONNECTIONS:-32}
: > var/bench-refresh-tokens.txt
for i in $(seq 1 "$refresh_conns"); do
  $bin admin managed-user create --config $cfg --client-id "$client_id" --email "m$i@bench.example.com" --name "M $i" \
    | sed -E 's/.*"refresh_token":"([^"]+)".*/\1/' >> var/bench-refresh-tokens.txt
done
if [ "${BENCH_PERF:-0}" = 1 ]; then
  perf record -e cpu-clock -g -o var/bench-refresh.perf -p $pid -- sleep "${duration%s}" >/dev/null 2>&1 &
  perf_pid=$!
fi
cpu0=$(( $(cpu_ms $pid) + $(cpu_ms $db_pid) ))
refresh=$($build/bench/refresh_bench http://127.0.0.1:18090/v2/auth/oauth2/token "$client_id" "$client_secret" \
  "${duration%s}" var/bench-refresh-tokens.txt)
cpu1=$(( $(cpu_ms $pid) + $(cpu_ms $db_pid) ))
rm -f var/bench-refresh-tokens.txt
echo "$refresh" | CPU_MS=$((cpu1 - cpu0)) python3 -c 'import json,os,sys; r=json.load(sys.stdin); n=max(1, r["ok"] + r["failed"]); print("| POST /v2/auth/oauth2/token refresh_token (%d connections, bench/refresh_bench; server+MariaDB CPU %.0f µs/grant) | %.0f | %.2fms | %.2fms | %d failed |" % (r["connections"], int(os.environ["CPU_MS"])*1000.0/n, r["per_second"], r["p50_ms"], r["p99_ms"], r["failed"]))' | tee -a bench/RESULTS.md
[ -n "${perf_pid:-}" ] && wait $perf_pid
fi

# Code exchanges: codes pre-created in oauth_codes (code_hash = SHA-256 hex of the code, as
# TokenService stores it), then exchanged once each by 32 connections.
if want code; then
code_conns=${BENCH_CODE_CONNECTIONS:-32}
code_count=${BENCH_CODES:-40000}
code_prefix="benchcode-$(date +%s)-"
mariadb --no-defaults -S var/db/mysqld.sock -uroot rendezvous_bench -e "
  INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, scopes, all_scopes, code_challenge,
                           created_at, expires_at)
  SELECT SHA2(CONCAT('$code_prefix', seq), 256), '$client_id', $uid, 'https://bench.example.com/cb',
         '[\"PROFILE_READ\"]', 0, '', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL 1 HOUR
  FROM seq_1_to_$code_count"
codes=$($build/bench/code_bench http://127.0.0.1:18090/v2/auth/oauth2/token "$client_id" "$client_secret" \
  https://bench.example.com/cb "${duration%s}" "$code_conns" "$code_prefix" "$code_count")
echo "$codes" | python3 -c 'import json,sys; r=json.load(sys.stdin); print("| POST /v2/auth/oauth2/token authorization_code (%d connections, bench/code_bench) | %.0f | %.2fms | %.2fms | %d failed |" % (r["connections"], r["per_second"], r["p50_ms"], r["p99_ms"], r["failed"]))' | tee -a bench/RESULTS.md
fi

# Slots: a 30-day range of a host with 500 bookings in it (15-minute event type, the implicit
# Monday-Friday 09:00-17:00 UTC), 32 connections.
if want slots; then
slots_et=$(event_type bench-slots 15 "")
first=$(date -u -d "+2 days" +%F)
last=$(date -u -d "+31 days" +%F)
python3 - "$first" "$slots_et" "$uid" <<'PY' | mariadb --no-defaults -S var/db/mysqld.sock -uroot rendezvous_bench
import datetime, sys
first = datetime.date.fromisoformat(sys.argv[1]); et = sys.argv[2]; host = sys.argv[3]
starts = []
for d in range(30):
    day = first + datetime.timedelta(days=d)
    if day.weekday() < 5:
        starts += [datetime.datetime.combine(day, datetime.time(9)) + datetime.timedelta(minutes=15 * k) for k in range(32)]
picked = [starts[round(i * len(starts) / 500)] for i in range(500)]
rows = ",".join(
    "('bench-slot-%d', %s, %s, 'Bench', '', 'accepted', '%s', '%s', 15, NULL, '{}', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))"
    % (i, et, host, s, s + datetime.timedelta(minutes=15)) for i, s in enumerate(picked))
print("INSERT INTO bookings (uid, event_type_id, host_id, title, description, status, start_at, end_at, duration,"
      " location, metadata, created_at, updated_at) VALUES " + rows + ";")
PY
conns=32 run "GET /v2/slots (30 days, 500 bookings in them, 32 connections)" -H "Connection: keep-alive" \
  "http://127.0.0.1:18090/v2/slots?eventTypeId=$slots_et&start=$first&end=$last" | tee -a bench/RESULTS.md
fi

# Racing creates: 32 connections over 50 overlapping starts a day (an hour long, every 5 minutes),
# then the overlapping pairs of accepted or pending bookings are counted (must be 0).
if want create; then
create_et=$(event_type bench-race 60 ',"slotInterval":5')
first=$(date -u -d "+2 days" +%F)
race=$($build/bench/create_bench http://127.0.0.1:18090/v2/bookings "$create_et" "${duration%s}" 32 "$first" 60)
overlaps=$(mariadb --no-defaults -S var/db/mysqld.sock -uroot rendezvous_bench -N -e "
  SELECT COUNT(*) FROM bookings a JOIN bookings b ON a.host_id = b.host_id AND a.id < b.id
  WHERE a.status IN ('accepted', 'pending') AND b.status IN ('accepted', 'pending')
    AND a.start_at < b.end_at AND b.start_at < a.end_at")
echo "$race" | OVERLAPS=$overlaps python3 -c 'import json,os,sys; c,r=[json.loads(l) for l in sys.stdin.read().split()]; print("| POST /v2/bookings racing (32 connections, 50 overlapping starts a weekday, bench/create_bench): %d created, %d answered 409, overlapping pairs afterwards: %s | %.0f | %.2fms | %.2fms | %d failed |" % (c["created"], c["conflicts"], os.environ["OVERLAPS"], r["per_second"], r["p50_ms"], r["p99_ms"], r["failed"]))' | tee -a bench/RESULTS.md
fi

# Webhook Lua hooks in process (no server): the shipped filter and Slack render per delivery, one
# thread; p50/p99 are per delivery (target < 20 µs).
if want lua; then
lua=$($build/bench/lua_hooks_bench scripts/webhooks 50000)
echo "$lua" | python3 -c 'import json,sys; r=json.load(sys.stdin); print("| webhook Lua hooks: filter + Slack render per delivery (shipped scripts, one thread, bench/lua_hooks_bench; mean %.1f µs) | %.0f deliveries/s | %.1fµs | %.1fµs | - |" % (r["mean_us"], r["per_second"], r["p50_us"], r["p99_us"]))' | tee -a bench/RESULTS.md
fi

if [ -s var/bench-ratio.txt ]; then
  { echo; cat var/bench-ratio.txt; } | tee -a bench/RESULTS.md
  rm -f var/bench-ratio.txt
fi
