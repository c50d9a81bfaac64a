#!/usr/bin/env bash
# The `cluster` scenario of bench/run.sh: the same client load on three targets in one run, so the
# cluster's figures are ratios of the single-node figure measured minutes before on the same machine.
#   ref     one instance on the bench MariaDB (var/db, the single-node reference)
#   single  one instance through HAProxy (etc/haproxy/rendezvous.cfg, its EDIT values replaced) in
#           front of a three-node MariaDB Galera cluster (tools/galera-cluster.sh, a new one in
#           var/bench-cluster): the single-writer topology
#   multi   three instances, one per node, the load spread over the three: several writers
# For each: webhook deliveries/s (BENCH_CLUSTER_EVENTS queued BOOKING_CREATED events, default
# 5000, drained by the instances just started: as the webhooks_drain scenario), then bookings/s
# (bench/create_bench, 32 connections racing for 50 overlapping starts a weekday, BENCH_DURATION)
# with the transactions retried per 1,000 booking requests (db_transaction_retries_total of every
# instance, before and after). Last, through HAProxy: a request loop (one booking at a time, 50 ms
# apart) while the writer node is killed (kill -9): the seconds between the last 201 before the
# kill and the first 201 after (target < 10 s). Every wait is bounded; loopback only; ports the
# kernel picked. Needs haproxy, galera-4 and rsync; run as root (the nodes run as `mysql`).
#   bench/cluster.sh BUILD_DIR   (prints result rows; run.sh appends them to the results)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$build/bin/rendezvous
cfg=bench/bench.yaml
duration=${BENCH_DURATION:-10s}
secs=${duration%s}
events=${BENCH_CLUSTER_EVENTS:-5000}
conns=32
cdir=var/bench-cluster
haproxy=${HAPROXY:-/usr/sbin/haproxy}
gc=tools/galera-cluster.sh
tcp_user=rdv_bench
tcp_password=bench-cluster-password

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
[ -x "$haproxy" ] || { echo "cluster: $haproxy missing (apt-get install haproxy)" >&2; exit 1; }

pids=()
proxy_pid=''
cleanup() {
  for p in "${pids[@]}" $proxy_pid; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}" $proxy_pid; do wait "$p" 2>/dev/null || true; done
  $gc stop $cdir >/dev/null 2>&1 || true
}
trap cleanup EXIT

# A new cluster each run (a cluster left with a killed node would need its history sorted out).
$gc stop $cdir >/dev/null 2>&1 || true
rm -rf $cdir
formed_at=$(date +%s)
$gc start $cdir > var/bench-cluster-status.json
formed=$(( $(date +%s) - formed_at ))
node() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["nodes"][int(sys.argv[2]) - 1][sys.argv[3]])' var/bench-cluster-status.json "$1" "$2"; }
$gc sql $cdir 1 "CREATE USER IF NOT EXISTS 'haproxy_check'@'127.0.0.1';
  CREATE USER IF NOT EXISTS '$tcp_user'@'127.0.0.1' IDENTIFIED BY '$tcp_password';
  GRANT ALL ON *.* TO '$tcp_user'@'127.0.0.1'"

# HAProxy: the shipped file with its EDIT values replaced by loopback ports.
proxy_port=$(free_port)
sed -e "s/bind 127.0.0.1:3306 /bind 127.0.0.1:$proxy_port /" \
  -e "s/10.0.0.11:3306/127.0.0.1:$(node 1 port)/" -e "s/10.0.0.12:3306/127.0.0.1:$(node 2 port)/" \
  -e "s/10.0.0.13:3306/127.0.0.1:$(node 3 port)/" etc/haproxy/rendezvous.cfg > var/bench-haproxy.cfg
"$haproxy" -db -f var/bench-haproxy.cfg >var/bench-haproxy.log 2>&1 &
proxy_pid=$!
for _ in $(seq 1 200); do (exec 3<>"/dev/tcp/127.0.0.1/$proxy_port") 2>/dev/null && break; sleep 0.05; done

