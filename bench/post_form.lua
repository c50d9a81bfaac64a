-- wrk script: every request POSTs the form in $BENCH_FORM (application/x-www-form-urlencoded).
wrk.method = "POST"
wrk.body = os.getenv("BENCH_FORM") or ""
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
