--[[
  semaphore-state: the live leases of a semaphore (purges expired ones).

  KEYS[1] lease zset: owner -> lease expiry (server ms)
  KEYS[2] meta hash: limit, n:<owner>, i:<owner>

  ARGV none.

  Returns {limit or '', owner1, nesting1, holderJson1, ttlMs1, owner2, ...}

  Errors: none.
  Time: TIME (ms).
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

local out = {redis.call('HGET', KEYS[2], 'limit') or ''}
local leases = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
for i = 1, #leases, 2 do
  local owner = leases[i]
  local info = redis.call('HMGET', KEYS[2], 'n:' .. owner, 'i:' .. owner)
  out[#out + 1] = owner
  out[#out + 1] = tonumber(info[1] or '1')
  out[#out + 1] = info[2] or ''
  out[#out + 1] = tonumber(leases[i + 1]) - now
end
return out
