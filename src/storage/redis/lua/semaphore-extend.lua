--[[
  semaphore-extend: owner-checked lease refresh; an expired lease is never resurrected.

  KEYS[1] lease zset: owner -> lease expiry (server ms)
  KEYS[2] meta hash: limit, n:<owner>, i:<owner>

  ARGV[1] owner
  ARGV[2] ttl in ms (positive integer): the new remaining lease

  Returns 1 when extended, 0 when the owner holds no live lease.

  Errors: RX_ARG when the ttl is not a positive integer.
  Time: TIME (ms); expired leases are purged first.
]]
local ttl = tonumber(ARGV[2])
if not ttl or ttl <= 0 or ttl % 1 ~= 0 then
  return redis.error_reply('RX_ARG semaphore-extend: ttl must be a positive integer')
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
for _, member in ipairs(expired) do
  redis.call('HDEL', KEYS[2], 'n:' .. member, 'i:' .. member)
end
if #expired > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
end

if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[1], 'XX', now + ttl, ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
local until_ = tonumber(last[2]) + 1
redis.call('PEXPIREAT', KEYS[1], until_)
redis.call('PEXPIREAT', KEYS[2], until_)
return 1