# CONFIG NAME DATABASE-LINES: an instance config of bench.yaml with ports the kernel picked, the
# database NAME and, instead of the bench MariaDB's socket and user, DATABASE-LINES.
instance_cfg() {
  local port; port=$(free_port)
  sed -e "s/18090/$port/g" -e "s/18091/$(free_port)/g" -e "s/name: rendezvous_bench\$/name: $2/" \
    -e '/^  socket: /d' -e '/^  user: /d' -e '/^  password: /d' $cfg \
    | DB_LINES="$3" awk '{print} /^database:/ {print ENVIRON["DB_LINES"]}' > "$1"
  printf '  webhooks: { allow_private_networks: true, workers: 32, workers_per_host: 32 }\n' >> "$1"
  echo "$port"
}
socket_db() { printf '  socket: "%s"\n  user: root\n  password: ""\n' "$1"; }
proxy_db() { printf '  host: 127.0.0.1\n  port: %s\n  user: %s\n  password: "%s"\n' "$proxy_port" "$tcp_user" "$tcp_password"; }

sql_on() { mariadb --no-defaults -S "$1" -uroot -N "${@:2}"; }
post() { # URL KEY JSON: prints the answer's data.id
  curl -fs -H "Authorization: Bearer $2" -H "Content-Type: application/json" -d "$3" "$1" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["id"])'
}
metric_sum() { # URL... : the sum of db_transaction_retries_total over the instances
  local u total=0 v
  for u in "$@"; do
    v=$(curl -fs "$u/metrics" | awk '/^db_transaction_retries_total/ {s += $2} END {printf "%d", s}')
    total=$((total + ${v:-0}))
  done
  echo $total
}
start_instances() { # CONFIG...: starts one serve per config, waits (bounded) for each /healthz
  local c port
  pids=()
  for c in "$@"; do
    $bin serve --config "$c" 2>>var/bench-cluster-server.log &
    pids+=($!)
  done
  for c in "$@"; do
    port=$(sed -nE 's/.*api: \{ listen: "127.0.0.1:([0-9]+)".*/\1/p' "$c")
    for _ in $(seq 1 600); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && continue 2; sleep 0.05; done
    echo "cluster: the instance of $c did not answer /healthz within 30 s" >&2; return 1
  done
}
stop_instances() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}

first_start=$(date -u -d "+1 day" +%F)T00:00:00Z
first_day=$(date -u -d "+2 days" +%F)

