#!/usr/bin/env bash
# Load benchmarks on loopback with wrk; appends results to bench/RESULTS.md.
#   bench/run.sh [BUILD_DIR]   (make bench)
#   BENCH_SCENARIOS="http refresh dpop oidc_provider code slots slots_cold create managed_create reserve lua http_client http_perform webhooks_drain webhooks_fanout webhooks_latency webhooks_latency_500 calendar_lookup me_under_slots ics_memory" picks scenarios
#   (the webhook figures of docs/webhooks.md: BENCH_SCENARIOS="webhooks_drain webhooks_fanout
#   webhooks_latency_500 lua" BENCH_WEBHOOK_WORKERS=128 make bench); BENCH_DURATION=10s; BENCH_PERF=1 records a
#   CPU profile of the server (perf, cpu-clock) during the refresh scenario into var/bench-refresh.perf
#   and during the webhook drain into var/bench-webhooks-drain.perf. BENCH_RESULTS names the file the
#   results are appended to (default bench/RESULTS.md).
#   BENCH_ICS_READERS=24 runs ics_memory with 24 concurrent readers (half busy-times, half slots).
#   BENCH_SCENARIOS=cluster (not in the default list: it forms a three-node Galera cluster, one to
#   two minutes on a loaded machine, then runs three targets): bench/cluster.sh, single node vs
#   Galera through HAProxy vs three writers, and the writer node's death through HAProxy.
# Each run is bounded: wrk -d for every scenario, the server is stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$build/bin/rendezvous
# bench/bench.yaml is the template; the main server gets ports the kernel picked (several benches
# may run on one machine at once), written to var/bench.yaml.
base_cfg=bench/bench.yaml
cfg=var/bench.yaml
# A port the kernel picks (free now) for a server or peer.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
mkdir -p var
api_port=$(free_port)
api=http://127.0.0.1:$api_port
sed -e "s/18090/$api_port/g" -e "s/18091/$(free_port)/g" $base_cfg > $cfg
results=${BENCH_RESULTS:-bench/RESULTS.md}
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
for _ in $(seq 1 100); do curl -fs $api/healthz >/dev/null && break; sleep 0.1; done

run() { # name, wrk args...
  local name=$1; shift
  local out; out=$(wrk -t"$threads" -c"$conns" -d"$duration" --latency "$@")
  local rps; rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  local p50 p99; p50=$(echo "$out" | awk '$1=="50%" {print $2}'); p99=$(echo "$out" | awk '$1=="99%" {print $2}')
  local non2xx; non2xx=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
  # A script that checks the answers (bench/slots_windows.lua) prints how many failed the check.
  local unchecked; unchecked=$(echo "$out" | awk -F': ' '/^answers without slots: / {print $2}')
  [ -n "$unchecked" ] && name="$name; answers without slots: $unchecked"
  echo "| $name | ${rps} | ${p50} | ${p99} | ${non2xx:-0} |"
}

# CPU time (ms) a process has used so far: utime + stime from /proc (clock ticks).
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{printf "%d", ($14 + $15) * 1000 / hz}' "/proc/$1/stat"; }
db_pid=$(cat var/db/mysqld.pid)

want() { [[ " ${BENCH_SCENARIOS:-http refresh dpop oidc_provider code slots slots_cold create managed_create reserve lua http_client http_perform webhooks_drain webhooks_fanout webhooks_latency webhooks_latency_500 calendar_lookup me_under_slots ics_memory} " == *" $1 "* ]]; }
# POST /v2/event-types as the bench user; prints the new event type's id.
event_type() { # slug, length, extra JSON members
  curl -fs -H "Authorization: Bearer $key" -H "Content-Type: application/json" \
    -d "{\"title\":\"Bench $1\",\"slug\":\"$1\",\"lengthInMinutes\":$2$3}" $api/v2/event-types \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["id"])'
}

