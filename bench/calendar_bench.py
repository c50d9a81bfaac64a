#!/usr/bin/env python3
"""Calendar isolation benchmarks for bench/run.sh (python3, standard library only).

  calendar_bench.py me_under_slots API HOST_KEY OTHER_KEY SECONDS
      An ICS feed host on loopback that serves one calendar (for the save) and then reads
      requests and never answers them. GET /v2/me of another user, alone and while 16 connections
      ask for the slots of the feed's owner (a different week each time, wrk), p50/p99 by wrk.
  calendar_bench.py ics_memory API SERVER_PID KEY1 KEY2 [READERS]
      A loopback feed server (ETag and Last-Modified, 304 on a match) with 100 feeds of 15,000
      VEVENTs (about 1.9 MB each); each of the two users saves 50; then READERS (default 8)
      concurrent readers, three rounds: with 8, each a GET /v2/calendars/busy-times over 90 days
      (4 per user); with more, half of them busy-times over 90 days and half GET /v2/slots of a
      week of the users' event types (a different week each). The server's RSS before, its peak
      (VmHWM, reset before the burst) and after (at once and 5 s later).

Each prints Markdown table rows: | scenario | requests/s | p50 | p99 | non-2xx |.
"""
import datetime
import hashlib
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request


def call(method, url, key=None, body=None, timeout=60):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    if key:
        req.add_header("Authorization", "Bearer " + key)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def tuesdays(count):
    day = datetime.date.today() + datetime.timedelta(days=7)
    while day.weekday() != 1:
        day += datetime.timedelta(days=1)
    return [(day + datetime.timedelta(weeks=i)).isoformat() for i in range(count)]


def wrk(url, conns, seconds, headers=(), script=None):
    args = ["wrk", "-t1" if conns == 1 else "-t2", "-c%d" % conns, "-d%ds" % seconds, "--latency"]
    for h in headers:
        args += ["-H", h]
    if script:
        args += ["-s", script]
    out = subprocess.run(args + [url], capture_output=True, text=True, timeout=seconds + 60).stdout
    res = {"rps": "?", "p50": "?", "p99": "?", "non2xx": "0"}
    for line in out.splitlines():
        f = line.split()
        if line.startswith("Requests/sec"):
            res["rps"] = f[1]
        elif f[:1] == ["50%"]:
            res["p50"] = f[1]
        elif f[:1] == ["99%"]:
            res["p99"] = f[1]
        elif "Non-2xx" in line:
            res["non2xx"] = f[-1]
    return res


