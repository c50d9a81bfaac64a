#!/usr/bin/env bash
# GET /v2/me with each credential a platform API's users send, against the API key as the
# yardstick, in the same run, alternating: an API key, an OAuth access token as Bearer, and a
# DPoP-bound one with a proof per request signed before the clock starts (bench/dpop_bench, the
# same client program for all three). Prints one table row per run and the ratios of each pair:
# the server's and MariaDB's CPU per answered request (from /proc) and the rate.
#   bench/me_tokens.sh [BUILD_DIR] [PAIRS]        (BENCH_DURATION seconds each, default 10;
#                                                  BENCH_DPOP_CONNECTIONS connections, default 8;
#                                                  BENCH_CLIENT: the dpop_bench to use, default
#                                                  BUILD_DIR's: set it to compare another build's server)
# Needs the MariaDB `make run` starts (var/db); uses the database rendezvous_bench.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
pairs=${2:-4}
bin=$build/bin/rendezvous
client_bin=${BENCH_CLIENT:-$build/bench/dpop_bench}
seconds=${BENCH_DURATION:-10}
conns=${BENCH_DPOP_CONNECTIONS:-8}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
mkdir -p var
api_port=$(free_port)
api=http://127.0.0.1:$api_port
cfg=var/bench-me.yaml
sed -e "s/18090/$api_port/g" -e "s/18091/$(free_port)/g" bench/bench.yaml > $cfg
if [ -z "${RENDEZVOUS_ENCRYPTION_KEY:-}" ]; then
  RENDEZVOUS_ENCRYPTION_KEY=$(cat var/encryption.key 2>/dev/null || openssl rand -base64 32)
  export RENDEZVOUS_ENCRYPTION_KEY
fi
mariadb --no-defaults -S var/db/mysqld.sock -uroot -e "DROP DATABASE IF EXISTS rendezvous_bench; CREATE DATABASE rendezvous_bench"
$bin migrate --config $cfg >/dev/null
uid=$($bin admin user create --config $cfg --email bench@example.com --name Bench --password bench-password | sed -E 's/.*"id":([0-9]+).*/\1/')
BENCH_API_KEY=$($bin admin api-key create --config $cfg --user-id "$uid" | sed -E 's/.*"key":"([^"]+)".*/\1/')
export BENCH_API_KEY
client=$($bin admin oauth-client create --config $cfg --owner-id "$uid" --name "Bench client" \
  --redirect-uri https://bench.example.com/cb --scope PROFILE_READ)
client_id=$(echo "$client" | sed -E 's/.*"client_id":"([^"]+)".*/\1/')
client_secret=$(echo "$client" | sed -E 's/.*"client_secret":"([^"]+)".*/\1/')
$bin admin oauth-client review --config $cfg "$client_id" --accept >/dev/null
$bin serve --config $cfg 2>var/bench-me-server.log &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -fs $api/healthz >/dev/null && break; sleep 0.1; done
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{printf "%d", ($14 + $15) * 1000 / hz}' "/proc/$1/stat"; }
db_pid=$(cat var/db/mysqld.pid)

# One run: fresh grants for each connection (a DPoP run binds its own), then the measured seconds.
measure() { # mode
  local mode=$1 n=0
  : > var/bench-me-tokens.txt
  for i in $(seq 1 "$conns"); do
    n=$((n + 1))
    $bin admin managed-user create --config $cfg --client-id "$client_id" \
      --email "me-$mode-$RANDOM$RANDOM-$i@bench.example.com" --name "M $i" \
      | sed -E 's/.*"refresh_token":"([^"]+)".*/\1/' >> var/bench-me-tokens.txt
  done
  # /v2/me takes third-party apps' tokens, not managed users': these grants stand for apps' grants.
  mariadb --no-defaults -S var/db/mysqld.sock -uroot rendezvous_bench \
    -e "UPDATE oauth_grants SET kind = 'oauth' WHERE kind = 'managed'"
  local srv0 db0 srv1 db1 out
  srv0=$(cpu_ms $pid); db0=$(cpu_ms $db_pid)
  out=$($client_bin me "$mode" $api "$client_id" "$client_secret" "$seconds" var/bench-me-tokens.txt)
  srv1=$(cpu_ms $pid); db1=$(cpu_ms $db_pid)
  echo "$out" | MODE=$mode SRV_MS=$((srv1 - srv0)) DB_MS=$((db1 - db0)) python3 -c 'import json,os,sys; r=json.load(sys.stdin); n=max(r["ok"],1); r["mode"]=os.environ["MODE"]; r["server_us"]=int(os.environ["SRV_MS"])*1000.0/n; r["db_us"]=int(os.environ["DB_MS"])*1000.0/n; r["cpu_us"]=r["server_us"]+r["db_us"]; print(json.dumps(r))'
}

echo "| pair | order | API key /s (CPU µs: server + MariaDB) | Bearer /s (µs) | DPoP signed ahead /s (µs) | Bearer ÷ API key CPU | DPoP ÷ Bearer rate | failed |"
echo "|---|---|---|---|---|---|---|---|"
for p in $(seq 1 "$pairs"); do
  if [ $((p % 2)) -eq 1 ]; then order="apikey bearer dpop-presigned"; else order="dpop-presigned bearer apikey"; fi
  rows=()
  for mode in $order; do rows+=("$(measure "$mode")"); done
  printf '%s\n' "${rows[@]}" | PAIR=$p ORDER="$order" python3 -c '
import json, os, sys
r = {x["mode"]: x for x in (json.loads(l) for l in sys.stdin)}
k, b, d = r["apikey"], r["bearer"], r["dpop-presigned"]
cell = lambda x: "%.0f (%.0f + %.0f)" % (x["per_second"], x["server_us"], x["db_us"])
print("| %s | %s | %s | %s | %s | %.2f | %.2f | %d |" % (os.environ["PAIR"], os.environ["ORDER"].replace(" ", ", "), cell(k), cell(b), cell(d),
      b["cpu_us"] / max(k["cpu_us"], 1e-9), d["per_second"] / max(b["per_second"], 1e-9), k["failed"] + b["failed"] + d["failed"]))'
done
rm -f var/bench-me-tokens.txt