{
  echo
  tree=$(git diff --quiet HEAD -- . ':!bench/RESULTS.md' 2>/dev/null && echo "clean tree" || echo "DIRTY tree: not a measurement of this commit")
  echo "## $(date -u +%Y-%m-%dT%H:%MZ) — $(git rev-parse --short HEAD 2>/dev/null || echo unknown) ($tree), $(nproc) cores"
  echo
  # The exact command: the BENCH_* settings of this run, then make bench.
  # (none set: grep finds nothing, which must not end the run under pipefail)
  settings=$(env | { grep -E '^BENCH_' || true; } | { grep -v '^BENCH_RESULTS=' || true; } | sort \
    | sed -E "s/^([A-Z_]+)=(.*[ ].*)\$/\1=\"\2\"/" | tr '\n' ' ')
  echo "Command: \`${settings}make bench\` (wrk -t$threads -c$conns -d$duration, keep-alive, server and MariaDB on this machine)"
  echo
  echo "| scenario | requests/s | p50 | p99 | non-2xx |"
  echo "|---|---|---|---|---|"
  if want http; then
    # The yardstick in the same run: a bare Pistache hello-world with as many reactor threads.
    hello_port=$(free_port)
    $build/bench/pistache_hello $hello_port 2 &
    hello_pid=$!
    for _ in $(seq 1 100); do curl -fs http://127.0.0.1:$hello_port/ >/dev/null && break; sleep 0.1; done
    bare=$(run "GET / (bare Pistache 0.0.5 hello-world, bench/pistache_hello)" -H "Connection: keep-alive" http://127.0.0.1:$hello_port/)
    kill $hello_pid; wait $hello_pid 2>/dev/null || true
    echo "$bare"
    health=$(run "GET /healthz" -H "Connection: keep-alive" $api/healthz)
    echo "$health"
    me=$(run "GET /v2/me (API key)" -H "Connection: keep-alive" -H "Authorization: Bearer $key" $api/v2/me)
    echo "$me"
    rps() { echo "$1" | awk -F'|' '{gsub(/ /, "", $3); print $3}'; }
    echo "Against bare Pistache in this run: /healthz $(python3 -c "print(f'{100*$(rps "$health")/$(rps "$bare"):.0f}')") %," \
      "/v2/me $(python3 -c "print(f'{100*$(rps "$me")/$(rps "$bare"):.0f}')") %." > var/bench-ratio.txt
  fi
} | tee -a "$results"

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
refresh=$($build/bench/refresh_bench $api/v2/auth/oauth2/token "$client_id" "$client_secret" \
  "${duration%s}" var/bench-refresh-tokens.txt)
cpu1=$(( $(cpu_ms $pid) + $(cpu_ms $db_pid) ))
rm -f var/bench-refresh-tokens.txt
echo "$refresh" | CPU_MS=$((cpu1 - cpu0)) python3 -c 'import json,os,sys; r=json.load(sys.stdin); n=max(1, r["ok"] + r["failed"]); print("| POST /v2/auth/oauth2/token refresh_token (%d connections, bench/refresh_bench; server+MariaDB CPU %.0f µs/grant) | %.0f | %.2fms | %.2fms | %d failed |" % (r["connections"], int(os.environ["CPU_MS"])*1000.0/n, r["per_second"], r["p50_ms"], r["p99_ms"], r["failed"]))' | tee -a "$results"
[ -n "${perf_pid:-}" ] && wait $perf_pid
fi

# DPoP (RFC 9449): GET /v2/me with a DPoP-bound token and a fresh ES256 proof per request, and the
# refresh grant with a proof per grant, each as a ratio of its bearer twin measured right before
# by the same client (bench/dpop_bench; it signs the proofs on the same cores). GET /v2/me again
# with proofs signed before the clock starts: the server's whole work per request, without the
# client's signing on the same two cores.
if want dpop; then
dpop_conns=${BENCH_DPOP_CONNECTIONS:-8}
dpop_rows=()
for scenario in me refresh; do
  modes="bearer dpop"
  [ $scenario = me ] && modes="bearer dpop dpop-presigned"
  for mode in $modes; do
    : > var/bench-dpop-tokens.txt
    for i in $(seq 1 "$dpop_conns"); do
      $bin admin managed-user create --config $cfg --client-id "$client_id" --email "d-$scenario-$mode-$i@bench.example.com" \
        --name "D $i" | sed -E 's/.*"refresh_token":"([^"]+)".*/\1/' >> var/bench-dpop-tokens.txt
    done
    # /v2/me takes third-party apps' tokens, not managed users': these grants stand for apps' grants.
    [ $scenario = me ] && mariadb --no-defaults -S var/db/mysqld.sock -uroot rendezvous_bench \
      -e "UPDATE oauth_grants SET kind = 'oauth' WHERE kind = 'managed'"
    srv0=$(cpu_ms $pid); db0=$(cpu_ms $db_pid)
    out=$($build/bench/dpop_bench $scenario $mode $api "$client_id" "$client_secret" "${duration%s}" var/bench-dpop-tokens.txt)
    srv1=$(cpu_ms $pid); db1=$(cpu_ms $db_pid)
    # The server's and MariaDB's CPU per answered request: steadier than the rate on a shared machine.
    out=$(echo "$out" | SRV_MS=$((srv1 - srv0)) DB_MS=$((db1 - db0)) python3 -c 'import json,os,sys; r=json.load(sys.stdin); n=max(r["ok"],1); r["server_us"]=int(os.environ["SRV_MS"])*1000.0/n; r["db_us"]=int(os.environ["DB_MS"])*1000.0/n; r["cpu_us"]=r["server_us"]+r["db_us"]; print(json.dumps(r))')
    dpop_rows+=("$out")
    echo "$out" | SCENARIO=$scenario MODE=$mode python3 -c 'import json,os,sys; r=json.load(sys.stdin); what={"me":"GET /v2/me","refresh":"POST /v2/auth/oauth2/token refresh_token"}[os.environ["SCENARIO"]]; how={"bearer":"Bearer","dpop":"DPoP proof per request","dpop-presigned":"DPoP proof per request, signed ahead"}[os.environ["MODE"]]; print("| %s, %s (%d connections, bench/dpop_bench; CPU per request: server %.0f µs + MariaDB %.0f µs) | %.0f | %.2fms | %.2fms | %d failed |" % (what, how, r["connections"], r["server_us"], r["db_us"], r["per_second"], r["p50_ms"], r["p99_ms"], r["failed"]))' | tee -a "$results"
  done
done
rm -f var/bench-dpop-tokens.txt
printf '%s\n' "${dpop_rows[@]}" | python3 -c 'import json,sys; r=[json.loads(l) for l in sys.stdin]; print("DPoP/Bearer: GET /v2/me %.2f (proofs signed ahead: %.2f; server+MariaDB CPU per request, Bearer/DPoP: %.2f), refresh grant %.2f" % (r[1]["per_second"]/max(r[0]["per_second"],1e-9), r[2]["per_second"]/max(r[0]["per_second"],1e-9), r[0]["cpu_us"]/max(r[2]["cpu_us"],1e-9), r[4]["per_second"]/max(r[3]["per_second"],1e-9)))' | tee -a "$results"
fi

# The token path against node oidc-provider 9 (bench/oidc_provider_server.mjs: in-memory adapter,
# refresh rotation on; installed into bench/node_modules when missing), in the same run, in
# alternating pairs (odd pairs Rendezvous first): the refresh grant (32 connections, each rotating
# its own chain, bench/refresh_bench), introspection of an access token and GET of the user (ours
# /v2/me, its /me) with a Bearer token (wrk, 32 connections), and with a DPoP proof per request
# signed ahead (bench/dpop_bench me dpop-presigned, 8 connections). CPU per operation: utime +
# stime from /proc of the server and MariaDB (ours) or of the node process (its), around each run.
# GET /v2/me with the API key too (ours only): the figure a Bearer token is held against.
# BENCH_OIDC_PAIRS pairs (default 4); the table of medians at the end.
if want oidc_provider; then
[ -d bench/node_modules/oidc-provider ] ||
  npm install --prefix bench --no-save --no-audit --no-fund oidc-provider@9.13.3 >var/bench-npm.log 2>&1
op_pairs=${BENCH_OIDC_PAIRS:-4}
op_port=$(free_port)
op_secret=$(openssl rand -hex 24)
NODE_ENV=production node bench/oidc_provider_server.mjs "$op_port" "$op_secret" $((op_pairs * 32)) var/bench-op-tokens.json >var/bench-op.log 2>&1 &
op_pid=$!
trap 'kill $pid $op_pid 2>/dev/null; wait $pid $op_pid 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do grep -q '^listening' var/bench-op.log && break; sleep 0.1; done
grep -q '^listening' var/bench-op.log || { echo "oidc-provider did not start: var/bench-op.log" >&2; exit 1; }
op=http://127.0.0.1:$op_port
op_tokens() { python3 -c 'import json,sys; t=json.load(open("var/bench-op-tokens.json"))[sys.argv[1]]; a=int(sys.argv[2]); print("\n".join(t[a:a+int(sys.argv[3])]))' "$@"; }
# Our access tokens: a managed user's, its grant made an app's ('oauth': /v2/me takes those).
op_user() { # email
  $bin admin managed-user create --config $cfg --client-id "$client_id" --email "$1" --name "O" \
    | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r.get("access_token") or r["accessToken"], r.get("refresh_token") or r["refreshToken"])'
}
read -r our_access _ <<<"$(op_user op-me@bench.example.com)"
mariadb --no-defaults -S var/db/mysqld.sock -uroot rendezvous_bench -e "UPDATE oauth_grants g JOIN oauth_access_tokens a
  ON a.grant_id = g.id SET g.kind = 'oauth' WHERE a.token_hash = SHA2('$our_access', 256)"
