#!/usr/bin/env bash
# Introspection (RFC 7662) of a cached access token, two builds of Rendezvous against node
# oidc-provider 9.13.3 (bench/oidc_provider_server.mjs, in memory) in one run, in alternating
# rounds (odd rounds: build, reference build, oidc-provider; even rounds the other way round). The
# two builds serve the same database (private MariaDB of `make db`, var/db) from two servers
# started side by side; each is measured alone. Requests as the `oidc_provider` scenario of
# bench/run.sh makes them (wrk, 32 connections, bench/post_form.lua; a managed user's access token
# of a confidential client, introspected by that client with its secret in the form). CPU per
# request: utime + stime from /proc of the measured server and MariaDB (ours), of the node process
# (its), around each run.
#   bench/introspection_pairs.sh BUILD_DIR [REFERENCE_BUILD_DIR]
#   BENCH_PAIRS=4 BENCH_DURATION=10s; BENCH_RESULTS names the file the table is appended to
#   (default: printed only).
# Without a reference build only BUILD_DIR and oidc-provider alternate.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1
ref=${2:-}
pairs=${BENCH_PAIRS:-4}
duration=${BENCH_DURATION:-10s}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{printf "%d", ($14 + $15) * 1000 / hz}' "/proc/$1/stat"; }
mkdir -p var
tools/mariadb.sh start var/db >/dev/null
db_pid=$(cat var/db/mysqld.pid)
if [ -z "${RENDEZVOUS_ENCRYPTION_KEY:-}" ]; then
  RENDEZVOUS_ENCRYPTION_KEY=$(cat var/encryption.key 2>/dev/null || openssl rand -base64 32)
  export RENDEZVOUS_ENCRYPTION_KEY
fi
[ -d bench/node_modules/oidc-provider ] ||
  npm install --prefix bench --no-save --no-audit --no-fund oidc-provider@9.13.3 >var/bench-npm.log 2>&1

# A config of bench/bench.yaml's with its own ports and database.
config() { # file
  sed -e "s/18090/$(free_port)/g" -e "s/18091/$(free_port)/g" -e "s/name: rendezvous_bench/name: rendezvous_introspect/" \
    bench/bench.yaml >"$1"
}
config var/introspect-new.yaml
mariadb --no-defaults -S var/db/mysqld.sock -uroot -e "DROP DATABASE IF EXISTS rendezvous_introspect; CREATE DATABASE rendezvous_introspect"
bin=$build/bin/rendezvous
$bin migrate --config var/introspect-new.yaml >/dev/null
uid=$($bin admin user create --config var/introspect-new.yaml --email bench@example.com --name Bench --password bench-password | sed -E 's/.*"id":([0-9]+).*/\1/')
client=$($bin admin oauth-client create --config var/introspect-new.yaml --owner-id "$uid" --name "Bench client" \
  --redirect-uri https://bench.example.com/cb --scope PROFILE_READ)
client_id=$(echo "$client" | sed -E 's/.*"client_id":"([^"]+)".*/\1/')
client_secret=$(echo "$client" | sed -E 's/.*"client_secret":"([^"]+)".*/\1/')
$bin admin oauth-client review --config var/introspect-new.yaml "$client_id" --accept >/dev/null
access=$($bin admin managed-user create --config var/introspect-new.yaml --client-id "$client_id" --email op-me@bench.example.com --name O \
  | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r.get("access_token") or r["accessToken"])')
mariadb --no-defaults -S var/db/mysqld.sock -uroot rendezvous_introspect -e "UPDATE oauth_grants g JOIN oauth_access_tokens a
  ON a.grant_id = g.id SET g.kind = 'oauth' WHERE a.token_hash = SHA2('$access', 256)"

pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null || true' EXIT
serve() { # build config -> sets served_pid, served_url
  "$1/bin/rendezvous" serve --config "$2" 2>"${2%.yaml}.log" &
  served_pid=$!
  pids+=("$served_pid")
  served_url=http://$(sed -nE 's/.*api: \{ listen: "([^"]+)".*/\1/p' "$2")
  for _ in $(seq 1 100); do curl -fs "$served_url/healthz" >/dev/null && return; sleep 0.1; done
  echo "server of $1 did not start: ${2%.yaml}.log" >&2
  exit 1
}
serve "$build" var/introspect-new.yaml
new_pid=$served_pid new_url=$served_url
sides="new"
if [ -n "$ref" ]; then
  config var/introspect-ref.yaml
  serve "$ref" var/introspect-ref.yaml
  ref_pid=$served_pid ref_url=$served_url
  sides="new ref"
fi
op_port=$(free_port)
op_secret=$(openssl rand -hex 24)
NODE_ENV=production node bench/oidc_provider_server.mjs "$op_port" "$op_secret" 32 var/introspect-op-tokens.json >var/introspect-op.log 2>&1 &
op_pid=$!
pids+=("$op_pid")
for _ in $(seq 1 300); do grep -q '^listening' var/introspect-op.log && break; sleep 0.1; done
grep -q '^listening' var/introspect-op.log || { echo "oidc-provider did not start: var/introspect-op.log" >&2; exit 1; }
op_access=$(python3 -c 'import json; print(json.load(open("var/introspect-op-tokens.json"))["access"][0])')
sides="$sides op"

measure() { # side round -> "side round rate p99_ms non2xx cpu_us"
  local side=$1 round=$2 url form p c0 c1 out t=0
  case $side in
    new) url=$new_url/v2/auth/oauth2/introspect; p="$new_pid $db_pid" ;;
    ref) url=$ref_url/v2/auth/oauth2/introspect; p="$ref_pid $db_pid" ;;
    op) url=http://127.0.0.1:$op_port/token/introspection; p=$op_pid ;;
  esac
  form="token=$access&client_id=$client_id&client_secret=$client_secret"
  [ "$side" = op ] && form="token=$op_access&client_id=bench&client_secret=$op_secret"
  # The answer must be an active token, or the run measures a refusal.
  curl -fs -X POST -d "$form" "$url" | grep -q '"active":true' || { echo "$side: the token is not active" >&2; exit 1; }
  cpu() { local t=0 x; for x in $p; do t=$((t + $(cpu_ms "$x"))); done; echo $t; }
  c0=$(cpu)
  out=$(BENCH_FORM=$form wrk -t2 -c32 -d"$duration" --latency -s bench/post_form.lua "$url")
  c1=$(cpu)
  echo "$out" | python3 -c '
