-- wrk script: each request creates a managed user of the OAuth client $MU_CLIENT_ID (secret
-- $MU_CLIENT_SECRET) with an e-mail no other request uses (the thread's number and a counter).
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("thread_no", threads)
end
local client_id = os.getenv("MU_CLIENT_ID") or ""
local secret = os.getenv("MU_CLIENT_SECRET") or ""
local made = 0
function init(args)
  wrk.method = "POST"
  wrk.path = "/v2/oauth-clients/" .. client_id .. "/users"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["x-cal-client-id"] = client_id
  wrk.headers["x-cal-secret-key"] = secret
end
function request()
  made = made + 1
  local body = string.format('{"email":"bench-mu-%d-%d@example.com","name":"Bench Managed","timeZone":"UTC"}',
    thread_no, made)
  return wrk.format(nil, nil, nil, body)
end