op_access=$(op_tokens access 0 1)
# wrk: "rate p99_ms"
wrk_rate() { wrk -t"$threads" -c32 -d"$duration" --latency "$@" | python3 -c '
import re, sys
out = sys.stdin.read()
rate = float(re.search(r"Requests/sec:\s+([0-9.]+)", out).group(1))
v, unit = re.search(r"^\s*99%\s+([0-9.]+)(us|ms|s)\b", out, re.M).groups()
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
print(rate, float(v) * {"us": 0.001, "ms": 1, "s": 1000}[unit], non2xx.group(1) if non2xx else 0)'; }
# json line of refresh_bench / dpop_bench -> "rate p99_ms failed"
tally_rate() { python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["per_second"], r["p99_ms"], r["failed"])'; }
# One measurement: side (ours|op), scenario, pair -> appends "side scenario pair rate p99 failed cpu_us_per_op"
op_measure() {
  local side=$1 scenario=$2 pair=$3 c0 c1 out
  local pids="$op_pid"; [ "$side" = ours ] && pids="$pid $db_pid"
  local base=$api; [ "$side" = op ] && base=$op
  cpu_sum() { local t=0 p; for p in $pids; do t=$((t + $(cpu_ms "$p"))); done; echo $t; }
  case $scenario in
    refresh)
      if [ "$side" = ours ]; then
        : >var/bench-op-chains.txt
        for i in $(seq 1 32); do op_user "op-r$pair-$i@bench.example.com" | cut -d' ' -f2 >>var/bench-op-chains.txt; done
      else
        op_tokens refresh $(((pair - 1) * 32)) 32 >var/bench-op-chains.txt
      fi
      local url=$api/v2/auth/oauth2/token id=$client_id secret=$client_secret
      [ "$side" = op ] && { url=$op/token; id=bench; secret=$op_secret; }
      c0=$(cpu_sum); out=$($build/bench/refresh_bench "$url" "$id" "$secret" "${duration%s}" var/bench-op-chains.txt | tally_rate || true); c1=$(cpu_sum) ;;
    introspection)
      local form="token=$our_access&client_id=$client_id&client_secret=$client_secret" url=$api/v2/auth/oauth2/introspect
      [ "$side" = op ] && { form="token=$op_access&client_id=bench&client_secret=$op_secret"; url=$op/token/introspection; }
      c0=$(cpu_sum); out=$(BENCH_FORM=$form wrk_rate -s bench/post_form.lua "$url"); c1=$(cpu_sum) ;;
    bearer_me)
      local token=$our_access url=$api/v2/me
      [ "$side" = op ] && { token=$op_access; url=$op/me; }
      c0=$(cpu_sum); out=$(wrk_rate -H "Connection: keep-alive" -H "Authorization: Bearer $token" "$url"); c1=$(cpu_sum) ;;
    api_key_me)
      c0=$(cpu_sum); out=$(wrk_rate -H "Connection: keep-alive" -H "Authorization: Bearer $key" "$api/v2/me"); c1=$(cpu_sum) ;;
    dpop_me)
      if [ "$side" = ours ]; then
        : >var/bench-op-chains.txt
        for i in $(seq 1 8); do
          read -r a r <<<"$(op_user "op-d$pair-$i@bench.example.com")"
          echo "$r" >>var/bench-op-chains.txt
          mariadb --no-defaults -S var/db/mysqld.sock -uroot rendezvous_bench -e "UPDATE oauth_grants g JOIN oauth_access_tokens t
            ON t.grant_id = g.id SET g.kind = 'oauth' WHERE t.token_hash = SHA2('$a', 256)"
        done
        c0=$(cpu_sum); out=$($build/bench/dpop_bench me dpop-presigned $api "$client_id" "$client_secret" "${duration%s}" var/bench-op-chains.txt | tally_rate || true); c1=$(cpu_sum)
      else
        op_tokens openid_refresh $(((pair - 1) * 8)) 8 >var/bench-op-chains.txt
        c0=$(cpu_sum); out=$(DPOP_BENCH_TOKEN_PATH=/token DPOP_BENCH_ME_PATH=/me $build/bench/dpop_bench me dpop-presigned $op bench "$op_secret" "${duration%s}" var/bench-op-chains.txt | tally_rate || true); c1=$(cpu_sum)
      fi ;;
  esac
  read -r rate p99 failed <<<"$out"
  echo "$side $scenario $pair $rate $p99 $failed $(python3 -c "print(round(($c1 - $c0) * 1000.0 / max(1.0, $rate * ${duration%s}), 1))")" | tee -a var/bench-op-runs.txt >&2
}
: >var/bench-op-runs.txt
for pair in $(seq 1 "$op_pairs"); do
  for scenario in refresh introspection bearer_me dpop_me; do
    if [ $((pair % 2)) = 1 ]; then op_measure ours $scenario $pair; op_measure op $scenario $pair
    else op_measure op $scenario $pair; op_measure ours $scenario $pair; fi
  done
  op_measure ours api_key_me $pair
done
rm -f var/bench-op-chains.txt
python3 - var/bench-op-runs.txt "$op_pairs" <<'PY' | tee -a "$results"
import statistics, sys
runs = [l.split() for l in open(sys.argv[1]) if l.strip()]
def pick(side, scenario, col):
    return [float(r[col]) for r in runs if r[0] == side and r[1] == scenario]
med = lambda v: statistics.median(v) if v else float("nan")
names = {"refresh": "refresh grant, 32 connections (bench/refresh_bench)",
         "introspection": "introspection, 32 connections (wrk, bench/post_form.lua)",
         "bearer_me": "`GET /v2/me` (its `/me`), Bearer, 32 connections (wrk)",
         "dpop_me": "`GET /v2/me` (its `/me`), DPoP, proofs signed ahead, 8 connections (bench/dpop_bench)"}
print()
print("Against node oidc-provider 9.13.3 (in-memory adapter, refresh rotation on), %s alternating pairs, medians;"
      " CPU per operation: server + MariaDB (ours), the node process (its), utime + stime from /proc:" % sys.argv[2])
print()
print("| scenario | Rendezvous | oidc-provider | rate ratio | CPU ratio | failed (ours/its) |")
print("|---|---|---|---|---|---|")
for s, name in names.items():
    o = [med(pick("ours", s, c)) for c in (3, 4, 6)]
    t = [med(pick("op", s, c)) for c in (3, 4, 6)]
    fo, ft = int(sum(pick("ours", s, 5))), int(sum(pick("op", s, 5)))
    print("| %s | %.0f/s, p99 %.1f ms, %.0f µs CPU an operation | %.0f/s, p99 %.1f ms, %.0f µs | %.2f× | %.2f× | %d/%d |"
          % (name, o[0], o[1], o[2], t[0], t[1], t[2], o[0] / t[0], o[2] / t[2], fo, ft))
k = [med(pick("ours", "api_key_me", c)) for c in (3, 4, 6)]
b = med(pick("ours", "bearer_me", 6))
d = med(pick("ours", "dpop_me", 3)); br = med(pick("ours", "bearer_me", 3))
print("| `GET /v2/me`, API key, 32 connections (wrk) | %.0f/s, p99 %.1f ms, %.0f µs | — | Bearer ÷ API key CPU %.2f× | | |" % (k[0], k[1], k[2], b / k[2]))
print()
print("Every run (side scenario pair rate p99_ms failed cpu_µs_per_op):")
print()
for r in runs:
    print("    " + " ".join(r))
PY
fi