import re, sys
out = sys.stdin.read()
side, rnd, c0, c1, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
rate = float(re.search(r"Requests/sec:\s+([0-9.]+)", out).group(1))
v, unit = re.search(r"^\s*99%\s+([0-9.]+)(us|ms|s)\b", out, re.M).groups()
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
print(side, rnd, rate, round(float(v) * {"us": 0.001, "ms": 1, "s": 1000}[unit], 2),
      non2xx.group(1) if non2xx else 0, round((c1 - c0) * 1000.0 / max(1.0, rate * secs), 1))' "$side" "$round" "$c0" "$c1" "${duration%s}"
}
runs=var/introspect-runs.txt
: >$runs
for round in $(seq 1 "$pairs"); do
  order=$sides
  [ $((round % 2)) = 0 ] && order=$(echo "$sides" | tr ' ' '\n' | tac | tr '\n' ' ')
  for side in $order; do measure "$side" "$round" | tee -a $runs >&2; done
done
python3 - $runs "$pairs" "$(git rev-parse --short HEAD)" "$build" "${ref:-}" <<'PY' | tee -a "${BENCH_RESULTS:-/dev/null}"
import statistics, sys
runs = [l.split() for l in open(sys.argv[1]) if l.strip()]
med = lambda side, col: statistics.median(float(r[col]) for r in runs if r[0] == side)
names = {"new": "this build (%s, %s)" % (sys.argv[4], sys.argv[3]), "ref": "reference build (%s)" % sys.argv[5],
         "op": "node oidc-provider 9.13.3"}
sides = [s for s in ("new", "ref", "op") if any(r[0] == s for r in runs)]
print()
print("| introspection, 32 connections, medians of %s rounds | rate | p99 | CPU a request (server + MariaDB; node) | CPU ÷ oidc-provider's | non-2xx |" % sys.argv[2])
print("|---|---|---|---|---|---|")
for s in sides:
    print("| %s | %.0f/s | %.1f ms | %.0f µs | %.2f× | %d |" % (names[s], med(s, 2), med(s, 3), med(s, 5),
          med(s, 5) / med("op", 5), sum(int(r[4]) for r in runs if r[0] == s)))
print()
print("Every run (side round rate p99_ms non2xx cpu_µs_a_request):")
print()
for r in runs:
    print("    " + " ".join(r))
PY
