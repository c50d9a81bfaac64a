#!/usr/bin/env bash
# The bookings list's SQL (GET /v2/bookings, as BookingFlow::ListBookings writes it: the count and
# the first page of 100) on one host of 100,000 bookings among 195,000, in two databases of the same
# rows: "ref" without bookings migration 11's index (attendees by name) and without the start bound
# of bookings ending later, "new" with both. Also the index's cost to writes: 20,000 bookings and
# their attendees inserted into each.
# Rounds alternate ref and new; prints a markdown table of the medians (ms) and their ratios.
#   bench/list_query.sh [BUILD_DIR]   (the private MariaDB of `make run` / bench/run.sh: var/db)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$build/bin/rendezvous
rounds=${BENCH_ROUNDS:-5}
repeat=${BENCH_REPEAT:-10}
sock=var/db/mysqld.sock
sql() { mariadb --no-defaults -S "$sock" -uroot "$@"; }

for db in ref new; do
  sql -e "DROP DATABASE IF EXISTS rendezvous_list_$db; CREATE DATABASE rendezvous_list_$db"
  cat >var/list-$db.yaml <<EOF
server:
  api: { listen: "127.0.0.1:0", base_url: "http://127.0.0.1" }
  app: { listen: "127.0.0.1:0", app_url: "http://127.0.0.1" }
database: { socket: "$PWD/$sock", user: root, password: "", name: rendezvous_list_$db, pool_size: 2 }
logging: { level: warn, format: json }
plugins:
  bookings: {}
EOF
  $bin migrate --config var/list-$db.yaml >/dev/null
done
sql rendezvous_list_ref -e "ALTER TABLE booking_attendees DROP KEY ix_booking_attendees_name"

# Host 1: 99,000 bookings ended (mostly completed; some cancelled, rejected, pending) and 1,000 ahead
# (accepted, pending, cancelled), one every 40 minutes; hosts 2-20: 5,000 each. One attendee each.
fill="SET FOREIGN_KEY_CHECKS=0;
INSERT INTO event_types (id, owner_id, title, slug, length_minutes, description, locations, created_at, updated_at)
  SELECT seq, seq, 'T', CONCAT('t', seq), 30, '', '[]', NOW(3), NOW(3) FROM seq_1_to_20;
INSERT INTO bookings (uid, event_type_id, host_id, title, description, status, start_at, end_at, duration, metadata,
    created_at, updated_at)
  SELECT CONCAT('h1-', seq), 1, 1, 'x', '',
    CASE WHEN seq > 99000 THEN IF(seq % 7 = 0, 'pending', IF(seq % 11 = 0, 'cancelled', 'accepted'))
         WHEN seq % 13 = 0 THEN 'cancelled' WHEN seq % 17 = 0 THEN 'rejected' WHEN seq % 19 = 0 THEN 'pending'
         ELSE 'completed' END,
    UTC_TIMESTAMP(3) + INTERVAL (CAST(seq AS SIGNED) - 99000) * 40 MINUTE,
    UTC_TIMESTAMP(3) + INTERVAL (CAST(seq AS SIGNED) - 99000) * 40 + 30 MINUTE, 30, '{}',
    UTC_TIMESTAMP(3) - INTERVAL (100000 - CAST(seq AS SIGNED)) MINUTE, UTC_TIMESTAMP(3)
  FROM seq_1_to_100000;
INSERT INTO bookings (uid, event_type_id, host_id, title, description, status, start_at, end_at, duration, metadata,
    created_at, updated_at)
  SELECT CONCAT('h', h.seq, '-', b.seq), h.seq, h.seq, 'x', '', IF(b.seq > 4900, 'accepted', 'completed'),
    UTC_TIMESTAMP(3) + INTERVAL (CAST(b.seq AS SIGNED) - 4900) * 60 MINUTE,
    UTC_TIMESTAMP(3) + INTERVAL (CAST(b.seq AS SIGNED) - 4900) * 60 + 30 MINUTE, 30, '{}', UTC_TIMESTAMP(3),
    UTC_TIMESTAMP(3)
  FROM seq_2_to_20 h, seq_1_to_5000 b;
INSERT INTO booking_attendees (booking_id, position, name, email, time_zone)
  SELECT id, 0, CONCAT('Person ', id % 5000), CONCAT('p', id % 5000, '@example.com'), 'UTC' FROM bookings;
INSERT INTO booking_host_locks (host_id, changes, longest_ms)
  SELECT host_id, 0, MAX(end_ms - start_ms) FROM bookings GROUP BY host_id;
ANALYZE TABLE bookings, booking_attendees;"
for db in ref new; do sql rendezvous_list_$db -e "$fill" >/dev/null; done

