--[[
  semaphore-acquire: take (or re-enter) a leased slot when fewer than `limit` are live.

  KEYS[1] lease zset: owner -> lease expiry (server ms)
  KEYS[2] meta hash: limit, n:<owner> nesting, i:<owner> holder JSON

  ARGV[1] owner
  ARGV[2] limit (integer >= 0); the limit of this call takes effect at once
  ARGV[3] lease ttl in ms (positive integer)
  ARGV[4] holder info JSON (kept for views)

  Returns
    {1, nesting, holders}                  acquired (or re-entered)
    {0, holders, limit, retryAfterMs}      full; retryAfterMs = time until the earliest lease ends

  Errors: RX_ARG when limit or ttl is not a valid integer.
  Time: TIME (ms); expired leases are purged first, so a dead holder's slot returns.
  Retry: a holder re-entering keeps one slot; the lease is never shortened.
]]
local limit, ttl = tonumber(ARGV[2]), tonumber(ARGV[3])
if not limit or limit < 0 or limit % 1 ~= 0 or not ttl or ttl <= 0 or ttl % 1 ~= 0 then
  return redis.error_reply('RX_ARG semaphore-acquire: limit must be an integer >= 0 and ttl a positive integer')
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

local nesting
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  nesting = redis.call('HINCRBY', KEYS[2], 'n:' .. ARGV[1], 1)
  redis.call('ZADD', KEYS[1], 'GT', now + ttl, ARGV[1])
else
  local holders = redis.call('ZCARD', KEYS[1])
  if holders >= limit then
    local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    local retry = 0
    if first[2] then retry = math.max(tonumber(first[2]) - now, 1) end
    return {0, holders, limit, retry}
  end
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
  redis.call('HSET', KEYS[2], 'n:' .. ARGV[1], 1, 'i:' .. ARGV[1], ARGV[4])
  nesting = 1
end

redis.call('HSET', KEYS[2], 'limit', limit)
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
local until_ = tonumber(last[2]) + 1
redis.call('PEXPIREAT', KEYS[1], until_)
redis.call('PEXPIREAT', KEYS[2], until_)
return {1, nesting, redis.call('ZCARD', KEYS[1])}
