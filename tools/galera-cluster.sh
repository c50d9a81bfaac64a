#!/usr/bin/env bash
# A local three-node MariaDB Galera cluster on loopback: private datadirs, no system service.
#   tools/galera-cluster.sh start DIR [N]   start every node (or node N) not running; the first
#                                           node started when none runs bootstraps the cluster, the
#                                           others join it (SST by rsync, IST after a restart);
#                                           returns when every running node is Synced
#   tools/galera-cluster.sh stop DIR [N]    stop every node (or node N) cleanly
#   tools/galera-cluster.sh kill DIR N      kill -9 node N (a crash, for tests and drills)
#   tools/galera-cluster.sh status DIR      JSON: per node its name, socket, ports, pid, state;
#                                           exit 0 when every node is Synced
#   tools/galera-cluster.sh sql DIR N SQL   run SQL as root on node N
# Ports are probed free once and kept in DIR/ports. Root connects by each node's socket; the
# nodes listen on 127.0.0.1 only. Run as root, the nodes run as the `mysql` user (rsync SST
# refuses root), and DIR is given to it.
set -euo pipefail
cmd=${1:?usage: galera-cluster.sh start|stop|kill|status|sql DIR [N]}
dir=$(mkdir -p "${2:?DIR}" && cd "$2" && pwd)
only=${3:-}
nodes=(1 2 3)
provider=${GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}

find_bin() { for b in "$@"; do command -v "$b" >/dev/null 2>&1 && { command -v "$b"; return; }; [ -x "/usr/sbin/$b" ] && { echo "/usr/sbin/$b"; return; }; done; echo "galera-cluster.sh: none of $* found (apt-get install mariadb-server galera-4 rsync)" >&2; exit 1; }
mysqld=$(find_bin mariadbd mysqld)
client=$(find_bin mariadb mysql)

if [ "$(id -u)" = 0 ]; then run_user=mysql; else run_user=$(id -un); fi