# NAME SOCKET CONFIG...: one target (SOCKET: a node or server holding the database, for the
# drain's inserts and counts; the first config migrates and sets up). Prints one JSON line.
measure() {
  local name=$1 sock=$2; shift 2
  local c1=$1 c db
  local urls=()
  db=$(sed -nE 's/^  name: (.*)$/\1/p' "$c1")
  for c in "$@"; do urls+=("http://127.0.0.1:$(sed -nE 's/.*api: \{ listen: "127.0.0.1:([0-9]+)".*/\1/p' "$c")"); done
  sql_on "$sock" -e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"
  $bin migrate --config "$c1" >/dev/null
  local uid key
  uid=$($bin admin user create --config "$c1" --email "bench-$name@example.com" --name Bench --password bench-password | sed -E 's/.*"id":([0-9]+).*/\1/')
  key=$($bin admin api-key create --config "$c1" --user-id "$uid" | sed -E 's/.*"key":"([^"]+)".*/\1/')
  start_instances "$@"
  local u=${urls[0]} schedule drain_et race_et hook recv_port
  schedule=$(post "$u/v2/schedules" "$key" '{"name":"All day","isDefault":true,"timeZone":"UTC","availability":[{"days":["Monday","Tuesday","Wednesday","Thursday","Friday","Saturday","Sunday"],"startTime":"00:00","endTime":"24:00"}]}')
  drain_et=$(post "$u/v2/event-types" "$key" "{\"title\":\"Drain\",\"slug\":\"drain\",\"lengthInMinutes\":5,\"scheduleId\":$schedule}")
  race_et=$(post "$u/v2/event-types" "$key" '{"title":"Race","slug":"race","lengthInMinutes":60,"slotInterval":5}')
  curl -fs -o /dev/null -H "Content-Type: application/json" \
    -d "{\"start\":\"$first_start\",\"eventTypeId\":$drain_et,\"attendee\":{\"name\":\"Bench Attendee\",\"email\":\"attendee@bench.example.com\",\"timeZone\":\"UTC\"}}" \
    "$u/v2/bookings"
  recv_port=$(free_port)
  hook=$(post "$u/v2/webhooks" "$key" "{\"active\":true,\"subscriberUrl\":\"http://127.0.0.1:$recv_port/hook\",\"triggers\":[\"BOOKING_CREATED\"]}")
  stop_instances
  # The drain: copies of the booking's event queued while every instance is down.
  sql_on "$sock" "$db" -e "INSERT INTO outbox_events (topic, type, payload, created_at)
     SELECT 'bookings', 'BOOKING_CREATED', JSON_SET(e.payload, '\$.payload.uid', CONCAT('drain-', seq)), UTC_TIMESTAMP(3)
     FROM seq_1_to_$events JOIN (SELECT payload FROM outbox_events WHERE topic = 'bookings' ORDER BY id DESC LIMIT 1) e;
     ALTER TABLE outbox_events AUTO_INCREMENT = 1"
  $build/bench/webhook_bench drain "$recv_port" "$events" 300 > "var/bench-cluster-drain-$name.json" &
  local recv_pid=$!
  for _ in $(seq 1 200); do curl -fs "http://127.0.0.1:$recv_port/" >/dev/null && break; sleep 0.025; done
  start_instances "$@"
  local ready done_at ok=0
  ready=$(date +%s%N)
  for _ in $(seq 1 3000); do  # at most 300 s
    ok=$(sql_on "$sock" "$db" -e "SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = $hook AND status = 'succeeded'")
    [ "$ok" -ge "$events" ] && break
    sleep 0.1
  done
  done_at=$(date +%s%N)
  kill $recv_pid 2>/dev/null || true; wait $recv_pid 2>/dev/null || true
  # No deliveries during the bookings below: the receiver is gone.
  curl -fs -o /dev/null -X DELETE -H "Authorization: Bearer $key" "$u/v2/webhooks/$hook"
  # The bookings: the same racing load as the create scenario, spread over the instances.
  local r0 r1 race urls_csv
  urls_csv=$(printf '%s/v2/bookings,' "${urls[@]}"); urls_csv=${urls_csv%,}
  r0=$(metric_sum "${urls[@]}")
  race=$($build/bench/create_bench "$urls_csv" "$race_et" "$secs" $conns "$first_day" 60 | tr '\n' ' ' || true)
  r1=$(metric_sum "${urls[@]}")
  local overlaps
  overlaps=$(sql_on "$sock" "$db" -e "SELECT COUNT(*) FROM bookings a JOIN bookings b ON a.host_id = b.host_id AND a.id < b.id
    WHERE a.status IN ('accepted', 'pending') AND b.status IN ('accepted', 'pending') AND a.start_at < b.end_at AND b.start_at < a.end_at")
  NAME=$name INSTANCES=$# OK=$ok READY=$ready DONE=$done_at RETRIES=$((r1 - r0)) RACE="$race" OVERLAPS=$overlaps \
    DRAIN_ET=$drain_et KEY=$key python3 -c '
import json, os
e = os.environ
c, r = [json.loads(x) for x in e["RACE"].split()]
print(json.dumps({"name": e["NAME"], "instances": int(e["INSTANCES"]), "delivered": int(e["OK"]),
  "drain_s": (int(e["DONE"]) - int(e["READY"])) / 1e9, "created": c["created"], "conflicts": c["conflicts"],
  "requests": r["ok"] + r["failed"], "failed": r["failed"], "per_second": r["per_second"], "p50_ms": r["p50_ms"],
  "p99_ms": r["p99_ms"], "retries": int(e["RETRIES"]), "overlaps": int(e["OVERLAPS"]),
  "drain_et": int(e["DRAIN_ET"]), "key": e["KEY"]}))'
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
ref_port=$(instance_cfg var/bench-cluster-ref.yaml rendezvous_bench_c_ref "$(socket_db var/db/mysqld.sock)")
measure ref var/db/mysqld.sock var/bench-cluster-ref.yaml > var/bench-cluster-ref.json
stop_instances
multi_cfgs=()
for n in 1 2 3; do
  instance_cfg "var/bench-cluster-multi$n.yaml" rendezvous_bench_c_multi "$(socket_db "$(node "$n" socket)")" >/dev/null
  multi_cfgs+=("var/bench-cluster-multi$n.yaml")
done
measure multi "$(node 1 socket)" "${multi_cfgs[@]}" > var/bench-cluster-multi.json
stop_instances
single_port=$(instance_cfg var/bench-cluster-single.yaml rendezvous_bench_c_single "$(proxy_db)")
measure single "$(node 1 socket)" var/bench-cluster-single.yaml > var/bench-cluster-single.json
ref=$(cat var/bench-cluster-ref.json); multi=$(cat var/bench-cluster-multi.json); single=$(cat var/bench-cluster-single.json)
# The writer's death through HAProxy: the instance of `single` is still running.
failover=$(SINGLE="$single" URL="http://127.0.0.1:$single_port" KILL="$gc kill $cdir 1" FIRST="$(date -u -d "+20 days" +%F)" python3 -c '
import datetime, json, os, subprocess, time, urllib.request, urllib.error
e = os.environ; s = json.loads(e["SINGLE"])
first = datetime.datetime.fromisoformat(e["FIRST"])
def book(i):
    start = (first + datetime.timedelta(minutes=5 * i)).strftime("%Y-%m-%dT%H:%M:%SZ")
    body = json.dumps({"start": start, "eventTypeId": s["drain_et"],
                       "attendee": {"name": "Failover", "email": "f%d@bench.example.com" % i, "timeZone": "UTC"}}).encode()
    req = urllib.request.Request(e["URL"] + "/v2/bookings", body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=20) as r: return r.status
    except urllib.error.HTTPError as x: return x.code
    except Exception: return 0
statuses = {}; last_ok = None; first_ok_after = None; killed = None
t0 = time.monotonic()
for i in range(2000):
    now = time.monotonic()
    if now - t0 > 90: break
    if killed is None and now - t0 > 2:
        killed = time.monotonic(); subprocess.run(e["KILL"], shell=True, check=True)
    st = book(i); t = time.monotonic()
    if killed is not None: statuses[st] = statuses.get(st, 0) + 1
    if st == 201:
        if killed is None: last_ok = t
        else: first_ok_after = t; break
    time.sleep(0.05)
print(json.dumps({"gap_s": None if first_ok_after is None or last_ok is None else first_ok_after - last_ok,
  "after_kill_s": None if first_ok_after is None else first_ok_after - killed,
  "statuses": {str(k): v for k, v in sorted(statuses.items())}}))')
stop_instances
load1=$(cut -d' ' -f1-3 /proc/loadavg)

REF="$ref" MULTI="$multi" SINGLE="$single" FAILOVER="$failover" EVENTS=$events FORMED=$formed LOAD0="$load0" LOAD1="$load1" python3 -c '
import json, os
e = os.environ
ref, single, multi, fo = (json.loads(e[k]) for k in ("REF", "SINGLE", "MULTI", "FAILOVER"))
def dps(r): return r["delivered"] / r["drain_s"] if r["drain_s"] > 0 else 0
def row(r, what):
    bps = r["per_second"]
    print("| cluster %s: bookings (bench/create_bench, 32 connections, 50 overlapping starts a weekday; %d created, %d answered 409, overlapping pairs %d; %.1f retried transactions per 1,000 requests) | %.0f (%.2f× single node) | %.2fms | %.2fms | %d failed |"
          % (what, r["created"], r["conflicts"], r["overlaps"], 1000.0 * r["retries"] / max(1, r["requests"]), bps, bps / ref["per_second"], r["p50_ms"], r["p99_ms"], r["failed"]))
    print("| cluster %s: webhooks drain (%s queued BOOKING_CREATED events, one local receiver; %d delivered in %.2f s from the instances answering) | %.0f deliveries/s (%.2f× single node) | – | – | %d not delivered |"
          % (what, e["EVENTS"], r["delivered"], r["drain_s"], dps(r), dps(r) / dps(ref) if dps(ref) else 0, int(e["EVENTS"]) - r["delivered"]))
row(ref, "single node (reference: one instance, the bench MariaDB)")
row(single, "single writer (one instance through HAProxy, three-node Galera)")
row(multi, "three writers (one instance per Galera node, connections spread over the three)")
gap = ("no 201 before the kill" if fo["after_kill_s"] is not None else "no 201 within 90 s") if fo["gap_s"] is None else "%.2f s between the last 201 before and the first 201 after (first 201 %.2f s after the kill; target < 10 s)" % (fo["gap_s"], fo["after_kill_s"])
print("| cluster single writer: kill -9 of the writer node under a request loop through HAProxy (one booking at a time, 50 ms apart): %s; answers after the kill %s | – | – | – | – |"
      % (gap, " ".join("%s: %d" % kv for kv in fo["statuses"].items())))
print()
print("Cluster scenario: the cluster formed in %d s; load average %s at the start, %s at the end." % (int(e["FORMED"]), e["LOAD0"], e["LOAD1"]))'
