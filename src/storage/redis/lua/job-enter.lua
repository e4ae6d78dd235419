--[[
  job-enter: a worker takes up a job — take the execution's liveness lock (exactly as
  lock-acquire) and, when taken, read the execution record and the cancel marker, in one step.

  KEYS[1] liveness lock hash {owner, token, nesting, exec, reactor, step}; its TTL is the lease
  KEYS[2] fence string of that lock (TTL: the lease + one day, decision 052)
  KEYS[3] execution record string (JSON)
  KEYS[4] cancel-request period marker

  ARGV[1] owner (this delivery of the job)
  ARGV[2] ttl in ms (positive integer)
  ARGV[3] execution id ('' when absent)
  ARGV[4] reactor ('' when absent)
  ARGV[5] step ('' when absent)

  Returns
    {1, token, nesting, cancel, record}         acquired; cancel 1 when the marker is set;
                                                record is the JSON, or nil when absent
    {0, pttl, owner, exec, reactor, step}       held by another owner (nothing read)

  Errors: RX_ARG when the ttl is not a positive integer.
  Time: TIME (µs) floors the token, as in lock-acquire.
  Retry: as lock-acquire (the same owner re-enters, counted); the reads change nothing.
]]
local ttl = tonumber(ARGV[2])
if not ttl or ttl <= 0 or ttl % 1 ~= 0 then
  return redis.error_reply('RX_ARG job-enter: ttl must be a positive integer')
end

local token
local nesting
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner == ARGV[1] then
  nesting = redis.call('HINCRBY', KEYS[1], 'nesting', 1)
  if redis.call('PTTL', KEYS[1]) < ttl then
    redis.call('PEXPIRE', KEYS[1], ttl)
  end
  token = redis.call('HGET', KEYS[1], 'token')
elseif owner then
  local info = redis.call('HMGET', KEYS[1], 'exec', 'reactor', 'step')
  return {0, redis.call('PTTL', KEYS[1]), owner, info[1] or '', info[2] or '', info[3] or ''}
else
  local time = redis.call('TIME')
  local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
  local last = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
  token = string.format('%d', math.max(last + 1, nowUs))
  nesting = 1
  redis.call('SET', KEYS[2], token, 'PX', ttl + 86400000)
  redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'token', token, 'nesting', 1,
    'exec', ARGV[3], 'reactor', ARGV[4], 'step', ARGV[5])
  redis.call('PEXPIRE', KEYS[1], ttl)
end

return {1, token, nesting, redis.call('EXISTS', KEYS[4]), redis.call('GET', KEYS[3])}