# DIR/ports: one line per node: mysql galera ist sst
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# Below the kernel's ephemeral range: a node restarted mid-test must find its ports free, and an
# outgoing connection of any process may take any port of that range in the meantime.
probe_ports() {
  local taken=" " p out=() low=32768
  read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
  [ "$low" -gt 12000 ] || { echo "galera-cluster.sh: the ephemeral port range starts at $low" >&2; exit 1; }
  for _ in $(seq 1 12); do
    for _try in $(seq 1 200); do
      p=$((10000 + RANDOM % (low - 10000)))
      case "$taken" in *" $p "*) continue ;; esac
      port_busy "$p" && continue
      taken="$taken$p "; out+=("$p"); break
    done
  done
  [ ${#out[@]} = 12 ] || { echo "galera-cluster.sh: no free ports found" >&2; exit 1; }
  printf '%s %s %s %s\n' "${out[@]}" >"$dir/ports"
}
[ -s "$dir/ports" ] || probe_ports
port() { sed -n "${1}p" "$dir/ports" | cut -d' ' -f"$2"; }  # node, field (1 mysql 2 galera 3 ist 4 sst)

ndir() { echo "$dir/node$1"; }
sock() { echo "$(ndir "$1")/mysqld.sock"; }
pidfile() { echo "$(ndir "$1")/mysqld.pid"; }
q() { "$client" --no-defaults --socket="$(sock "$1")" -uroot -N -B -e "$2" 2>/dev/null; }
alive() { [ -S "$(sock "$1")" ] && q "$1" "DO 1" >/dev/null; }
# The pid the script launched (mariadbd stays in the foreground; its pid file comes only after SST).
pid_of() {
  local f
  for f in "$(ndir "$1")/launched.pid" "$(pidfile "$1")"; do
    [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && { cat "$f"; return 0; }
  done
  return 1
}
state() { q "$1" "SHOW STATUS LIKE 'wsrep_local_state_comment'" | cut -f2; }
synced() { [ "$(state "$1" || true)" = Synced ]; }
gcomm() { echo "gcomm://127.0.0.1:$(port 1 2),127.0.0.1:$(port 2 2),127.0.0.1:$(port 3 2)"; }

# Nodes 2 and 3 start from a copy of node 1's freshly installed datadir, all three with the same
# Galera state (a new history at seqno 0): they join without a state transfer. A node that has
# run before keeps its datadir and catches up by IST (or SST when too far behind).
install_nodes() {
  local n d1; d1=$(ndir 1)
  [ -d "$d1/data/mysql" ] && [ -d "$(ndir 2)/data/mysql" ] && [ -d "$(ndir 3)/data/mysql" ] && return 0
  for n in "${nodes[@]}"; do rm -rf "$(ndir "$n")"; mkdir -p "$(ndir "$n")/data" "$(ndir "$n")/tmp"; done
  [ "$run_user" = "$(id -un)" ] || chown -R "$run_user" "$dir"
  "$(find_bin mariadb-install-db mysql_install_db)" --no-defaults --user="$run_user" --datadir="$d1/data" \
    --tmpdir="$d1/tmp" --auth-root-authentication-method=normal --skip-test-db \
    --innodb-log-file-size=16M >"$d1/install.log" 2>&1 || { cat "$d1/install.log" >&2; exit 1; }
  # Node 1 founds the history once and stops cleanly: its storage then records the position
  # nodes 2 and 3 start from.
  start_node 1 1; await_synced 1; stop_node 1
  for n in 2 3; do
    cp -a --sparse=always "$d1/data/." "$(ndir "$n")/data/"
    sed -i 's/^safe_to_bootstrap: 1/safe_to_bootstrap: 0/' "$(ndir "$n")/data/grastate.dat"
  done
  [ "$run_user" = "$(id -un)" ] || chown -R "$run_user" "$dir"
}

start_node() {  # node, bootstrap (0/1)
  local n=$1 boot=$2 d; d=$(ndir "$n")
  local extra=()
  if [ "$boot" = 1 ]; then
    extra=(--wsrep-new-cluster)
    # A cluster stopped cleanly leaves safe_to_bootstrap on its last node only; this one is chosen.
    [ -f "$d/data/grastate.dat" ] && sed -i 's/^safe_to_bootstrap: 0/safe_to_bootstrap: 1/' "$d/data/grastate.dat"
  fi
  rm -f "$(sock "$n")"
  setsid "$mysqld" --no-defaults --user="$run_user" --datadir="$d/data" --tmpdir="$d/tmp" \
    --socket="$(sock "$n")" --pid-file="$(pidfile "$n")" --port="$(port "$n" 1)" --bind-address=127.0.0.1 \
    --log-error="$d/mysqld.log" --skip-log-bin --character-set-server=utf8mb4 \
    --collation-server=utf8mb4_unicode_ci --max-connections=1000 --innodb-buffer-pool-size=128M \
    --innodb-flush-log-at-trx-commit=2 --innodb-log-file-size=16M --innodb-autoinc-lock-mode=2 --binlog-format=ROW \
    --default-storage-engine=InnoDB --wsrep-on=ON --wsrep-provider="$provider" \
    --wsrep-cluster-name=rendezvous --wsrep-cluster-address="$(gcomm)" --wsrep-node-name="node$n" \
    --wsrep-node-address="127.0.0.1:$(port "$n" 2)" --wsrep-sst-method=rsync \
    --wsrep-sst-receive-address="127.0.0.1:$(port "$n" 4)" \
    --wsrep-provider-options="base_host=127.0.0.1;base_port=$(port "$n" 2);gmcast.listen_addr=tcp://127.0.0.1:$(port "$n" 2);ist.recv_addr=127.0.0.1:$(port "$n" 3);gcache.size=64M" \
    "${extra[@]}" >/dev/null 2>&1 &
  echo $! >"$d/launched.pid"
}

await_synced() {  # nodes...
  local n
  for _ in $(seq 1 1200); do
    local all=1
    for n in "$@"; do synced "$n" || { all=0; break; }; done
    [ $all = 1 ] && return 0
    for n in "$@"; do
      if ! pid_of "$n" >/dev/null; then
        echo "galera-cluster.sh: node $n exited; see $(ndir "$n")/mysqld.log" >&2
        tail -20 "$(ndir "$n")/mysqld.log" >&2 || true; exit 1
      fi
    done
    sleep 0.1
  done
  echo "galera-cluster.sh: the cluster did not reach Synced within 120 s" >&2; exit 1
}

selected() { if [ -n "$only" ]; then echo "$only"; else echo "${nodes[@]}"; fi; }

stop_node() {
  local n=$1 pid
  pid=$(pid_of "$n") || return 0
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

case "$cmd" in
start)
  [ -r "$provider" ] || { echo "galera-cluster.sh: $provider missing (apt-get install galera-4)" >&2; exit 1; }
  command -v rsync >/dev/null || { echo "galera-cluster.sh: rsync missing (apt-get install rsync)" >&2; exit 1; }
  [ "$run_user" = "$(id -un)" ] || chown "$run_user" "$dir"
  want=$(selected)
  install_nodes
  started=()
  any_alive=0
  for n in "${nodes[@]}"; do pid_of "$n" >/dev/null && any_alive=1; done
  for n in $want; do
    pid_of "$n" >/dev/null && continue
    if [ $any_alive = 0 ]; then
      start_node "$n" 1; await_synced "$n"; any_alive=1
    else
      start_node "$n" 0
      started+=("$n")
    fi
  done
  [ ${#started[@]} = 0 ] || await_synced "${started[@]}"
  "$0" status "$dir" || true
  ;;
stop)
  # The last node standing stops last, so it can bootstrap the next start.
  for n in $(selected | tr ' ' '\n' | sort -r); do stop_node "$n"; done
  ;;
kill)
  [ -n "$only" ] || { echo "usage: galera-cluster.sh kill DIR N" >&2; exit 2; }
  if pid=$(pid_of "$only"); then
    kill -9 "$pid"
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  fi
  ;;
status)
  ok=0
  printf '{"nodes":['
  for n in "${nodes[@]}"; do
    [ "$n" = 1 ] || printf ','
    pid=$(pid_of "$n" || true)
    st=$( [ -n "$pid" ] && state "$n" || true)
    [ "$st" = Synced ] || ok=1
    printf '{"node":%s,"name":"node%s","socket":"%s","host":"127.0.0.1","port":%s,"galera_port":%s,"ist_port":%s,"sst_port":%s,"pid":%s,"state":"%s"}' \
      "$n" "$n" "$(sock "$n")" "$(port "$n" 1)" "$(port "$n" 2)" "$(port "$n" 3)" "$(port "$n" 4)" \
      "${pid:-null}" "${st:-down}"
  done
  printf ']}\n'
  exit $ok
  ;;
sql)
  [ -n "$only" ] || { echo "usage: galera-cluster.sh sql DIR N SQL" >&2; exit 2; }
  "$client" --no-defaults --socket="$(sock "$only")" -uroot -N -B -e "${4:?SQL}"
  ;;
*) echo "usage: galera-cluster.sh start|stop|kill|status|sql DIR [N]" >&2; exit 2 ;;
esac
