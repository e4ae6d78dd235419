--[[
  semaphore-release: owner-checked release of one nesting level; frees the slot at zero.

  KEYS[1] lease zset: owner -> lease expiry (server ms)
  KEYS[2] meta hash: limit, n:<owner>, i:<owner>

  ARGV[1] owner
  ARGV[2] channel to notify when a slot is freed

  Returns
    {1, nesting}    released one level; 0 means the slot is free (and notified)
    {0, 0}          the owner held no live lease: nothing changes (capacity never inflates)

  Errors: none.
  Time: TIME (ms); expired leases are purged first.
]]
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
  return {0, 0}
end

local nesting = redis.call('HINCRBY', KEYS[2], 'n:' .. ARGV[1], -1)
if nesting > 0 then
  return {1, nesting}
end

redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], 'n:' .. ARGV[1], 'i:' .. ARGV[1])
if redis.call('ZCARD', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[2])
end
redis.call('PUBLISH', ARGV[2], 'released')
return {1, 0}
