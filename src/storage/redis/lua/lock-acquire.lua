--[[
  lock-acquire: take the exclusive lock for an owner, or re-enter it.

  KEYS[1] lock hash {owner, token, nesting, exec, reactor, step}; its TTL is the lease
  KEYS[2] fence string: the last fencing token handed out for the key (no TTL)

  ARGV[1] owner (root execution id)
  ARGV[2] ttl in ms (positive integer)
  ARGV[3] execution id ('' when absent)
  ARGV[4] reactor ('' when absent)
  ARGV[5] step ('' when absent)

  Returns
    {1, token, nesting}                         acquired; token is a decimal string
    {0, pttl, owner, exec, reactor, step}       held by another owner

  Errors: RX_ARG when the ttl is not a positive integer.
  Time: TIME (µs) floors the token, so tokens keep increasing after a restart that lost the
  fence key. A re-entrant acquire returns the outer token and never shortens the lease.
]]
local ttl = tonumber(ARGV[2])
if not ttl or ttl <= 0 or ttl % 1 ~= 0 then
  return redis.error_reply('RX_ARG lock-acquire: ttl must be a positive integer')
end

local owner = redis.call('HGET', KEYS[1], 'owner')
if owner == ARGV[1] then
  local nesting = redis.call('HINCRBY', KEYS[1], 'nesting', 1)
  if redis.call('PTTL', KEYS[1]) < ttl then
    redis.call('PEXPIRE', KEYS[1], ttl)
  end
  return {1, redis.call('HGET', KEYS[1], 'token'), nesting}
end

if owner then
  local info = redis.call('HMGET', KEYS[1], 'exec', 'reactor', 'step')
  return {0, redis.call('PTTL', KEYS[1]), owner, info[1] or '', info[2] or '', info[3] or ''}
end

local time = redis.call('TIME')
local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
local last = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
local token = string.format('%d', math.max(last + 1, nowUs))
redis.call('SET', KEYS[2], token)
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'token', token, 'nesting', 1,
  'exec', ARGV[3], 'reactor', ARGV[4], 'step', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ttl)
return {1, token, 1}
