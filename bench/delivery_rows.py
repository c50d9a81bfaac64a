#!/usr/bin/env python3
"""MariaDB's CPU for a webhook delivery's rows, without the server: the statements the outbox
consumer and the sender run, replayed in batches through the mariadb client against a scratch copy
of the bench's tables, each phase timed by mariadbd's own CPU (every thread, purge included:
each phase is followed by a quiet second and a half).

  bench/delivery_rows.py [N] [BATCH] [VARIANT ...]

The deliveries carry a body of their own, as a template's or a script's do (a delivery of the
built-in body refers to its event in the outbox instead: a NULL body, read back by the claim).
Phases: `enqueue` (the consumer's multi-row insert of N deliveries of a 885-byte body), `claim`
(the sender's claim from its cursor, FOR UPDATE SKIP LOCKED, and its lease), `record` (the
outcome of a first successful attempt). Variants of `record`: `attempt` (an attempts row and the
status update, as the server does it), `no-attempt` (the status update alone: what the attempts row
costs), `in-row` (the attempt's fields written into the delivery row by the status update,
CASE per row). Needs the bench's MariaDB (`make db`) and its webhooks schema (any run of
`BENCH_SCENARIOS=webhooks_drain make bench`). The statements go as text, not prepared: compare
the variants with each other, not with the server's figures."""
import os
import random
import string
import subprocess
import sys
import time

SOCKET = "var/db/mysqld.sock"
SOURCE = "rendezvous_bench_webhooks"
LAB = "rendezvous_bench_rows"
BODY = ('{"triggerEvent":"BOOKING_CREATED","createdAt":"2026-11-28T09:00:00.000Z","payload":{'
        + ",".join('"k%d":"%s"' % (i, "v" * 30) for i in range(20)) + "}}")[:885]
LONG_AGO = "'1970-01-01 00:00:00.000'"


def mariadb(sql):
    return subprocess.run(["mariadb", "--no-defaults", "-S", SOCKET, "-uroot", "-N"], input=sql.encode(),
                          capture_output=True, check=True).stdout.decode()


def mariadbd_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def setup(variant):
    extra = ""
    if variant == "in-row":
        extra = ("ALTER TABLE webhook_deliveries ADD COLUMN first_at DATETIME(3) NULL,"
                 " ADD COLUMN first_status INT NULL, ADD COLUMN first_duration_ms BIGINT NULL,"
                 " ADD COLUMN first_error VARCHAR(512) NULL, ADD COLUMN first_response TEXT NULL;")
    mariadb(f"""DROP DATABASE IF EXISTS {LAB}; CREATE DATABASE {LAB}; USE {LAB};
CREATE TABLE webhooks LIKE {SOURCE}.webhooks;
INSERT INTO webhooks (id, user_id, event_type_id, subscriber_url, url_hash, active, triggers, created_at, updated_at)
  SELECT id, user_id, event_type_id, subscriber_url, url_hash, active, triggers, created_at, updated_at
  FROM {SOURCE}.webhooks ORDER BY id LIMIT 1;
CREATE TABLE webhook_deliveries LIKE {SOURCE}.webhook_deliveries;
ALTER TABLE webhook_deliveries ADD CONSTRAINT fk_lab_delivery_webhook FOREIGN KEY (webhook_id)
  REFERENCES webhooks (id) ON DELETE CASCADE;
CREATE TABLE webhook_delivery_attempts LIKE {SOURCE}.webhook_delivery_attempts;
ALTER TABLE webhook_delivery_attempts ADD CONSTRAINT fk_lab_attempt_delivery FOREIGN KEY (delivery_id)
  REFERENCES webhook_deliveries (id) ON DELETE CASCADE;
{extra}""")
    return int(mariadb(f"SELECT id FROM {LAB}.webhooks").split()[0])


def batches(n, size):
    for start in range(0, n, size):
        yield start, list(range(start + 1, min(n, start + size) + 1))


def enqueue_sql(n, size, webhook):
    out = []
    for _, ids in batches(n, size):
        rows = ",".join(
            "(%d, %d, 'BOOKING_CREATED', 'msg_%s', '%s', 'application/json', UTC_TIMESTAMP(3), 'pending', 0,"
            " UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))"
            % (webhook, i, "".join(random.choices(string.ascii_letters, k=24)), BODY) for i in ids)
        out.append("BEGIN; INSERT INTO webhook_deliveries (webhook_id, event_id, trigger_event, message_id, body,"
                   " content_type, event_at, status, round_attempts, next_attempt_at, created_at, updated_at)"
                   " VALUES %s ON DUPLICATE KEY UPDATE id = id; COMMIT;" % rows)
    return out


