--[[
  rate-take: exact sliding-log rate limit over one or more windows, all-or-nothing.

  KEYS[1..n] one sliding log per window: zset start id -> server ms of the start

  ARGV[1] start id (unique per start)
  ARGV[2i], ARGV[2i+1] limit (integer >= 0) and period in ms (positive integer) of window i

  Returns
    {1, 1}                                    allowed: every window charged with the id
    {1, 0}                                    allowed: the id was charged already (nothing charged now)
    {0, i, count, retryAfterMs}               window i is full; nothing charged.
                                              retryAfterMs = oldest start in it + period - now

  Errors: RX_ARG when a limit/period is invalid or ARGV does not match KEYS.
  Time: TIME (ms). A start counts in [t, t + period).
  Retry: an id already present in any window was charged (all windows are charged together),
  so taking twice with the same id charges once.
]]
if #ARGV ~= 1 + 2 * #KEYS then
  return redis.error_reply('RX_ARG rate-take: expected a limit and a period per key')
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local limits, periods = {}, {}
for i = 1, #KEYS do
  local limit, period = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
  if not limit or limit < 0 or limit % 1 ~= 0 or not period or period <= 0 or period % 1 ~= 0 then
    return redis.error_reply('RX_ARG rate-take: limit must be an integer >= 0 and period a positive integer')
  end
  limits[i], periods[i] = limit, period
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - period)
end

for i = 1, #KEYS do
  if redis.call('ZSCORE', KEYS[i], ARGV[1]) then
    return {1, 0}
  end
end

for i = 1, #KEYS do
  local count = redis.call('ZCARD', KEYS[i])
  if count >= limits[i] then
    local oldest = redis.call('ZRANGE', KEYS[i], 0, 0, 'WITHSCORES')
    local retry = periods[i]
    if oldest[2] then retry = tonumber(oldest[2]) + periods[i] - now end
    return {0, i, count, math.max(retry, 1)}
  end
end

for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], now, ARGV[1])
  redis.call('PEXPIRE', KEYS[i], periods[i])
end
return {1, 1}
