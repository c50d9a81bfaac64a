-- Slack-shaped webhook body (plugins.webhooks.scripts.render): {"text": "..."} for a Slack
-- incoming webhook (or anything that takes the same shape).
--
-- render(template, event, webhook) answers the body as a string, or nil for the built-in body
-- (the webhook's payloadTemplate, else the event as JSON). An error, running over a limit or an
-- answer that is not a string also gives the built-in body. `template` is the webhook's
-- payloadTemplate or nil; this script keeps webhooks that have one on the built-in rendering.

local HEADLINES = {
  BOOKING_CREATED = "New booking",
  BOOKING_RESCHEDULED = "Booking rescheduled",
  BOOKING_CANCELLED = "Booking cancelled",
  BOOKING_CONFIRMED = "Booking confirmed",
  BOOKING_REJECTED = "Booking rejected",
  BOOKING_COMPLETED = "Booking completed",
  BOOKING_NO_SHOW = "No-show",
  BOOKING_REOPENED = "Booking reopened",
}

-- A Lua string as a JSON string literal: quotes, backslashes and control characters escaped;
-- other bytes (UTF-8 text) as they are.
local ESCAPES = {['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f', ['\n'] = '\\n',
                 ['\r'] = '\\r', ['\t'] = '\\t'}
local function json_string(value)
  local text = tostring(value == nil and "" or value)
  return '"' .. text:gsub('[%c"\\]', function(c)
    return ESCAPES[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

local function text_or(value, fallback)
  if type(value) == "string" and value ~= "" then return value end
  return fallback
end

function render(template, event, webhook)
  if template ~= nil then return nil end
  local p = event.payload or {}
  local lines = {}
  -- Every piece is a string here (text_or answers one), so `..` joins them.
  lines[#lines + 1] = "*" .. (HEADLINES[event.triggerEvent] or tostring(event.triggerEvent)) .. "*: " ..
                      text_or(p.title, text_or(p.eventTitle, "booking"))
  lines[#lines + 1] = "When: " .. text_or(p.startTime, text_or(p.start, "?")) .. " – " ..
                      text_or(p.endTime, text_or(p["end"], "?"))
  local who = {}
  for _, attendee in ipairs(p.attendees or {}) do
    if type(attendee) == "table" then
      who[#who + 1] = text_or(attendee.name, "?") .. " <" .. text_or(attendee.email, "?") .. ">"
    end
  end
  if #who > 0 then lines[#lines + 1] = "With: " .. table.concat(who, ", ") end
  if type(p.organizer) == "table" then lines[#lines + 1] = "Host: " .. text_or(p.organizer.name, "?") end
  return '{"text":' .. json_string(table.concat(lines, "\n")) .. '}'
end