def ms(text):
    for unit, scale in (("us", 0.001), ("ms", 1.0), ("s", 1000.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * scale
    return float("nan")


def me_under_slots(api, host_key, other_key, seconds):
    days = tuesdays(60)
    ics = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\nBEGIN:VEVENT\r\nUID:1\r\nDTSTART:%sT140000Z\r\n"
           "DTEND:%sT143000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n") % (days[0].replace("-", ""), days[0].replace("-", ""))
    hang = threading.Event()
    over = threading.Event()
    held = []

    class Feed(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            if hang.is_set():
                held.append(self.path)
                over.wait()  # answer nothing until the run is over
                self.close_connection = True
                return
            body = ics.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/calendar")
            self.send_header("Connection", "close")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True

        def log_message(self, *args):
            pass

    class Server(http.server.ThreadingHTTPServer):
        request_queue_size = 512
        daemon_threads = True

    srv = Server(("127.0.0.1", 0), Feed)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    feed = "http://127.0.0.1:%d/hanging.ics" % srv.server_address[1]
    status, answer = call("POST", api + "/v2/calendars/ics-feed/save", host_key, {"urls": [feed]})
    assert status == 201, (status, answer)
    hang.set()
    status, answer = call("POST", api + "/v2/event-types", host_key,
                          {"title": "Bench call", "slug": "bench-isolation", "lengthInMinutes": 30})
    assert status == 201, (status, answer)
    event_type = answer["data"]["id"]

    me_headers = ["Authorization: Bearer " + other_key, "Connection: keep-alive"]
    alone = wrk(api + "/v2/me", 1, seconds, me_headers)
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write("local days = {%s}\nlocal n = 0\nrequest = function()\n  n = n + 1\n"
                "  local d = days[(n %% #days) + 1]\n"
                "  return wrk.format('GET', '/v2/slots?eventTypeId=%d&start=' .. d .. '&end=' .. d)\nend\n"
                % (",".join('"%s"' % d for d in days), event_type))
        script = f.name
    hammer = {}
    t = threading.Thread(target=lambda: hammer.update(wrk(api + "/", 16, seconds + 2, ["Connection: keep-alive"], script)))
    t.start()
    time.sleep(1)  # the 16 connections are at it
    busy = wrk(api + "/v2/me", 1, seconds, me_headers)
    t.join()
    os.unlink(script)
    over.set()
    srv.shutdown()
    srv.server_close()
    ratio = ms(busy["p99"]) / max(ms(alone["p99"]), 0.001)
    print("| me_under_slots: GET /v2/me (API key, 1 connection) alone | %s | %s | %s | %s |"
          % (alone["rps"], alone["p50"], alone["p99"], alone["non2xx"]))
    print("| me_under_slots: GET /v2/me (API key, 1 connection) while 16 connections ask for the slots of a host whose "
          "ICS feed hangs (a different week each request, wrk; the feed accepted %d connections): p99 %.1f× alone "
          "(target ≤ 2×) | %s | %s | %s | %s |"
          % (len(held), ratio, busy["rps"], busy["p50"], busy["p99"], busy["non2xx"]))
    print("| me_under_slots: the 16 slots connections meanwhile | %s | %s | %s | %s |"
          % (hammer.get("rps"), hammer.get("p50"), hammer.get("p99"), hammer.get("non2xx")))


def make_feed(first_day, events=15000):
    """A busy feed: 15,000 half-hour events, one every 35 minutes for a year from first_day (about
    3,700 of them in a 90-day window), none overlapping."""
    out = ["BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//ICS memory//EN\r\nX-WR-CALNAME:Bench\r\n"]
    t0 = datetime.datetime.combine(first_day, datetime.time(0))
    for i in range(events):
        start = t0 + datetime.timedelta(minutes=35 * i)
        end = start + datetime.timedelta(minutes=30)
        out.append("BEGIN:VEVENT\r\nUID:bench-%06d@bench.test\r\nDTSTART:%s\r\nDTEND:%s\r\n"
                   "SUMMARY:Meeting %06d\r\nEND:VEVENT\r\n"
                   % (i, start.strftime("%Y%m%dT%H%M%SZ"), end.strftime("%Y%m%dT%H%M%SZ"), i))
    out.append("END:VCALENDAR\r\n")
    return "".join(out).encode()


def rss_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def ics_memory(api, pid, keys, readers=8):
    first = datetime.date.today() + datetime.timedelta(days=1)
    body = make_feed(first)
    etag = '"%s"' % hashlib.sha256(body).hexdigest()[:16]
    modified = "Mon, 02 Nov 2026 10:00:00 GMT"
    served = {"200": 0, "304": 0}
    lock = threading.Lock()

    class Feeds(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            if self.headers.get("If-None-Match") == etag or self.headers.get("If-Modified-Since") == modified:
                with lock:
                    served["304"] += 1
                self.send_response(304)
                self.send_header("ETag", etag)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            with lock:
                served["200"] += 1
            self.send_response(200)
            self.send_header("Content-Type", "text/calendar")
            self.send_header("ETag", etag)
            self.send_header("Last-Modified", modified)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Feeds)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = "http://127.0.0.1:%d" % srv.server_address[1]
    rss_boot = rss_kb(pid, "VmRSS")
    for u, key in enumerate(keys):
        for batch in range(10):
            urls = ["%s/u%d/feed%02d.ics" % (base, u, batch * 5 + i) for i in range(5)]
            status, answer = call("POST", api + "/v2/calendars/ics-feed/save", key, {"urls": urls}, timeout=120)
            assert status == 201, (status, answer)
    event_types = []
    if readers > 8:
        for key in keys:
            status, answer = call("POST", api + "/v2/event-types", key,
                                  {"title": "Bench ICS", "slug": "bench-ics", "lengthInMinutes": 30})
            assert status == 201, (status, answer)
            event_types.append(answer["data"]["id"])
    weeks = [(first + datetime.timedelta(weeks=w)).isoformat() for w in range(12)]
    time.sleep(2)
    rss_start = rss_kb(pid, "VmRSS")
    with open("/proc/%d/clear_refs" % pid, "w") as f:
        f.write("5")  # VmHWM from here
    date_from = first.isoformat()
    date_to = (first + datetime.timedelta(days=89)).isoformat()
    durations, failed_sources, periods, statuses = [], [], [], []

    slot_answers = []

    def one(key):
        t0 = time.monotonic()
        status, answer = call("GET", api + "/v2/calendars/busy-times?dateFrom=%s&dateTo=%s" % (date_from, date_to),
                              key, timeout=120)
        with lock:
            durations.append(time.monotonic() - t0)
            statuses.append(status)
            if status == 200:
                failed_sources.append(len(answer.get("failedSources", [])))
                periods.append(len(answer.get("data", [])))

    def slots(event_type, week):
        t0 = time.monotonic()
        end = (datetime.date.fromisoformat(week) + datetime.timedelta(days=6)).isoformat()
        status, answer = call("GET", api + "/v2/slots?eventTypeId=%d&start=%s&end=%s" % (event_type, week, end),
                              timeout=120)
        with lock:
            durations.append(time.monotonic() - t0)
            statuses.append(status)
            if status == 200:
                slot_answers.append(1)

    def reader(i, round_no):
        if not event_types or i % 2 == 0:
            return threading.Thread(target=one, args=(keys[(i // (1 if not event_types else 2)) % 2],))
        n = round_no * readers + i
        return threading.Thread(target=slots, args=(event_types[(i // 2) % 2], weeks[n % len(weeks)]))

    t_burst = time.monotonic()
    for round_no in range(3):
        threads = [reader(i, round_no) for i in range(readers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    burst = time.monotonic() - t_burst
    rss_peak = rss_kb(pid, "VmHWM")
    rss_after = rss_kb(pid, "VmRSS")
    time.sleep(5)
    rss_later = rss_kb(pid, "VmRSS")
    srv.shutdown()
    durations.sort()
    mb = lambda kb: kb / 1024.0
    if event_types:
        who = ("%d concurrent readers (%d GET /v2/calendars/busy-times over 90 days, %d GET /v2/slots of a week: "
               "%d slot answers 200)" % (readers, (readers + 1) // 2, readers // 2, len(slot_answers)))
    else:
        who = "%d concurrent GET /v2/calendars/busy-times over 90 days" % readers
    print("| ics_memory: 2 users × 50 ICS feeds of %.2f MB (15,000 half-hour VEVENTs over a year each, loopback feed server with ETag/"
          "Last-Modified: %d full answers, %d answered 304), %s, "
          "3 rounds in %.1f s: answers %s, busy periods per busy-times answer %s, failed sources per answer %s; server RSS "
          "%.0f MB at boot, %.0f MB before the burst, peak %.0f MB (target < 600), %.0f MB just after, %.0f MB 5 s "
          "later (target ≤ start + 100) | %.2f | %.0fms | %.0fms | %d |"
          % (len(body) / 1e6, served["200"], served["304"], who, burst, sorted(set(statuses)),
             sorted(set(periods)), sorted(set(failed_sources)), mb(rss_boot), mb(rss_start), mb(rss_peak),
             mb(rss_after), mb(rss_later), len(durations) / burst, 1000 * durations[len(durations) // 2],
             1000 * durations[-1], sum(1 for s in statuses if s != 200)))


def main():
    if len(sys.argv) >= 6 and sys.argv[1] == "me_under_slots":
        me_under_slots(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    elif len(sys.argv) >= 6 and sys.argv[1] == "ics_memory":
        ics_memory(sys.argv[2], int(sys.argv[3]), sys.argv[4:6], int(sys.argv[6]) if len(sys.argv) > 6 else 8)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