def claim_sql(n, size):
    out = []
    for start, ids in batches(n, size):
        cursor = max(1, start)
        out.append(
            "SET @due = (SELECT next_attempt_at FROM webhook_deliveries WHERE id = %d);"
            " BEGIN; SELECT COUNT(*), SUM(LENGTH(body)) FROM (SELECT id, webhook_id, message_id, trigger_event, body,"
            " content_type, round_attempts, COALESCE(event_at, created_at) AS event_at, next_attempt_at"
            " FROM webhook_deliveries FORCE INDEX (ix_webhook_deliveries_due) WHERE status = 'pending'"
            " AND next_attempt_at <= UTC_TIMESTAMP(3) AND leased_until <= UTC_TIMESTAMP(3)"
            " AND next_attempt_at >= @due AND (next_attempt_at > @due OR id > %d)"
            " ORDER BY next_attempt_at, id LIMIT %d FOR UPDATE SKIP LOCKED) claimed;"
            " UPDATE webhook_deliveries SET leased_until = UTC_TIMESTAMP(3) + INTERVAL 30 SECOND WHERE id IN (%s);"
            " COMMIT;" % (cursor, start, size, ",".join(map(str, ids))))
    return out


SUCCEEDED = ("UPDATE webhook_deliveries SET status = 'succeeded', round_attempts = round_attempts + 1,"
             " next_attempt_at = UTC_TIMESTAMP(3), updated_at = UTC_TIMESTAMP(3), leased_until = " + LONG_AGO +
             ", delivered_at = IF(delivered_at > " + LONG_AGO + ", delivered_at, UTC_TIMESTAMP(3))")


def record_sql(n, size, variant, webhook):
    out = []
    for _, ids in batches(n, size):
        in_list = ",".join(map(str, ids))
        sql = "BEGIN; "
        if variant == "attempt":
            sql += ("INSERT INTO webhook_delivery_attempts (delivery_id, at, status_code, duration_ms, error, response)"
                    " VALUES %s; " % ",".join("(%d, UTC_TIMESTAMP(3), 200, %d, NULL, 'ok')" % (i, i % 7) for i in ids))
            sql += SUCCEEDED + " WHERE id IN (%s); " % in_list
        elif variant == "no-attempt":
            sql += SUCCEEDED + " WHERE id IN (%s); " % in_list
        elif variant == "in-row":
            at = " ".join("WHEN %d THEN UTC_TIMESTAMP(3) - INTERVAL %d MICROSECOND" % (i, i % 7 * 1000) for i in ids)
            duration = " ".join("WHEN %d THEN %d" % (i, i % 7) for i in ids)
            sql += (SUCCEEDED + ", first_at = CASE id %s END, first_status = 200, first_duration_ms = CASE id %s END,"
                    " first_error = NULL, first_response = 'ok' WHERE id IN (%s); " % (at, duration, in_list))
        else:
            sys.exit("unknown variant " + variant)
        sql += "SELECT id FROM webhooks WHERE failing_since IS NOT NULL AND id IN (%d); COMMIT;" % webhook
        out.append(sql)
    return out


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50000
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    variants = sys.argv[3:] or ["attempt", "no-attempt"]
    pid = int(subprocess.run(["pgrep", "-of", "mariadbd.*" + os.path.dirname(SOCKET)], capture_output=True,
                             text=True, check=True).stdout.split()[0])
    hz = os.sysconf("SC_CLK_TCK")
    for variant in variants:
        webhook = setup(variant)
        figures = []
        for phase, statements in (("enqueue", enqueue_sql(n, size, webhook)), ("claim", claim_sql(n, size)),
                                  ("record", record_sql(n, size, variant, webhook))):
            before = mariadbd_ticks(pid)
            started = time.monotonic()
            mariadb(f"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED; USE {LAB};\n" + "\n".join(statements))
            wall = time.monotonic() - started
            time.sleep(1.5)  # purge and flushing of the phase
            cpu_us = (mariadbd_ticks(pid) - before) * 1e6 / hz
            figures.append("%s %.1f µs (%.2f s)" % (phase, cpu_us / n, wall))
        print("%s: %d deliveries in batches of %d; mariadbd CPU a delivery: %s" % (variant, n, size, ", ".join(figures)))
    mariadb(f"DROP DATABASE IF EXISTS {LAB};")


if __name__ == "__main__":
    main()
