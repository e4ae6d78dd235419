--[[
  ordered-heartbeat: liveness of the position in flight.

  KEYS[1] ordered hash (see ordered-ticket)

  ARGV[1] nonce
  ARGV[2] epoch of the ticket

  Returns 1 when the heartbeat was recorded, 0 when this position is not the one in flight
  (another epoch, passed over, or completed).

  Errors: none.
  Time: TIME (ms) stamps heartbeat_at.
  Retry: a second heartbeat only moves heartbeat_at forward.
]]
local h = redis.call('HMGET', KEYS[1], 'epoch', 'in_flight')
if tonumber(h[1] or '0') ~= tonumber(ARGV[2]) or tonumber(h[2] or '0') ~= tonumber(ARGV[1]) then
  return 0
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('HSET', KEYS[1], 'heartbeat_at', now)
return 1
