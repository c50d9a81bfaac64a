#!/usr/bin/env bash
# The statements one grant makes: a code exchange, a refresh, a reused refresh token (its grant
# revoked) and a replayed code, each alone, against a build's server on a private MariaDB with
# performance_schema on. Prints a Markdown table: per grant the statements the server received
# from the instance (round trips) and the SQL statements the server ran for them in all (those in
# procedure bodies and their nested calls included; not the procedures' IF, SET and handler steps), then the statements themselves.
#   bench/grant_statements.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$build/bin/rendezvous
dir=var/grant-statements
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
sock=$dir/mysqld.sock
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
sql() { mariadb --no-defaults -S "$sock" -uroot -N -B "$@"; }
if [ ! -d "$dir/data/mysql" ]; then
  mariadb-install-db --no-defaults --user="$(id -un)" --datadir="$dir/data" --auth-root-authentication-method=normal \
    --skip-test-db >"$dir/install.log" 2>&1
fi
mariadbd --no-defaults --user="$(id -un)" --datadir="$dir/data" --socket="$sock" --pid-file="$dir/mysqld.pid" \
  --skip-networking --skip-log-bin --character-set-server=utf8mb4 --collation-server=utf8mb4_unicode_ci \
  --performance-schema=ON --performance-schema-consumer-events-statements-current=ON --performance-schema-consumer-events-statements-history-long=ON \
  --performance-schema-events-statements-history-long-size=100000 --log-error="$dir/mysqld.log" >/dev/null 2>&1 &
db_pid=$!
server_pid=
cleanup() {
  [ -n "$server_pid" ] && { kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true; }
  kill "$db_pid" 2>/dev/null; wait "$db_pid" 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 1 300); do sql -e "DO 1" >/dev/null 2>&1 && break; sleep 0.1; done
sql -e "DROP DATABASE IF EXISTS rendezvous_grants; CREATE DATABASE rendezvous_grants"
api_port=$(free_port)
api=http://127.0.0.1:$api_port
cfg=$dir/config.yaml
sed -e "s/18090/$api_port/g" -e "s/18091/$(free_port)/g" -e "s#var/db/mysqld.sock#$sock#" \
  -e "s/rendezvous_bench/rendezvous_grants/" bench/bench.yaml >"$cfg"
export RENDEZVOUS_ENCRYPTION_KEY=${RENDEZVOUS_ENCRYPTION_KEY:-$(openssl rand -base64 32)}
$bin migrate --config "$cfg" >/dev/null
uid=$($bin admin user create --config "$cfg" --email grants@example.com --name Grants --password grants-password |
  sed -E 's/.*"id":([0-9]+).*/\1/')
client=$($bin admin oauth-client create --config "$cfg" --owner-id "$uid" --name "Grants" \
  --redirect-uri https://bench.example.com/cb --scope PROFILE_READ)
client_id=$(echo "$client" | sed -E 's/.*"client_id":"([^"]+)".*/\1/')
client_secret=$(echo "$client" | sed -E 's/.*"client_secret":"([^"]+)".*/\1/')
$bin admin oauth-client review --config "$cfg" "$client_id" --accept >/dev/null
code=grant-statements-code
sql rendezvous_grants -e "INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, scopes, all_scopes,
  code_challenge, created_at, expires_at) VALUES (SHA2('$code', 256), '$client_id', $uid, 'https://bench.example.com/cb',
  '[\"PROFILE_READ\"]', 0, '', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL 1 HOUR)"
$bin serve --config "$cfg" 2>"$dir/server.log" &
server_pid=$!
for _ in $(seq 1 100); do curl -fs "$api/healthz" >/dev/null && break; sleep 0.1; done

token() { curl -s -H "Content-Type: application/x-www-form-urlencoded" --data "$1" "$api/v2/auth/oauth2/token"; }
# The statements since the last mark on the server's connection that ran the grant: the general
# log has what the connection sent (with prepared statements' text), performance_schema what ran
# inside procedures. Background jobs borrow the same pooled connections between requests, so the
# grant's statements are the run from its first to its last statement naming an OAuth table or
# procedure, with the START TRANSACTION before and the COMMIT after it.
mark() { sql -e "TRUNCATE TABLE performance_schema.events_statements_history_long; TRUNCATE TABLE mysql.general_log"; }
ours() { # grant name
  local thread sent nested
  thread=$(sql -e "SELECT COALESCE(MAX(thread_id), 0) FROM mysql.general_log WHERE thread_id <> CONNECTION_ID()
    AND command_type IN ('Query', 'Execute') AND argument LIKE '%oauth%'")
  sent=$(sql -e "SELECT CONCAT(command_type, ' ', LEFT(REPLACE(CONVERT(argument USING utf8mb4), '\n', ' '), 110))
    FROM mysql.general_log WHERE thread_id = $thread AND command_type IN ('Query', 'Execute') ORDER BY event_time" |
    python3 -c '
import sys
rows = [l.rstrip("\n") for l in sys.stdin]
at = [i for i, r in enumerate(rows) if "oauth" in r]
first, last = at[0], at[-1]
if first > 0 and rows[first - 1] == "Query START TRANSACTION": first -= 1
if last + 1 < len(rows) and rows[last + 1] == "Query COMMIT": last += 1
print("\n".join(rows[first:last + 1]))')
  nested=$(sql -e "SELECT LEFT(REPLACE(h.SQL_TEXT, '\n', ' '), 110) FROM performance_schema.events_statements_history_long h
      JOIN performance_schema.threads t USING (THREAD_ID)
      WHERE t.PROCESSLIST_ID = $thread AND h.NESTING_EVENT_ID IS NOT NULL AND h.EVENT_NAME = 'statement/sp/stmt'
      ORDER BY h.EVENT_ID")
  local n_sent n_nested
  n_sent=$(printf '%s\n' "$sent" | grep -c .)
  n_nested=$(printf '%s\n' "$nested" | grep -c . || true)
  echo "| $1 | $n_sent | $((n_sent + n_nested)) |"
  { echo "--- $1: sent"; echo "$sent"; echo "--- $1: run inside procedures"; echo "$nested"; } >>"$dir/statements.txt"
}
sql -e "SET GLOBAL log_output = 'TABLE', GLOBAL general_log = ON"
: >"$dir/statements.txt"
auth="client_id=$client_id&client_secret=$client_secret"
echo "| grant | statements the server received (round trips) | statements run in all |"
echo "|---|---|---|"
mark; first=$(token "grant_type=authorization_code&code=$code&redirect_uri=https%3A%2F%2Fbench.example.com%2Fcb&$auth")
ours "authorization_code"
refresh=$(echo "$first" | python3 -c 'import json,sys; print(json.load(sys.stdin)["refresh_token"])')
mark; second=$(token "grant_type=refresh_token&refresh_token=$refresh&$auth")
echo "$second" | python3 -c 'import json,sys; json.load(sys.stdin)["refresh_token"]'
ours "refresh_token"
mark; reused=$(token "grant_type=refresh_token&refresh_token=$refresh&$auth")
echo "$reused" | grep -q refresh_token_revoked
ours "refresh_token reused (grant revoked)"
mark; replayed=$(token "grant_type=authorization_code&code=$code&redirect_uri=https%3A%2F%2Fbench.example.com%2Fcb&$auth")
echo "$replayed" | grep -q code_invalid_or_expired
ours "authorization_code replayed"
echo
echo "The statements: $dir/statements.txt"
