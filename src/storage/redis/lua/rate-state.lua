--[[
  rate-state: the count of one sliding-log window (purges starts that left it).

  KEYS[1] sliding log: zset start id -> server ms of the start

  ARGV[1] period in ms (positive integer)

  Returns {count, resetInMs}; resetInMs = ms until the oldest start leaves the window, 0 if empty.

  Errors: RX_ARG when the period is not a positive integer.
  Time: TIME (ms).
]]
local period = tonumber(ARGV[1])
if not period or period <= 0 or period % 1 ~= 0 then
  return redis.error_reply('RX_ARG rate-state: period must be a positive integer')
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - period)
local count = redis.call('ZCARD', KEYS[1])
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local reset = 0
if oldest[2] then reset = tonumber(oldest[2]) + period - now end
return {count, reset}