# Code exchanges: codes pre-created in oauth_codes (code_hash = SHA-256 hex of the code, as
# CodeExchange stores it), then exchanged once each by 32 connections.
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
codes=$($build/bench/code_bench $api/v2/auth/oauth2/token "$client_id" "$client_secret" \
  https://bench.example.com/cb "${duration%s}" "$code_conns" "$code_prefix" "$code_count")
echo "$codes" | python3 -c 'import json,sys; r=json.load(sys.stdin); print("| POST /v2/auth/oauth2/token authorization_code (%d connections, bench/code_bench) | %.0f | %.2fms | %.2fms | %d failed |" % (r["connections"], r["per_second"], r["p50_ms"], r["p99_ms"], r["failed"]))' | tee -a "$results"
fi

# Slots: a 30-day range of a host with 500 bookings in it (15-minute event type, the default
# schedule every user is made with: Monday-Friday 09:00-17:00 UTC), 32 connections.
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
  "$api/v2/slots?eventTypeId=$slots_et&start=$first&end=$last" | tee -a "$results"
fi

# Slots of a host with 5,000 bookings in each of 8 consecutive 30-day windows (40,000 five-minute
# bookings of another event type, all day every day: seven back to back from the start of every
# hour, so each hour keeps 25 free minutes and every working hour a 15-minute slot; more than the
# booked-times cache keeps for a host), asked for a 15-minute event type on the implicit working
# hours: 8 rotating windows, then 8 windows shifted by an hour each over the first 5,000 bookings
# (one range of the cache). bench/slots_windows.lua counts the answers without a slot (must be 0).
if want slots_cold; then
cold_uid=$($bin admin user create --config $cfg --email cold@example.com --name Cold --password bench-password | sed -E 's/.*"id":([0-9]+).*/\1/')
cold_key=$($bin admin api-key create --config $cfg --user-id "$cold_uid" | sed -E 's/.*"key":"([^"]+)".*/\1/')
cold_et() { curl -fs -H "Authorization: Bearer $cold_key" -H "Content-Type: application/json" \
  -d "{\"title\":\"Cold $1\",\"slug\":\"$1\",\"lengthInMinutes\":$2}" $api/v2/event-types \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["id"])'; }
cold_slots=$(cold_et cold-slots 15)
cold_busy=$(cold_et cold-busy 5)
first=$(date -u -d "+2 days" +%F)
python3 - "$first" "$cold_busy" "$cold_uid" <<'PY' | mariadb --no-defaults -S var/db/mysqld.sock -uroot rendezvous_bench
import datetime, sys
first = datetime.datetime.fromisoformat(sys.argv[1]); et = sys.argv[2]; host = sys.argv[3]
for w in range(8):
    base = first + datetime.timedelta(days=30 * w)
    starts = [base + datetime.timedelta(hours=i // 7, minutes=5 * (i % 7)) for i in range(5000)]
    print("INSERT INTO bookings (uid, event_type_id, host_id, title, description, status, start_at, end_at, duration,"
          " location, metadata, created_at, updated_at) VALUES " + ",".join(
        "('bench-cold-%d-%d', %s, %s, 'Bench', '', 'accepted', '%s', '%s', 5, NULL, '{}', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))"
        % (w, i, et, host, s, s + datetime.timedelta(minutes=5)) for i, s in enumerate(starts)) + ";")
PY
windows() { # step (hours)
  for w in $(seq 0 7); do
    from=$(date -u -d "$first +$(( w * $1 )) hours" +%FT%TZ); to=$(date -u -d "$first +$(( w * $1 + 720 )) hours" +%FT%TZ)
    printf '/v2/slots?eventTypeId=%s&start=%s&end=%s ' "$cold_slots" "$from" "$to"
  done
}
BENCH_PATHS=$(windows 720) conns=32 run "GET /v2/slots cold (8 rotating 30-day windows, 5,000 bookings in each, 40,000 in all, 32 connections, bench/slots_windows.lua)" \
  -H "Connection: keep-alive" -s bench/slots_windows.lua $api | tee -a "$results"
BENCH_PATHS=$(windows 1) conns=32 run "GET /v2/slots (8 rotating 30-day windows an hour apart, 5,000 bookings in each, 32 connections, bench/slots_windows.lua)" \
  -H "Connection: keep-alive" -s bench/slots_windows.lua $api | tee -a "$results"
fi

# Racing creates: 32 connections over 50 overlapping starts a day (an hour long, every 5 minutes),
# then the overlapping pairs of accepted or pending bookings are counted (must be 0).
if want create; then
create_et=$(event_type bench-race 60 ',"slotInterval":5')
first=$(date -u -d "+2 days" +%F)
race=$($build/bench/create_bench $api/v2/bookings "$create_et" "${duration%s}" 32 "$first" 60)
overlaps=$(mariadb --no-defaults -S var/db/mysqld.sock -uroot rendezvous_bench -N -e "
  SELECT COUNT(*) FROM bookings a JOIN bookings b ON a.host_id = b.host_id AND a.id < b.id
  WHERE a.status IN ('accepted', 'pending') AND b.status IN ('accepted', 'pending')
    AND a.start_at < b.end_at AND b.start_at < a.end_at")
echo "$race" | OVERLAPS=$overlaps python3 -c 'import json,os,sys; c,r=[json.loads(l) for l in sys.stdin.read().split()]; print("| POST /v2/bookings racing (32 connections, 50 overlapping starts a weekday, bench/create_bench): %d created, %d answered 409, overlapping pairs afterwards: %s | %.0f | %.2fms | %.2fms | %d failed |" % (c["created"], c["conflicts"], os.environ["OVERLAPS"], r["per_second"], r["p50_ms"], r["p99_ms"], r["failed"]))' | tee -a "$results"
fi

# Managed-user creation by a platform client (POST /v2/oauth-clients/{clientId}/users: a user,
# its profile, its grant and first tokens, its link to the client), beside the booking rate above.
# Each request a new e-mail (bench/managed_users.lua); non-2xx would be refusals.
if want managed_create; then
mu_client=$($bin admin oauth-client create --config $cfg --owner-id "$uid" --name "Bench platform" \
  --redirect-uri https://bench.example/cb --scope PROFILE_READ)
mu_id=$(echo "$mu_client" | python3 -c 'import json,sys; print(json.load(sys.stdin)["client_id"])')
mu_secret=$(echo "$mu_client" | python3 -c 'import json,sys; print(json.load(sys.stdin)["client_secret"])')
$bin admin oauth-client review --config $cfg "$mu_id" --accept >/dev/null
before=$(mariadb --no-defaults -S var/db/mysqld.sock -uroot rendezvous_bench -N -e "SELECT COUNT(*) FROM oauth_managed_users")
export MU_CLIENT_ID=$mu_id MU_CLIENT_SECRET=$mu_secret
run "POST /v2/oauth-clients/{id}/users (a new managed user each, bench/managed_users.lua)" \
  -s bench/managed_users.lua $api | tee -a "$results"
after=$(mariadb --no-defaults -S var/db/mysqld.sock -uroot rendezvous_bench -N -e "SELECT COUNT(*) FROM oauth_managed_users")
echo "| managed users created by that run (oauth_managed_users rows) | $((after - before)) | | | |" | tee -a "$results"
fi

# Slot reservations beside bookings: the racing creates above, and the same race holding the
# slots instead (POST /v2/slots/reservations; a hold is checked and written under the host's lock
# as a booking is), alternating book, reserve, book, reserve, each run on 60 days of its own (from
# 100, 170, 240 and 310 days ahead: no run meets another's bookings or holds). The reservation
# rate is given as a ratio to the booking rate of the same round. Afterwards the overlapping
# bookings, and the overlapping holds, are counted (must be 0).
if want reserve; then
declare -A reserve_rates=()
offset=100
for round in 1 2; do
  for mode in book reserve; do
    race_et=$(event_type bench-$mode-$round 60 ',"slotInterval":5')
    route=$([ $mode = book ] && echo bookings || echo slots/reservations)
    race=$($build/bench/create_bench $api/v2/$route "$race_et" "${duration%s}" 32 "$(date -u -d "+$offset days" +%F)" 60 $mode)
    offset=$((offset + 70))
    overlaps=$(mariadb --no-defaults -S var/db/mysqld.sock -uroot rendezvous_bench -N -e "
      SELECT (SELECT COUNT(*) FROM bookings a JOIN bookings b ON a.host_id = b.host_id AND a.id < b.id
              WHERE a.status IN ('accepted', 'pending') AND b.status IN ('accepted', 'pending')
                AND a.start_at < b.end_at AND b.start_at < a.end_at)
           + (SELECT COUNT(*) FROM slot_reservations a JOIN slot_reservations b ON a.host_id = b.host_id AND a.id < b.id
              WHERE a.start_ms < b.end_ms AND b.start_ms < a.end_ms)")
    line=$(echo "$race" | MODE=$mode ROUND=$round OVERLAPS=$overlaps python3 -c 'import json,os,sys; c,r=[json.loads(l) for l in sys.stdin.read().split()]; what={"book":"POST /v2/bookings","reserve":"POST /v2/slots/reservations"}[os.environ["MODE"]]; made={"book":"created","reserve":"held"}[os.environ["MODE"]]; print("%.3f|| %s racing, round %s (32 connections, 50 overlapping starts a weekday, bench/create_bench %s): %d %s, %d answered 409, overlapping bookings or holds afterwards: %s | %.0f | %.2fms | %.2fms | %d failed |" % (r["per_second"], what, os.environ["ROUND"], os.environ["MODE"], c["created"], made, c["conflicts"], os.environ["OVERLAPS"], r["per_second"], r["p50_ms"], r["p99_ms"], r["failed"]))')
    reserve_rates[$mode-$round]=${line%%||*}
    echo "|${line#*||}" | tee -a "$results"
  done
done
echo "| POST /v2/slots/reservations ÷ POST /v2/bookings, same run: round 1 $(python3 -c "print(f'{${reserve_rates[reserve-1]}/${reserve_rates[book-1]}:.2f}')")×, round 2 $(python3 -c "print(f'{${reserve_rates[reserve-2]}/${reserve_rates[book-2]}:.2f}')")× | | | | |" | tee -a "$results"
fi

# Webhook delivery, with its own server (ports the kernel picked, `plugins.webhooks` allowing the
# loopback receivers) and database: bench/webhook_bench is the receiver (and, for latency, posts the
# bookings). Every host gets a schedule open all day every day (UTC) and a 5-minute event type.
# Progress is read from the server's own metric (webhooks_delivery_attempts_total, outcome
# "succeeded", polled on /metrics every 100 ms), so the bench adds no query to the database it
# measures.
if want webhooks_drain || want webhooks_fanout || want webhooks_latency || want webhooks_latency_500; then
# One receiver is one destination: workers_per_host as large as workers (its default is 8).
wh_workers=${BENCH_WEBHOOK_WORKERS:-32}
wh_per_host=${BENCH_WEBHOOK_WORKERS_PER_HOST:-$wh_workers}
wh_settings="workers $wh_workers, workers_per_host $wh_per_host"
# The receiver and poster: BENCH_TOOLS names another build's bench folder, so that a reference
# build of the server is driven by the same client (default: the build's own).
wh_tool=${BENCH_TOOLS:-$build/bench}/webhook_bench
wh_cfg=var/bench-webhooks.yaml
wh_port=$(free_port)
# The public pool (POST /v2/bookings) as large as the API pool and at normal priority: the
# latency scenario measures the path from the booking's commit to its delivery, and a pool of 4
# threads at nice 10 cannot post 500 bookings a second on a shared machine.
sed -e "s/18090/$wh_port/g" -e "s/18091/$(free_port)/g" -e "s/name: rendezvous_bench\$/name: rendezvous_bench_webhooks/" \
  -e "s/^  worker_threads: 16\$/  worker_threads: 16\n  public_worker_threads: 16\n  public_worker_nice: 0/" \
  $base_cfg > $wh_cfg
printf '  webhooks: { allow_private_networks: true, workers: %s, workers_per_host: %s }\n' \
  "$wh_workers" "$wh_per_host" >> $wh_cfg
wh_url=http://127.0.0.1:$wh_port
sql() { mariadb --no-defaults -S var/db/mysqld.sock -uroot -N rendezvous_bench_webhooks -e "$1"; }
mariadb --no-defaults -S var/db/mysqld.sock -uroot -e "DROP DATABASE IF EXISTS rendezvous_bench_webhooks; CREATE DATABASE rendezvous_bench_webhooks"
$bin migrate --config $wh_cfg >/dev/null
wh_pid=''
recv_pids=''
trap 'kill $pid $wh_pid $recv_pids 2>/dev/null; wait $pid $wh_pid $recv_pids 2>/dev/null || true' EXIT
wh_start() {
  $bin serve --config $wh_cfg 2>>var/bench-webhooks-server.log &
  wh_pid=$!
  for _ in $(seq 1 400); do curl -fs $wh_url/healthz >/dev/null && return 0; sleep 0.025; done
  echo "the webhooks bench server did not answer /healthz within 10 s" >&2
  return 1
}
wh_stop() { kill $wh_pid; wait $wh_pid 2>/dev/null || true; wh_pid=''; }
# Successful attempts so far, from the server's metric (0 when it does not answer).
wh_succeeded() {
  curl -fs $wh_url/metrics 2>/dev/null \
    | awk '/^webhooks_delivery_attempts_total\{/ && /outcome="succeeded"/ {s += $NF} END {printf "%d", s}' || echo 0
}
# KEY PATH JSON: POST as that user; prints the answer's data.id.
wh_post() {
  curl -fs -H "Authorization: Bearer $1" -H "Content-Type: application/json" -d "$3" "$wh_url$2" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["id"])'
}
# NAME: a host with an API key, an all-day schedule and a 5-minute event type; prints "KEY EVENT_TYPE_ID".
wh_host() {
  local user key schedule
  user=$($bin admin user create --config $wh_cfg --email "$1@bench.example.com" --name "Host $1" --password bench-password \
    | sed -E 's/.*"id":([0-9]+).*/\1/')
  key=$($bin admin api-key create --config $wh_cfg --user-id "$user" | sed -E 's/.*"key":"([^"]+)".*/\1/')
  schedule=$(wh_post "$key" /v2/schedules '{"name":"All day","timeZone":"UTC","availability":[{"days":["Monday","Tuesday","Wednesday","Thursday","Friday","Saturday","Sunday"],"startTime":"00:00","endTime":"24:00"}]}')
  echo "$key $(wh_post "$key" /v2/event-types "{\"title\":\"Bench $1\",\"slug\":\"$1\",\"lengthInMinutes\":5,\"scheduleId\":$schedule}")"
}
# KEY RECEIVER_PORT [PATH]: a BOOKING_CREATED webhook to the receiver; prints its id.
wh_webhook() {
  wh_post "$1" /v2/webhooks "{\"active\":true,\"subscriberUrl\":\"http://127.0.0.1:$2/${3:-hook}\",\"triggers\":[\"BOOKING_CREATED\"]}"
}
# PORT: waits (bounded) until the receiver answers.
wait_receiver() {
  for _ in $(seq 1 200); do curl -fs "http://127.0.0.1:$1/" >/dev/null && return 0; sleep 0.025; done
  echo "the webhook receiver did not start" >&2
  return 1
}
# EVENT_TYPE_ID: one real public booking of it (its BOOKING_CREATED event is the one copied below).
wh_booking() {
  curl -fs -H "Content-Type: application/json" -o /dev/null -d "{\"start\":\"$first_start\",\"eventTypeId\":$1,\"attendee\":{\"name\":\"Bench Attendee\",\"email\":\"attendee@bench.example.com\",\"timeZone\":\"UTC\"}}" \
    $wh_url/v2/bookings
}
# N PREFIX: N copies of the newest BOOKING_CREATED event, each with its own booking uid, queued
# while the server is down. Compact, as the server writes its events: the consumer sends the stored
# text as the body, and the receiver finds the uid in compact text only (JSON_SET's own output has
# a space after each colon, and a receiver that reads no uid waits out its SECONDS).
wh_queue() {
  sql "INSERT INTO outbox_events (topic, type, payload, created_at)
       SELECT 'bookings', 'BOOKING_CREATED', JSON_COMPACT(JSON_SET(e.payload, '\$.payload.uid', CONCAT('$2-', seq))), UTC_TIMESTAMP(3)
       FROM seq_1_to_$1 JOIN (SELECT payload FROM outbox_events WHERE topic = 'bookings' ORDER BY id DESC LIMIT 1) e"
  # INSERT … SELECT reserves ids in growing blocks and leaves the counter past a gap; the next event
  # would sit behind that hole for the outbox's settle window (2 s). Back to MAX(id) + 1.
  sql "ALTER TABLE outbox_events AUTO_INCREMENT = 1"
}
# TARGET NAME: starts the server and times it from its first /healthz answer until TARGET attempts
# have succeeded (at most 180 s); sets d_load, d_from_ready, d_from_launch, d_cpu_ms, d_ok. With
# BENCH_PERF=1 the server and MariaDB are profiled for 10 s meanwhile into var/bench-NAME.perf and
# var/bench-NAME-mariadb.perf; with BENCH_SLOWLOG=1 MariaDB logs every statement of the server's
# connections meanwhile into var/bench-NAME-slow.log (long_query_time 0: slows the run down).
wh_timed() {
  d_load=$(cut -d' ' -f1-3 /proc/loadavg)
  local launched ready done_at cpu0 cpu1 srv0 srv1 perf_pid=''
  launched=$(date +%s%N)
  if [ "${BENCH_SLOWLOG:-0}" = 1 ]; then  # every statement of the server's connections (opened at start)
    sql "SET GLOBAL slow_query_log_file = '$PWD/var/bench-$2-slow.log', GLOBAL long_query_time = 0,
         GLOBAL log_slow_verbosity = 'query_plan,innodb', GLOBAL slow_query_log = 1"
  fi
  wh_start
  ready=$(date +%s%N)
  srv0=$(cpu_ms $wh_pid)
  cpu0=$(( srv0 + $(cpu_ms $db_pid) ))
  if [ "${BENCH_PERF:-0}" = 1 ]; then
    perf record -e cpu-clock -g -o "var/bench-$2.perf" -p $wh_pid -- sleep 10 >/dev/null 2>&1 &
    perf_pid=$!
    perf record -e cpu-clock -g -o "var/bench-$2-mariadb.perf" -p $db_pid -- sleep 10 >/dev/null 2>&1 &
    perf_pid="$perf_pid $!"
  fi
  d_ok=0
  for _ in $(seq 1 1800); do
    d_ok=$(wh_succeeded)
    [ "$d_ok" -ge "$1" ] && break
    sleep 0.1
  done
  done_at=$(date +%s%N)
  srv1=$(cpu_ms $wh_pid)
  cpu1=$(( srv1 + $(cpu_ms $db_pid) ))
  if [ "${BENCH_SLOWLOG:-0}" = 1 ]; then sql "SET GLOBAL slow_query_log = 0, GLOBAL long_query_time = 10"; fi
  [ -n "$perf_pid" ] && { wait $perf_pid || true; }
  d_from_ready=$(python3 -c "print(($done_at - $ready) / 1e9)")
  d_from_launch=$(python3 -c "print(($done_at - $launched) / 1e9)")
  d_cpu_ms=$((cpu1 - cpu0))
  d_server_ms=$((srv1 - srv0))
}
first_start=$(date -u -d "+1 day" +%F)T00:00:00Z
wh_start

# Drain: N events queued while the server is down (copies of one real BOOKING_CREATED event of the
# host, each with its own booking uid), then timed from the restarted server's first /healthz
# answer until N deliveries have succeeded.
if want webhooks_drain; then
drain_n=${BENCH_WEBHOOK_EVENTS:-50000}
read -r d_key d_et <<< "$(wh_host drain)"
wh_booking "$d_et"
recv_port=$(free_port)
d_hook=$(wh_webhook "$d_key" "$recv_port")  # after the booking: its own event has no delivery
wh_stop
wh_queue "$drain_n" drain
$wh_tool drain "$recv_port" "$drain_n" 200 > var/bench-webhooks-drain.json &
recv_pids=$!
wait_receiver "$recv_port"
wh_timed "$drain_n" webhooks-drain
wait $recv_pids || true
recv_pids=''
not_succeeded=$(sql "SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = $d_hook AND status <> 'succeeded'")
N=$drain_n OK=$d_ok BAD=$not_succeeded FROM_READY=$d_from_ready FROM_LAUNCH=$d_from_launch CPU_MS=$d_cpu_ms SERVER_MS=$d_server_ms \
  LOAD="$d_load" SETTINGS="$wh_settings" python3 -c '
import json, os
e = os.environ; r = json.load(open("var/bench-webhooks-drain.json"))
ok, n = int(e["OK"]), int(e["N"])
from_ready = float(e["FROM_READY"]); from_launch = float(e["FROM_LAUNCH"])
failed = int(e["BAD"]) + max(0, n - ok)
print("| webhooks_drain: %d queued BOOKING_CREATED events, one webhook, one local receiver (bench/webhook_bench; %s; load %s at start): %d succeeded %.2f s after the first /healthz answer (%.2f s after launch), server+MariaDB CPU %.0f µs/delivery (server %.0f), receiver got %d (%d duplicates) | %.0f deliveries/s | – | – | %d failed |"
      % (n, e["SETTINGS"], e["LOAD"], ok, from_ready, from_launch, int(e["CPU_MS"]) * 1000.0 / max(1, ok), int(e["SERVER_MS"]) * 1000.0 / max(1, ok), r["received"], r["duplicates"], ok / from_ready, failed))' | tee -a "$results"
fi

# Fan-out: BENCH_WEBHOOK_FANOUT_EVENTS events (default 500) of one host queued while the server is
# down, each going to the host's 100 webhooks (the per-user limit) spread over 10 local receivers
# (10 destinations, 10 webhooks each); timed like the drain until every delivery has succeeded.
if want webhooks_fanout; then
fan_n=${BENCH_WEBHOOK_FANOUT_EVENTS:-500}
read -r f_key f_et <<< "$(wh_host fanout)"
wh_booking "$f_et"
f_ports=()
for r in $(seq 1 10); do f_ports+=("$(free_port)"); done
f_hooks=''
for w in $(seq 0 99); do
  f_hooks=$f_hooks${f_hooks:+,}$(wh_webhook "$f_key" "${f_ports[$((w % 10))]}" "hook/$w")
done
wh_stop
wh_queue "$fan_n" fanout
recv_pids=''
for r in $(seq 0 9); do
  $wh_tool drain "${f_ports[$r]}" 100000000 300 > "var/bench-webhooks-fanout-$r.json" &
  recv_pids="$recv_pids $!"
done
for r in $(seq 0 9); do wait_receiver "${f_ports[$r]}"; done
fan_total=$((fan_n * 100))
wh_timed "$fan_total" webhooks-fanout
# Answered everything counted: the receivers stop (they print what they got on SIGTERM).
kill -TERM $recv_pids 2>/dev/null || true
wait $recv_pids 2>/dev/null || true
recv_pids=''
not_succeeded=$(sql "SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id IN ($f_hooks) AND status <> 'succeeded'")
N=$fan_n TOTAL=$fan_total OK=$d_ok BAD=$not_succeeded FROM_READY=$d_from_ready FROM_LAUNCH=$d_from_launch CPU_MS=$d_cpu_ms SERVER_MS=$d_server_ms \
  LOAD="$d_load" SETTINGS="$wh_settings" python3 -c '
import json, os
e = os.environ
got = [json.load(open("var/bench-webhooks-fanout-%d.json" % r)) for r in range(10)]
ok, total = int(e["OK"]), int(e["TOTAL"])
from_ready = float(e["FROM_READY"])
failed = int(e["BAD"]) + max(0, total - ok)
print("| webhooks_fanout: %d queued BOOKING_CREATED events of one host, each to its 100 webhooks on 10 local receivers (10 destinations; bench/webhook_bench; %s; load %s at start): %d succeeded %.2f s after the first /healthz answer (%.2f s after launch), server+MariaDB CPU %.0f µs/delivery (server %.0f), receivers got %d | %.0f deliveries/s | – | – | %d failed |"
      % (int(e["N"]), e["SETTINGS"], e["LOAD"], ok, from_ready, float(e["FROM_LAUNCH"]), int(e["CPU_MS"]) * 1000.0 / max(1, ok), int(e["SERVER_MS"]) * 1000.0 / max(1, ok), sum(g["received"] for g in got), ok / from_ready, failed))' | tee -a "$results"
fi

# Latency: public bookings at RATE a second for BENCH_DURATION over HOSTS hosts, each with a
# BOOKING_CREATED webhook to the receiver, from BENCH_WEBHOOK_POSTERS connections (default 64,
# open loop); the latency is the receiver's arrival time minus the event's createdAt (same clock).
# webhooks_latency at BENCH_WEBHOOK_RATE (default 200) over BENCH_WEBHOOK_HOSTS hosts (default 4),
# webhooks_latency_500 at 500 a second over 16 hosts (a host's bookings are written one at a time;
# target: p99 < 25 ms).
wh_latency() { # RATE TAG NAME HOSTS
local rate=$1 hosts=$4 recv_port event_types='' hooks='' l_key l_et load lat not_succeeded
recv_port=$(free_port)
for h in $(seq 1 "$hosts"); do
  read -r l_key l_et <<< "$(wh_host "latency$2-$h")"
  event_types=$event_types${event_types:+,}$l_et
  hooks=$hooks${hooks:+,}$(wh_webhook "$l_key" "$recv_port")
done
load=$(cut -d' ' -f1-3 /proc/loadavg)
lat=$(WEBHOOK_BENCH_POSTERS=${BENCH_WEBHOOK_POSTERS:-64} $wh_tool latency "$recv_port" $wh_url/v2/bookings "$event_types" "$rate" "${duration%s}" "$first_start" 5 || true)
echo "$lat" > "var/bench-$3.json"  # with the slowest events (when written, how late)
# The receiver has had every delivery; the server records the last attempts within its record
# delay: a delivery still not recorded as succeeded after 10 s counts as failed.
for _ in $(seq 1 100); do
  not_succeeded=$(sql "SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id IN ($hooks) AND status <> 'succeeded'")
  [ "$not_succeeded" -eq 0 ] && break
  sleep 0.1
done
echo "$lat" | BAD=$not_succeeded HOSTS=$hosts POSTERS=${BENCH_WEBHOOK_POSTERS:-64} LOAD="$load" SETTINGS="$wh_settings" NAME="$3" python3 -c '
import json, os, sys
e = os.environ; r = json.loads(sys.stdin.read())
failed = r["post_failed"] + r["missing"] + int(e["BAD"])
print("| %s: POST /v2/bookings at %g/s for %d s over %s hosts from %s connections, a BOOKING_CREATED webhook each, one local receiver (bench/webhook_bench; %s; load %s at start): %d created (post p99 %.1f ms, %d late), %d delivered, %d duplicates; p50/p99 = arrival − event createdAt (max %.1f ms) | %.0f bookings/s | %.2fms | %.2fms | %d failed |"
      % (e["NAME"], r["rate"], r["seconds"], e["HOSTS"], e["POSTERS"], e["SETTINGS"], e["LOAD"], r["created"], r["post_p99_ms"], r["posts_late"], r["distinct"], r["duplicates"], r["max_ms"], r["created_per_second"], r["p50_ms"], r["p99_ms"], failed))' | tee -a "$results"
}
if want webhooks_latency || want webhooks_latency_500; then
  [ -n "$wh_pid" ] || wh_start
  if want webhooks_latency; then wh_latency "${BENCH_WEBHOOK_RATE:-200}" a webhooks_latency "${BENCH_WEBHOOK_HOSTS:-4}"; fi
  if want webhooks_latency_500; then wh_latency 500 b webhooks_latency_500 "${BENCH_WEBHOOK_HOSTS:-16}"; fi
fi
[ -z "$wh_pid" ] || wh_stop
fi

# Event lookup: GET /v2/calendars/google/event/{eventUid} of one user with a warm Google credential,
# on a server of its own (ports the kernel picked, its own database) whose calendar plugin talks to
# the tests' fake Google on loopback, hosted by bench/event_lookup_bench; then the same event read
# straight from the fake by the same client, so the difference is what the server adds (target:
# < 5 ms at p99). BENCH_LOOKUP_CONNECTIONS connections (default 4: server.outbound_per_user's
# default, as many lookups as one user may have running at once).
if want calendar_lookup; then
lk_conns=${BENCH_LOOKUP_CONNECTIONS:-4}
lk_cfg=var/bench-calendar.yaml
lk_port=$(free_port)
lk_app_port=$(free_port)
lk_email=lookup@bench.example.com
sed -e "s/18090/$lk_port/g" -e "s/18091/$lk_app_port/g" -e "s/name: rendezvous_bench\$/name: rendezvous_bench_calendar/" \
  $base_cfg > $lk_cfg
lk_pid=''
coproc LOOKUP { $build/bench/event_lookup_bench var/bench-calendar-plugin.yaml "http://127.0.0.1:$lk_port" \
  "http://127.0.0.1:$lk_app_port" "$lk_email" bench-password "${duration%s}" "$lk_conns" 2>var/bench-calendar-lookup.log; }
lk_bench_pid=$LOOKUP_PID
trap 'kill $pid $lk_pid $lk_bench_pid 2>/dev/null; wait $pid $lk_pid $lk_bench_pid 2>/dev/null || true' EXIT
read -r -t 30 lk_google <&"${LOOKUP[0]}"  # {"google": URL}: the fake is up, its plugin config written
sed 's/^/  /' var/bench-calendar-plugin.yaml >> $lk_cfg  # under bench.yaml's plugins:
mariadb --no-defaults -S var/db/mysqld.sock -uroot -e "DROP DATABASE IF EXISTS rendezvous_bench_calendar; CREATE DATABASE rendezvous_bench_calendar"
$bin migrate --config $lk_cfg >/dev/null
lk_uid=$($bin admin user create --config $lk_cfg --email $lk_email --name "Lookup Host" --password bench-password \
  | sed -E 's/.*"id":([0-9]+).*/\1/')
lk_key=$($bin admin api-key create --config $lk_cfg --user-id "$lk_uid" | sed -E 's/.*"key":"([^"]+)".*/\1/')
$bin serve --config $lk_cfg 2>var/bench-calendar-server.log &
lk_pid=$!
for _ in $(seq 1 400); do curl -fs "http://127.0.0.1:$lk_port/healthz" >/dev/null && break; sleep 0.025; done
echo "$lk_key" >&"${LOOKUP[1]}"
lk_server=''
lk_fake=''
read -r -t $((2 * ${duration%s} + 60)) lk_server <&"${LOOKUP[0]}" || true
read -r -t $((${duration%s} + 30)) lk_fake <&"${LOOKUP[0]}" || true
wait $lk_bench_pid || true
kill $lk_pid; wait $lk_pid 2>/dev/null || true
lk_pid=''
if [ -z "$lk_server" ] || [ -z "$lk_fake" ]; then
  echo "calendar_lookup: bench/event_lookup_bench gave no result ($lk_google); see var/bench-calendar-lookup.log" >&2
  cat var/bench-calendar-lookup.log >&2
  exit 1
fi
SERVER="$lk_server" FAKE="$lk_fake" python3 -c '
import json, os
s = json.loads(os.environ["SERVER"]); f = json.loads(os.environ["FAKE"])
print("| GET /v2/calendars/google/event/{eventUid} (warm Google credential, the fake Google on loopback, %d connections, bench/event_lookup_bench): adds %.2f ms at p50 and %.2f ms at p99 to the fake'"'"'s own answer (target < 5 ms at p99) | %.0f | %.2fms | %.2fms | %d failed |"
      % (s["connections"], s["p50_ms"] - f["p50_ms"], s["p99_ms"] - f["p99_ms"], s["per_second"], s["p50_ms"], s["p99_ms"], s["failed"]))
print("| the same event straight from the fake Google (its events.get, same client, %d connections) | %.0f | %.2fms | %.2fms | %d failed |"
      % (f["connections"], f["per_second"], f["p50_ms"], f["p99_ms"], f["failed"]))' | tee -a "$results"
fi

# Calendar isolation (bench/calendar_bench.py), each on a server of its own (ports the kernel picked,
# 8 API workers as by default, ICS feeds on loopback allowed, its own database):
# me_under_slots: GET /v2/me of one user alone and while 16 connections ask for the slots of a host
# whose ICS feed hangs (target: p99 within 2x of alone); ics_memory: 2 users x 50 feeds of 1.9 MB,
# 8 concurrent busy-times over 90 days (BENCH_ICS_READERS=24: 12 busy-times and 12 slots readers):
# the server's RSS before, at its peak and after (targets: peak < 600 MB, after within 100 MB of
# before).
if want me_under_slots || want ics_memory; then
ci_cfg=var/bench-calendar-isolation.yaml
ci_port=$(free_port)
sed -e "s/18090/$ci_port/g" -e "s/18091/$(free_port)/g" -e "s/worker_threads: 16/worker_threads: 8/" \
  -e "s/name: rendezvous_bench\$/name: rendezvous_bench_isolation/" $base_cfg > $ci_cfg
printf '  calendar: { ics_allow_private_networks: true }\n' >> $ci_cfg  # under bench.yaml's plugins:
ci_url=http://127.0.0.1:$ci_port
ci_pid=''
trap 'kill $pid $ci_pid 2>/dev/null; wait $pid $ci_pid 2>/dev/null || true' EXIT
ci_user() { # EMAIL: prints an API key of a new user
  local u
  u=$($bin admin user create --config $ci_cfg --email "$1" --name "Bench $1" --password bench-password \
    | sed -E 's/.*"id":([0-9]+).*/\1/')
  $bin admin api-key create --config $ci_cfg --user-id "$u" | sed -E 's/.*"key":"([^"]+)".*/\1/'
}
ci_server() { # SCENARIO ARGS...: a fresh database and server, then bench/calendar_bench.py against it
  mariadb --no-defaults -S var/db/mysqld.sock -uroot -e "DROP DATABASE IF EXISTS rendezvous_bench_isolation; CREATE DATABASE rendezvous_bench_isolation"
  $bin migrate --config $ci_cfg >/dev/null
  local k1 k2
  k1=$(ci_user one@bench.example.com)
  k2=$(ci_user two@bench.example.com)
  $bin serve --config $ci_cfg 2>>var/bench-calendar-isolation-server.log &
  ci_pid=$!
  for _ in $(seq 1 400); do curl -fs $ci_url/healthz >/dev/null && break; sleep 0.025; done
  if [ "$1" = me_under_slots ]; then
    python3 bench/calendar_bench.py me_under_slots $ci_url "$k1" "$k2" "${duration%s}" || echo "calendar_bench.py $1 failed" >&2
  else
    python3 bench/calendar_bench.py ics_memory $ci_url $ci_pid "$k1" "$k2" "${BENCH_ICS_READERS:-8}" || echo "calendar_bench.py $1 failed" >&2
  fi
  kill $ci_pid; wait $ci_pid 2>/dev/null || true
  ci_pid=''
}
if want me_under_slots; then ci_server me_under_slots | tee -a "$results"; fi
if want ics_memory; then ci_server ics_memory | tee -a "$results"; fi
fi

# The cluster: bookings/s and deliveries/s on a three-node Galera cluster (single writer through
# HAProxy; three writers) as ratios of a single-node instance in the same run, retries per 1,000
# requests, and the writer node's death through HAProxy (bench/cluster.sh says how).
if want cluster; then
bench/cluster.sh "$build" | tee -a "$results"
fi

# The webhook sender's HTTP client in process (no server): the sending thread's CPU per request of
# net::HttpMulti (this build's), of libcurl's multi interface driven directly, and of a minimal
# HTTP/1.1 client, each 100,000 POSTs of 1 KB on 128 kept-alive connections to one receiver
# (bench/webhook_bench on its own epoll loop). BENCH_TOOLS names the receiver's build, as above.
if want http_client; then
hc_port=$(free_port)
${BENCH_TOOLS:-$build/bench}/webhook_bench drain "$hc_port" 1000000000 300 >/dev/null &
hc_receiver=$!
for _ in $(seq 1 100); do (echo >/dev/tcp/127.0.0.1/"$hc_port") 2>/dev/null && break; sleep 0.1; done
for mode in multi curl raw; do
  $build/bench/http_client_bench $mode "$hc_port" 100000 128 | python3 -c 'import json,sys; r=json.load(sys.stdin); print("| webhook sender HTTP client, %s (bench/http_client_bench: 100,000 POSTs of 1 KB, 128 kept-alive connections, one receiver; sending thread CPU %.1f µs/request) | %.0f requests/s | – | – | %d failed |" % ({"multi": "net::HttpMulti", "curl": "libcurl multi, direct", "raw": "minimal client"}[r["client"]], r["cpu_us_per_request"], r["per_second"], r["failed"]))' | tee -a "$results"
done
kill $hc_receiver 2>/dev/null; wait $hc_receiver 2>/dev/null || true
fi

# One blocking request at a time on one thread (ping, Google, ICS feeds, SMS): net::Perform() on
# the thread's own HttpMulti against the libcurl easy client it was before (bench/http_client_bench
# curl_easy), five alternating pairs of 100,000 POSTs of 1 KB to one receiver, the former first.
if want http_perform; then
hp_port=$(free_port)
${BENCH_TOOLS:-$build/bench}/webhook_bench drain "$hp_port" 1000000000 300 >/dev/null &
hp_receiver=$!
for _ in $(seq 1 100); do (echo >/dev/tcp/127.0.0.1/"$hp_port") 2>/dev/null && break; sleep 0.1; done
for pair in 1 2 3 4 5; do
  for mode in curl_easy perform; do
    $build/bench/http_client_bench $mode "$hp_port" 100000 1 | python3 -c 'import json,sys; p=sys.argv[1]; r=json.load(sys.stdin); print("| blocking request, %s, pair %s (bench/http_client_bench: 100,000 POSTs of 1 KB one after another on one thread; thread CPU %.1f µs/request) | %.0f requests/s | – | – | %d failed |" % ({"perform": "net::Perform (epoll client)", "curl_easy": "former libcurl easy Perform"}[r["client"]], p, r["cpu_us_per_request"], r["per_second"], r["failed"]))' "$pair" | tee -a "$results"
  done
done
kill $hp_receiver 2>/dev/null; wait $hp_receiver 2>/dev/null || true
fi

# Webhook Lua hooks in process (no server): the shipped filter and Slack render per delivery, one
# thread; p50/p99 are per delivery, wall clock, the thread's CPU time beside them (target < 20 µs).
if want lua; then
lua=$($build/bench/lua_hooks_bench scripts/webhooks 50000)
echo "$lua" | python3 -c 'import json,sys; r=json.load(sys.stdin); print("| webhook Lua hooks: filter + Slack render per delivery (shipped scripts, one thread, bench/lua_hooks_bench; wall mean %.1f µs; thread CPU mean %.1f, p50 %.1f, p99 %.1f µs) | %.0f deliveries/s | %.1fµs | %.1fµs | - |" % (r["mean_us"], r["cpu_mean_us"], r["cpu_p50_us"], r["cpu_p99_us"], r["per_second"], r["p50_us"], r["p99_us"]))' | tee -a "$results"
fi

if [ -s var/bench-ratio.txt ]; then
  { echo; cat var/bench-ratio.txt; } | tee -a "$results"
  rm -f var/bench-ratio.txt
fi
