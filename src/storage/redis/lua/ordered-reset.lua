--[[
  ordered-reset: operator action; a new epoch with fresh counters.

  KEYS[1] ordered hash (see ordered-ticket)

  ARGV[1] channel to notify

  Returns {epoch, issued, last_completed, in_flight, first_failed} (0 = none), after the call.

  Errors: none.
  Time: TIME (ms): the new epoch is max(epoch + 1, now), so it also moves past epochs lost
  with the data after a restart without persistence.
  Retry: resetting twice leaves the same observable state (a fresh, drained key).
]]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local current = tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0')
local epoch = math.max(current + 1, now)
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'epoch', string.format('%d', epoch), 'issued', 0, 'last_completed', 0,
  'advanced_at', now)
redis.call('PUBLISH', ARGV[1], 'reset')
return {epoch, 0, 0, 0, 0}