now="'$(date -u +'%Y-%m-%d %H:%M:%S.000')'"
bound="AND start_at > '$(date -u -d '-30 minutes' +'%Y-%m-%d %H:%M:%S.000')'"
up="status IN ('accepted', 'pending') AND end_at > $now"
unc="status = 'pending' AND end_at > $now"
past="status NOT IN ('cancelled', 'rejected') AND end_at <= $now AND start_at < $now"
# name | WHERE after host_id = 1, ref | the same, new | ORDER BY
shapes=(
  "default||ORDER BY start_at, id"
  "status=upcoming|AND ($up)|AND ($up $bound)|ORDER BY start_at, id"
  "status=unconfirmed|AND ($unc)|AND ($unc $bound)|ORDER BY start_at, id"
  "status=past|AND ($past)|AND ($past)|ORDER BY start_at, id"
  "status=upcoming,past|AND (($up) OR ($past))|AND (($up $bound) OR ($past))|ORDER BY start_at, id"
  "attendeeEmail|AND EXISTS (SELECT 1 FROM booking_attendees a WHERE a.booking_id = bookings.id AND a.email = 'p7@example.com')|=|ORDER BY start_at, id"
  "attendeeName|AND EXISTS (SELECT 1 FROM booking_attendees a WHERE a.booking_id = bookings.id AND a.name = 'Person 7')|=|ORDER BY start_at, id"
  "sortEnd=desc||ORDER BY end_at DESC, id DESC"
  "sortCreated=desc||ORDER BY created_at DESC, id DESC"
  "status=upcoming&sortEnd=asc|AND ($up)|AND ($up $bound)|ORDER BY end_at, id"
)
ms_of() { # db, statements: wall ms of `repeat` runs of them in one client
  local stmts="" i t0 t1
  for ((i = 0; i < repeat; ++i)); do stmts+="$2"; done
  t0=$(date +%s%N); sql "rendezvous_list_$1" -e "$stmts" >/dev/null; t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000 / repeat))
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
fmt() { awk -v us="$1" 'BEGIN {printf "%.2f", us / 1000}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", (a > 0 ? b / a : 0)}'; }

echo "| query (host of 100,000 bookings; count + first page) | ref ms | new ms | new/ref |"
echo "|---|---|---|---|"
for shape in "${shapes[@]}"; do
  IFS='|' read -r name w_ref w_new order <<<"$shape"
  if [ -z "$order" ]; then order=$w_new; w_new=$w_ref; fi  # "name||ORDER": no filter
  [ "$w_new" = "=" ] && w_new=$w_ref
  declare -a r=() n=()
  for ((k = 0; k < rounds; ++k)); do
    r+=("$(ms_of ref "SELECT COUNT(*) FROM bookings WHERE host_id = 1 $w_ref; SELECT id FROM bookings WHERE host_id = 1 $w_ref $order LIMIT 100 OFFSET 0;")")
    n+=("$(ms_of new "SELECT COUNT(*) FROM bookings WHERE host_id = 1 $w_new; SELECT id FROM bookings WHERE host_id = 1 $w_new $order LIMIT 100 OFFSET 0;")")
  done
  mr=$(median "${r[@]}"); mn=$(median "${n[@]}")
  echo "| $name | $(fmt "$mr") | $(fmt "$mn") | $(ratio "$mr" "$mn") |"
done

# Writes: 20,000 bookings of a new host (one INSERT ... SELECT, with their attendees), each round.
declare -a wr=() wn=()
for ((k = 0; k < rounds; ++k)); do
  for db in ref new; do
    ins="INSERT INTO bookings (uid, event_type_id, host_id, title, description, status, start_at, end_at, duration,
        metadata, created_at, updated_at)
      SELECT CONCAT('w$k-', seq), 1, 100 + $k, 'x', '', 'accepted', UTC_TIMESTAMP(3) + INTERVAL seq HOUR,
        UTC_TIMESTAMP(3) + INTERVAL seq HOUR + INTERVAL 30 MINUTE, 30, '{}', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)
      FROM seq_1_to_20000;
    INSERT INTO booking_attendees (booking_id, position, name, email, time_zone)
      SELECT id, 0, 'Writer', 'w@example.com', 'UTC' FROM bookings WHERE host_id = 100 + $k;"
    t0=$(date +%s%N); sql "rendezvous_list_$db" -e "$ins"; t1=$(date +%s%N)
    if [ $db = ref ]; then wr+=($(((t1 - t0) / 1000))); else wn+=($(((t1 - t0) / 1000))); fi
  done
done
mr=$(median "${wr[@]}"); mn=$(median "${wn[@]}")
echo "| writes: 20,000 bookings and attendees inserted | $(fmt "$mr") | $(fmt "$mn") | $(ratio "$mr" "$mn") |"
for db in ref new; do sql -e "DROP DATABASE rendezvous_list_$db"; rm -f var/list-$db.yaml; done
