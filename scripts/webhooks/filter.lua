-- Webhook filter (plugins.webhooks.scripts.filter): decides whether an event is delivered to a
-- webhook at all. Edit the two lists below; an empty list means "any".
--
-- should_deliver(event, webhook) must answer true or false. An error, running over the
-- instruction or memory limit, or any other answer delivers as if there were no filter.
--   event   = {triggerEvent = "BOOKING_CREATED", createdAt = "2030-01-01T09:00:00.000Z",
--              payload = <the booking, as in the default body>}
--   webhook = {id, userId, subscriberUrl, triggers, active, payloadTemplate}  (never the secret)

-- Triggers to deliver, e.g. {"BOOKING_CREATED", "BOOKING_CANCELLED"}.
local TRIGGERS = {}

-- Attendee e-mail domains to deliver (lower case), e.g. {"example.com"}: an event is delivered
-- when at least one attendee's address ends in one of them.
local DOMAINS = {}

local function set_of(list)
  local set = {}
  for _, value in ipairs(list) do set[value] = true end
  return set
end

local wanted_triggers = set_of(TRIGGERS)
local wanted_domains = set_of(DOMAINS)

local function domain_of(email)
  if type(email) ~= "string" then return nil end
  local domain = email:match("@([^@]+)$")
  return domain and domain:lower()
end

local function attendee_matches(payload)
  if next(wanted_domains) == nil then return true end
  for _, attendee in ipairs(payload.attendees or {}) do
    if type(attendee) == "table" and wanted_domains[domain_of(attendee.email)] then return true end
  end
  return false
end

function should_deliver(event, webhook)
  if next(wanted_triggers) ~= nil and not wanted_triggers[event.triggerEvent] then return false end
  return attendee_matches(event.payload or {})
end
