--[[
  ordered-complete: a position reached a terminal result; advance past it when it is the head.

  KEYS[1] ordered hash (see ordered-ticket)

  ARGV[1] nonce
  ARGV[2] epoch of the ticket
  ARGV[3] failed ('1' | '0')
  ARGV[4] strict ('1' | '0'): a strict failure records first_failed (the lowest one)
  ARGV[5] channel to notify when the head advances

  Returns {epoch, issued, last_completed, in_flight, first_failed} (0 = none), after the call.

  Errors: RX_ARG on invalid numbers.
  Time: TIME (ms) stamps advanced_at and floors the next epoch on drain.
  Behaviour: a position completed out of turn (e.g. a chain_failed halt) is marked done:<nonce>
  and passed over when the head reaches it. When last_completed reaches issued the key drains:
  counters reset to zero and the epoch moves to max(epoch + 1, now), fencing the old tickets.
  Retry: a stale epoch or a position already passed is a no-op.
]]
local nonce, epoch = tonumber(ARGV[1]), tonumber(ARGV[2])
if not nonce or nonce < 1 or nonce % 1 ~= 0 or not epoch then
  return redis.error_reply('RX_ARG ordered-complete: nonce and epoch must be numbers')
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local function state()
  local s = redis.call('HMGET', KEYS[1], 'epoch', 'issued', 'last_completed', 'in_flight', 'first_failed')
  return {tonumber(s[1] or '0'), tonumber(s[2] or '0'), tonumber(s[3] or '0'), tonumber(s[4] or '0'), tonumber(s[5] or '0')}
end

local h = redis.call('HMGET', KEYS[1], 'epoch', 'issued', 'last_completed', 'in_flight', 'first_failed')
local current, issued = tonumber(h[1] or '0'), tonumber(h[2] or '0')
local last, inFlight = tonumber(h[3] or '0'), tonumber(h[4] or '0')
if current ~= epoch or nonce <= last or nonce > issued then
  return state()
end

local failed = tonumber(h[5] or '0')
if ARGV[3] == '1' and ARGV[4] == '1' and (failed == 0 or nonce < failed) then
  redis.call('HSET', KEYS[1], 'first_failed', nonce)
end

if nonce ~= last + 1 then
  redis.call('HSET', KEYS[1], 'done:' .. nonce, 1)
  return state()
end

last = nonce
redis.call('HDEL', KEYS[1], 'seen:' .. last)
while redis.call('HDEL', KEYS[1], 'done:' .. (last + 1)) == 1 do
  last = last + 1
  redis.call('HDEL', KEYS[1], 'seen:' .. last)
end
redis.call('PUBLISH', ARGV[5], 'advanced')

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
