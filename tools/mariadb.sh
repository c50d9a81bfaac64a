#!/usr/bin/env bash
# A private MariaDB instance under a folder: no system service, no root password, socket + port.
#   tools/mariadb.sh start DIR [PORT]   initialise (once) and start; idempotent; prints the socket
#   tools/mariadb.sh stop DIR           stop by pid file
#   tools/mariadb.sh status DIR         exit 0 when it answers
# PORT 0 (default) keeps TCP off; tests and `make run` use the socket.
set -euo pipefail
cmd=${1:?usage: mariadb.sh start|stop|status DIR [PORT]}
dir=$(mkdir -p "${2:?DIR}" && cd "$2" && pwd)
port=${3:-0}
data=$dir/data
sock=$dir/mysqld.sock
pidf=$dir/mysqld.pid
log=$dir/mysqld.log

find_bin() { for b in "$@"; do command -v "$b" >/dev/null 2>&1 && { command -v "$b"; return; }; [ -x "/usr/sbin/$b" ] && { echo "/usr/sbin/$b"; return; }; done; echo "mariadb.sh: none of $* found (apt-get install mariadb-server)" >&2; exit 1; }

alive() { [ -S "$sock" ] && "$(find_bin mariadb-admin mysqladmin)" --no-defaults --socket="$sock" -uroot ping >/dev/null 2>&1; }

case "$cmd" in
start)
  if alive; then echo "$sock"; exit 0; fi
  if [ ! -d "$data/mysql" ]; then
    rm -rf "$data"; mkdir -p "$data"
    "$(find_bin mariadb-install-db mysql_install_db)" --no-defaults --user="$(id -un)" --datadir="$data" \
      --auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1 \
      || { cat "$dir/install.log" >&2; exit 1; }
  fi
  net=(--skip-networking)
  [ "$port" != 0 ] && net=(--port="$port" --bind-address=127.0.0.1)
  "$(find_bin mariadbd mysqld)" --no-defaults --user="$(id -un)" --datadir="$data" --socket="$sock" \
    --pid-file="$pidf" "${net[@]}" --skip-log-bin --character-set-server=utf8mb4 \
    --collation-server=utf8mb4_unicode_ci --max-connections=1000 --innodb-buffer-pool-size=256M \
    --innodb-flush-log-at-trx-commit=2 --log-error="$log" >/dev/null 2>&1 &
  for _ in $(seq 1 300); do alive && { echo "$sock"; exit 0; }; sleep 0.1; done
  echo "mariadb.sh: MariaDB did not start; see $log" >&2; tail -20 "$log" >&2 || true; exit 1
  ;;
stop)
  if [ -f "$pidf" ]; then
    pid=$(cat "$pidf"); kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  ;;
status) alive ;;
*) echo "usage: mariadb.sh start|stop|status DIR [PORT]" >&2; exit 2 ;;
esac
