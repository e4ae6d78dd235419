--[[
  ordered-skip: operator action; pass over the head position (in flight or not).

  KEYS[1] ordered hash (see ordered-ticket)

  ARGV[1] channel to notify

  Returns {epoch, issued, last_completed, in_flight, first_failed} (0 = none), after the call.

  Errors: none.
  Time: TIME (ms) stamps advanced_at and floors the next epoch on drain.
  Behaviour: like a completion of the head (positions done out of turn behind it are passed
  too); drains the key when nothing is left. A drained key is left alone.
  Retry: each call passes one more position; operators read the state before skipping.
]]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local function state()
  local s = redis.call('HMGET', KEYS[1], 'epoch', 'issued', 'last_completed', 'in_flight', 'first_failed')
  return {tonumber(s[1] or '0'), tonumber(s[2] or '0'), tonumber(s[3] or '0'), tonumber(s[4] or '0'), tonumber(s[5] or '0')}
end

local h = redis.call('HMGET', KEYS[1], 'epoch', 'issued', 'last_completed', 'in_flight')
local current, issued = tonumber(h[1] or '0'), tonumber(h[2] or '0')
local last, inFlight = tonumber(h[3] or '0'), tonumber(h[4] or '0')
if last >= issued then
  return state()
end

last = last + 1
redis.call('HDEL', KEYS[1], 'seen:' .. last)
while redis.call('HDEL', KEYS[1], 'done:' .. (last + 1)) == 1 do
  last = last + 1
  redis.call('HDEL', KEYS[1], 'seen:' .. last)
end
redis.call('PUBLISH', ARGV[1], 'advanced')

if last >= issued then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'epoch', string.format('%d', math.max(current + 1, now)),
    'issued', 0, 'last_completed', 0, 'advanced_at', now)
  return state()
end

redis.call('HSET', KEYS[1], 'last_completed', last, 'advanced_at', now)
if inFlight > 0 and inFlight <= last then
  redis.call('HDEL', KEYS[1], 'in_flight', 'heartbeat_at', 'holder')
end
return state()
